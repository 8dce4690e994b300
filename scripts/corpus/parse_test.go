package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
)

func TestParseAndroid(t *testing.T) {
	xml := `<?xml version="1.0" encoding="utf-8"?>
<resources xmlns:xliff="urn:oasis:names:tc:xliff:document:1.2">
    <string name="send">Send</string>
    <string name="apos">Don\'t \"quote\" me</string>
    <string name="quoted">"  keeps   spaces "</string>
    <string name="markup">Delete <b>all</b> messages</string>
    <string name="args">Send to %1$s (%2$d)</string>
    <string name="xliff">Pay <xliff:g id="amount" example="$5">%s</xliff:g> now</string>
    <string name="percent">100%% done</string>
    <string name="cdata"><![CDATA[Move to <i>trash</i>]]></string>
    <string name="unicode">Caf\u00e9</string>
    <string name="lines">First\nsecond</string>
    <string name="icu">{count} new</string>
    <string name="no" translatable="false">Pinky</string>
    <plurals name="p"><item quantity="one">one</item></plurals>
    <string name="ja">送信</string>
</resources>`
	got, err := parseAndroid([]byte(xml))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"send": "Send", "apos": `Don't "quote" me`, "quoted": "keeps spaces", "markup": "Delete all messages",
		"args": "Send to … (…)", "xliff": "Pay … now", "percent": "100% done", "cdata": "Move to <i>trash</i>",
		"unicode": "Café", "lines": "First second", "icu": "… new", "ja": "送信",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseStrings(t *testing.T) {
	src := `/* A comment */
"send" = "Send";
// another
"escape" = "Say \"hi\"\nnow";
"uni" = "\U00e9t\U00e9";
bare = "Bare key";
"args" = "Delete %@ and %ld more";
`
	want := map[string]string{"send": "Send", "escape": `Say "hi" now`, "uni": "été", "bare": "Bare key", "args": "Delete … and … more"}
	got, err := parseStrings([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UTF-8 (-want +got):\n%s", diff)
	}
	// The same in UTF-16 with a byte-order mark, as older projects keep it.
	u := utf16.Encode([]rune(src))
	b := []byte{0xff, 0xfe}
	for _, c := range u {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	got, err = parseStrings(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UTF-16 (-want +got):\n%s", diff)
	}
	if _, err := parseStrings([]byte(`"a" = "b"`)); err == nil {
		t.Error("a missing ; was accepted")
	}
}

func TestCheck(t *testing.T) {
	good := Labels{App: "a", Repo: "o/n", Commit: "0123456789abcdef0123456789abcdef01234567", Licence: "MIT", Category: "mail",
		Platform: "android", Res: []string{"res"}, Strings: []Label{{Name: "send", Role: "button", Kind: "send_message"}}}
	if errs := good.check(); len(errs) != 0 {
		t.Errorf("good labels: %v", errs)
	}
	bad := good
	bad.Strings = []Label{{Name: "x", Role: "knob", Kind: "sends"}, {Name: "x", Role: "text", Kind: "delete", Lookalike: true}}
	bad.Category = "cars"
	if errs := bad.check(); len(errs) != 5 {
		t.Errorf("bad labels: got %d errors %v; want 5 (category, role, kind, repeated name, lookalike on a commit)", len(errs), errs)
	}
}

// TestCommittedCorpus: the committed labels are well formed, and every
// app's rows were built from its labels as they are (a label edited
// without `make corpus` fails here).
func TestCommittedCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "gateway", "commit", "corpus")
	all, err := loadLabels(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		for _, e := range l.check() {
			t.Errorf("labels/%s.yaml: %s", l.App, e)
		}
		label := map[string]Label{}
		for _, s := range l.Strings {
			label[s.Name] = s
		}
		b, err := os.ReadFile(filepath.Join(dir, "rows", l.App+".jsonl"))
		if err != nil {
			t.Errorf("%s: %v (run make corpus)", l.App, err)
			continue
		}
		seen := map[string]bool{}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r Row
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("rows/%s.jsonl:%d: %v", l.App, i+1, err)
			}
			s, ok := label[r.Resource]
			if !ok || r.App != l.App || r.Kind != s.Kind || r.Role != s.Role || r.Lookalike != s.Lookalike || r.Commit != l.Commit || r.Category != l.Category || r.Text == "" {
				t.Errorf("rows/%s.jsonl:%d: %+v does not match its label %+v (run make corpus)", l.App, i+1, r, s)
			}
			seen[r.Resource] = true
		}
		for name := range label {
			if !seen[name] {
				t.Errorf("%s: the label of %s has no rows (run make corpus)", l.App, name)
			}
		}
	}
}
