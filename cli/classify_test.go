package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// classified is one line of `pinky policy classify`'s output.
type classified struct {
	Kind     *string `json:"kind"`
	Ask      bool    `json:"ask"`
	Decision string  `json:"decision"`
	Rule     string  `json:"rule"`
	Evidence string  `json:"evidence"`
	Line     int     `json:"line"`
	Error    string  `json:"error"`
}

// classify runs `pinky policy classify ARGS` on the input lines and
// returns its output lines and exit code.
func classify(t *testing.T, e *env, input []string, args ...string) ([]classified, string, int) {
	t.Helper()
	out, errOut, code := e.RunIn([]byte(strings.Join(input, "\n")+"\n"), append([]string{"policy", "classify"}, args...)...)
	var got []classified
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var c classified
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("output line %q: %v\n%s", l, err, out)
		}
		got = append(got, c)
	}
	return got, errOut, code
}

func kind(k string) *string { return &k }

// TestPolicyClassify runs the real binary on a batch of strings: each line
// gets its answer in order, the policy decides, and a bad line gets an
// error with its number while the run goes on.
func TestPolicyClassify(t *testing.T) {
	e := newEnv(t)
	input := []string{
		`{"text":"Send"}`,
		`{"text":"Payment methods","role":"menu_item"}`,
		`not json`,
		`{"text":"Send","app":"payments"}`,
		`{"text":"OK","dialog":true,"screen":"Delete 3 photos?"}`,
		`{"text":"OK","screen":["Delete 3 photos?"]}`,
		`{"role":"button"}`,
		`{"text":"Send","role":"knob"}`,
		`{"text":"Delete","app":"com.x8bit.bitwarden"}`,
		`{"text":"Show week numbers","role":"toggle","app":"calendar"}`,
		`{"text":"Delete","role":"text"}`,
		`{"text":"Send","colour":"red"}`,
		`{"text":"Get","app":"stores"}`,
	}
	got, errOut, code := classify(t, e, input)
	if code != 1 || !strings.Contains(errOut, "lines that could not be read: 4") {
		t.Errorf("exit %d, stderr %q; want 1 and the count of bad lines", code, errOut)
	}
	ask := "ask before committing"
	want := []classified{
		{Kind: kind("send_message"), Ask: true, Decision: "ask", Rule: ask},
		{Decision: "allow", Rule: "default"},
		{Line: 3},
		{Kind: kind("transfer"), Ask: true, Decision: "ask", Rule: ask},
		{Kind: kind("delete"), Ask: true, Decision: "ask", Rule: ask},
		{Decision: "allow", Rule: "default"}, // "OK" outside a dialog confirms nothing
		{Line: 7},
		{Line: 8},
		{Kind: kind("delete"), Decision: "deny", Rule: "blocked_categories"},
		{Kind: kind("change_setting"), Ask: true, Decision: "ask", Rule: ask},
		{Decision: "allow", Rule: "default"}, // a title cannot be tapped
		{Line: 12},
		{Kind: kind("install_app"), Ask: true, Decision: "ask", Rule: ask},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d output lines; want %d:\n%+v", len(got), len(want), got)
	}
	for i := range got {
		// Evidence and error sentences are checked below, not compared.
		g := got[i]
		g.Evidence, g.Error = "", ""
		if diff := cmp.Diff(want[i], g); diff != "" {
			t.Errorf("line %d %s (-want +got):\n%s", i+1, input[i], diff)
		}
		if (want[i].Line != 0) != (got[i].Error != "") {
			t.Errorf("line %d %s: error %q; want one exactly for a bad line", i+1, input[i], got[i].Error)
		}
		if want[i].Kind != nil && got[i].Evidence == "" {
			t.Errorf("line %d %s: no evidence for a commit", i+1, input[i])
		}
	}
	for i, want := range map[int]string{2: "not a JSON object", 6: `"text" is required`, 7: `role "knob"`, 11: `unknown field "colour"`} {
		if !strings.Contains(got[i].Error, want) {
			t.Errorf("line %d: error %q; want it to say %q", i+1, got[i].Error, want)
		}
	}
	if ev := got[9].Evidence; !strings.Contains(ev, "the model says change_setting") {
		t.Errorf("a string the tables do not know: evidence %q; want the model's", ev)
	}
	if ev := got[12].Evidence; !strings.Contains(ev, "in an app store (category stores)") {
		t.Errorf("a category instead of an app: evidence %q; want it named", ev)
	}
}

// TestPolicyClassifyWithAPolicyFile decides with the policy given, and
// refuses a broken one before reading any input.
func TestPolicyClassifyWithAPolicyFile(t *testing.T) {
	e := newEnv(t)
	e.WriteFile("strict.yaml", "rules:\n  - {name: default, decision: allow}\n  - {name: no deleting, commit: delete, decision: deny}\n")
	got, _, code := classify(t, e, []string{`{"text":"Delete"}`, `{"text":"Send"}`}, "--policy", e.Home+"/strict.yaml")
	want := []classified{
		{Kind: kind("delete"), Decision: "deny", Rule: "no deleting"},
		{Kind: kind("send_message"), Decision: "allow", Rule: "default"},
	}
	for i := range got {
		got[i].Evidence = ""
	}
	if diff := cmp.Diff(want, got); code != 0 || diff != "" {
		t.Errorf("exit %d (-want +got):\n%s", code, diff)
	}

	e.WriteFile("broken.yaml", "rules:\n  - {decision: maybe}\n")
	out, errOut, code := e.RunIn([]byte(`{"text":"Delete"}`+"\n"), "policy", "classify", "--policy", e.Home+"/broken.yaml")
	if code != 2 || out != "" || !strings.Contains(errOut, "broken.yaml") {
		t.Errorf("a broken policy: exit %d, stdout %q, stderr %q; want 2, nothing, and the file named", code, out, errOut)
	}
}
