package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/settings"
)

// fill sets every exported field of the struct v points to, recursively,
// to a value that is not zero and differs from field to field, so that a
// field a converter forgets shows as a difference.
func fill(t *testing.T, v reflect.Value, seed *int) {
	t.Helper()
	*seed++
	n := *seed
	switch v.Kind() {
	case reflect.String:
		v.SetString("s" + string(rune('a'+n%26)) + time.Duration(n).String())
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(n))
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		v.SetUint(uint64(n))
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), seed)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(t, k, seed)
		fill(t, e, seed)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2025, 1, 2, 3, 4, n, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), seed)
			}
		}
	default:
		t.Fatalf("fill: %s has a field of kind %s that the test does not know how to fill", v.Type(), v.Kind())
	}
}

// filled is a core value with every field set.
func filled[T any](t *testing.T) T {
	var v T
	seed := 0
	fill(t, reflect.ValueOf(&v).Elem(), &seed)
	return v
}

// asJSON is v's JSON as a generic value, so that field order does not matter.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWireTypes checks that each converter copies every field the core
// sends: the wire value's JSON is the core value's, for a value with every
// field set. A field added to the core but not to the wire type (or not
// copied) fails here.
func TestWireTypes(t *testing.T) {
	for _, tt := range []struct {
		name       string
		core, wire func(t *testing.T) (any, any)
	}{
		{name: "approval card", core: func(t *testing.T) (any, any) {
			c := filled[approval.Card](t)
			return c, apiCard(c)
		}},
		{name: "lease", core: func(t *testing.T) (any, any) {
			l := filled[agent.LeaseStatus](t)
			return l, apiLease(l)
		}},
		{name: "event", core: func(t *testing.T) (any, any) {
			e := filled[events.Event](t)
			return e, apiEvent(e)
		}},
		{name: "event page", core: func(t *testing.T) (any, any) {
			p := filled[events.Page](t)
			return p, apiEventPage(p)
		}},
		{name: "settings", core: func(t *testing.T) (any, any) {
			s := filled[settings.Settings](t)
			return s, apiSettings(s)
		}},
		{name: "cards", core: func(t *testing.T) (any, any) {
			cs := filled[[]approval.Card](t)
			return cs, apiCards(cs)
		}},
		{name: "leases", core: func(t *testing.T) (any, any) {
			ls := filled[[]agent.LeaseStatus](t)
			return ls, apiLeases(ls)
		}},
		{name: "no cards", core: func(*testing.T) (any, any) { return []approval.Card(nil), apiCards(nil) }},
		{name: "no leases", core: func(*testing.T) (any, any) { return []agent.LeaseStatus{}, apiLeases([]agent.LeaseStatus{}) }},
		{name: "empty page", core: func(*testing.T) (any, any) { return events.Page{}, apiEventPage(events.Page{}) }},
		{name: "zero card", core: func(*testing.T) (any, any) { return approval.Card{}, apiCard(approval.Card{}) }},
		{name: "zero lease", core: func(*testing.T) (any, any) { return agent.LeaseStatus{}, apiLease(agent.LeaseStatus{}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			core, wire := tt.core(t)
			if d := cmp.Diff(asJSON(t, core), asJSON(t, wire)); d != "" {
				t.Errorf("wire JSON differs from the core's (-core +wire):\n%s", d)
			}
		})
	}
}

// TestSetSettings checks that a change names only what it changes.
func TestSetSettings(t *testing.T) {
	yes, no, days := true, false, 7
	for _, tt := range []struct {
		name   string
		change api.SettingsChange
		want   api.Settings
	}{
		{"nothing", api.SettingsChange{}, api.Settings{Recording: true, RetentionDays: 30}},
		{"retention only", api.SettingsChange{RetentionDays: &days}, api.Settings{Recording: true, RetentionDays: 7}},
		{"every field", api.SettingsChange{Recording: &no, RetentionDays: &days, ReadOnly: &yes}, api.Settings{RetentionDays: 7, ReadOnly: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, err := settings.Open(filepath.Join(t.TempDir(), "settings.json"))
			if err != nil {
				t.Fatal(err)
			}
			g := &Gateway{log: slog.New(slog.NewTextHandler(io.Discard, nil)), settings: st}
			got, err := g.setSettings(context.Background(), tt.change)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || apiSettings(st.Get()) != tt.want {
				t.Errorf("got %+v, kept %+v; want %+v", got, st.Get(), tt.want)
			}
		})
	}
	st, err := settings.Open(filepath.Join(t.TempDir(), "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := &Gateway{log: slog.New(slog.NewTextHandler(io.Discard, nil)), settings: st}
	bad := -1
	if _, err := g.setSettings(context.Background(), api.SettingsChange{RetentionDays: &bad}); err == nil || st.Get() != settings.Defaults() {
		t.Errorf("retention -1: got %v, kept %+v; want an error and the defaults kept", err, st.Get())
	}
}

// TestRegisterAPI checks that the table registers every method of the
// local API.
func TestRegisterAPI(t *testing.T) {
	s := api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := &Gateway{api: s}
	g.registerAPI()
	want := []string{
		api.MethodApprovals, api.MethodDecide, api.MethodConsoleLink, api.MethodStop, api.MethodDriverAttach,
		api.MethodDrivers, api.MethodDriverRestart, api.MethodHandBack, api.MethodInput, api.MethodDevices,
		api.MethodScreen, api.MethodTakeOver, api.MethodUnlock, api.MethodEvents, api.MethodLeases,
		api.MethodStopLease, api.MethodSettings, api.MethodSetSettings, api.MethodStatus, api.MethodExport,
		api.MethodTasks, api.MethodTask, api.MethodDriverChecks, api.MethodHosts, api.MethodHostAdd, api.MethodHostRemove,
	}
	slices.Sort(want)
	if d := cmp.Diff(want, s.Methods()); d != "" {
		t.Errorf("registered methods (-want +got):\n%s", d)
	}
}

// TestAPIParamsAreStrict checks every method that takes params: a field
// the method does not know is refused as invalid params before the handler
// runs (the Gateway here has nothing a handler could use).
func TestAPIParamsAreStrict(t *testing.T) {
	s := api.NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	g := &Gateway{api: s}
	g.registerAPI()
	for _, method := range []string{
		api.MethodDriverRestart, api.MethodDriverAttach, api.MethodScreen, api.MethodTasks, api.MethodTask,
		api.MethodHandBack, api.MethodUnlock, api.MethodTakeOver, api.MethodStopLease, api.MethodInput,
		api.MethodApprovals, api.MethodDecide, api.MethodEvents, api.MethodSetSettings, api.MethodExport,
	} {
		t.Run(method, func(t *testing.T) {
			for _, params := range []string{`{"bogus":1}`, `[1]`, `{"device":`} {
				_, err := s.Call(context.Background(), method, json.RawMessage(params))
				var e *api.Error
				if !errors.As(err, &e) || e.Code != api.CodeInvalidParams || !strings.HasPrefix(e.Message, "bad params: ") {
					t.Errorf("params %s: got %v; want invalid params", params, err)
				}
			}
		})
	}
}
