package admin

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(t *testing.T, home string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, home, &out, &errb)
	return out.String(), errb.String(), code
}

func TestAddListRemove(t *testing.T) {
	home := t.TempDir()
	// Flags after the name, as the person types them.
	out, errs, code := run(t, home, "add", "Ana's iPhone", "--wda", "http://127.0.0.1:1", "--video-listen", "127.0.0.1:7420", "--app", "com.example.shop=Shop")
	if code != 0 || !strings.Contains(out, "added Ana's iPhone (") || !strings.Contains(out, "pairing secret: ") {
		t.Fatalf("add: exit %d: %q %q", code, out, errs)
	}
	if !strings.Contains(errs, "WDA not answering") {
		t.Errorf("add with no WDA: stderr %q; want it said", errs)
	}
	if st, err := os.Stat(filepath.Join(home, "ios.yaml")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("ios.yaml: %v, %v; want mode 0600 (it holds the secret)", st, err)
	}
	if _, errs, code := run(t, home, "add", "Ana's iPhone", "--wda", "http://127.0.0.1:1"); code != 1 || !strings.Contains(errs, "already") {
		t.Errorf("add twice: exit %d %q; want a failure that says it is there already", code, errs)
	}
	out, _, code = run(t, home, "list", "--json")
	var rows []Row
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].Name != "Ana's iPhone" || rows[0].Video != "listens on 127.0.0.1:7420" {
		t.Fatalf("list --json: exit %d %q", code, out)
	}
	if out, _, code := run(t, home, "remove", rows[0].ID); code != 0 || !strings.Contains(out, "removed Ana's iPhone") {
		t.Errorf("remove: exit %d %q", code, out)
	}
	if out, _, _ := run(t, home, "list"); !strings.Contains(out, "no iPhones") {
		t.Errorf("list after remove: %q", out)
	}
}

func TestUsage(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"help"}, 0, "pinky ios add NAME --wda URL"},
		{[]string{"add", "x"}, 2, "--wda URL is required"},
		{[]string{"add"}, 2, "want one NAME"},
		{[]string{"add", "x", "--bogus"}, 2, "flag provided but not defined"},
		{[]string{"remove"}, 2, "want one ID or NAME"},
		{[]string{"remove", "nope"}, 1, `no iPhone "nope"`},
		{[]string{"frobnicate"}, 2, `unknown command "frobnicate"`},
	} {
		out, errs, code := run(t, home, tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d %q%q; want exit %d saying %q", tc.args, code, out, errs, tc.code, tc.want)
		}
	}
	if _, errs, code := run(t, "", "list"); code != 1 || !strings.Contains(errs, "PINKY_HOME") {
		t.Errorf("no data folder: exit %d %q", code, errs)
	}
}
