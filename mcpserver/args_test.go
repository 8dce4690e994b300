package mcpserver

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type sampleColor string

func (sampleColor) enum() []string { return []string{"red", "blue"} }

type sampleInner struct {
	N *int `json:"n" desc:"The {what}'s number." check:"range=-1..{maxWaitMillis}"`
}

type sampleArgs struct {
	onDevice
	Name  string      `json:"name" desc:"A name." check:"required,len=2..8"`
	Color sampleColor `json:"color" desc:"A color." default:"red"`
	Count int64       `json:"count" check:"range=0..{MaxUploadLinkBytes}" default:"{defaultWaitMillis}"`
	On    bool        `json:"on" default:"true"`
	Tags  []string    `json:"tags" check:"len=1..16,items=3"`
	Code  string      `json:"code" pattern:"^[a-z]+$"`
	Inner sampleInner `json:"inner" what:"pebble" check:"required"`
	Quiet string      `json:"quiet" check:"len=1..9" schema:"unlisted"`
	Spot  sampleInner `json:"spot" schema:"terse"`
	sampleInner
	Skipped string `json:"-"`
	hidden  string
}

// The tags of an argument struct give the parameters field by field, in
// order, with embedded structs in place.
func TestParamsOf(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	want := []param{
		{name: "device", typ: "string", desc: "The id from phone_list.", required: true,
			minLen: 1, maxLen: 128, pattern: regexp.MustCompile(devicePattern), unlisted: true},
		{name: "name", typ: "string", desc: "A name.", required: true, minLen: 2, maxLen: 8},
		{name: "color", typ: "string", desc: "A color.", enum: []string{"red", "blue"}, def: "red"},
		{name: "count", typ: "integer", min: i64(0), max: i64(MaxUploadLinkBytes), def: 10000},
		{name: "on", typ: "boolean", def: true},
		{name: "tags", typ: "array", items: &param{typ: "string", minLen: 1, maxLen: 16}, maxItems: 3},
		{name: "code", typ: "string", pattern: regexp.MustCompile("^[a-z]+$")},
		{name: "inner", typ: "object", required: true, props: []param{
			{name: "n", typ: "integer", desc: "The pebble's number.", min: i64(-1), max: i64(maxWaitMillis)},
		}},
		{name: "quiet", typ: "string", minLen: 1, maxLen: 9, unlisted: true},
		{name: "spot", typ: "object", terse: true, props: []param{
			{name: "n", typ: "integer", desc: "The element's number.", min: i64(-1), max: i64(maxWaitMillis)},
		}},
		{name: "n", typ: "integer", desc: "The element's number.", min: i64(-1), max: i64(maxWaitMillis)},
	}
	got := paramsOf[sampleArgs]()
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(param{}), cmp.Comparer(func(a, b *regexp.Regexp) bool {
		return (a == nil) == (b == nil) && (a == nil || a.String() == b.String())
	})); diff != "" {
		t.Errorf("paramsOf (-want +got):\n%s", diff)
	}
}

// A tag the parameters cannot come from stops the inventory from being
// built, with the field named.
func TestParamsOfBadTags(t *testing.T) {
	tests := []struct {
		name string
		of   func() []param
		want string
	}{
		{"no json name", paramsOf[struct {
			A string `desc:"x"`
		}], "has no json name"},
		{"unknown check", paramsOf[struct {
			A string `json:"a" check:"maxlen=3"`
		}], `unknown check "maxlen"`},
		{"bad bounds", paramsOf[struct {
			A int `json:"a" check:"range=3"`
		}], "want MIN..MAX"},
		{"unknown value", paramsOf[struct {
			A int `json:"a" check:"range=0..{nope}"`
		}], "no tag value {nope}"},
		{"bad default", paramsOf[struct {
			A bool `json:"a" default:"maybe"`
		}], `default "maybe"`},
		{"unknown schema option", paramsOf[struct {
			A string `json:"a" schema:"hidden"`
		}], `unknown schema option "hidden"`},
		{"terse on a string", paramsOf[struct {
			A string `json:"a" schema:"terse"`
		}], "terse is for object fields"},
		{"no JSON type", paramsOf[struct {
			A float64 `json:"a"`
		}], "no JSON type for float64"},
		{"not a struct", paramsOf[string], "are a struct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tt.want) {
					t.Errorf("got panic %v; want one containing %q", r, tt.want)
				}
			}()
			tt.of()
		})
	}
}

// The arguments a call brings are decoded into the same struct: pointers
// tell an absent argument from a zero one.
func TestBind(t *testing.T) {
	got, err := bind[waitForArgs](map[string]any{"device": "d1", "ref": float64(9), "gone": true})
	if err != nil {
		t.Fatal(err)
	}
	if got.Device != "d1" || got.Ref == nil || *got.Ref != 9 || !got.Gone || got.Text != nil || got.TimeoutMS != nil {
		t.Errorf("got %+v; want device d1, ref 9, gone, no text, no timeout", got)
	}
}
