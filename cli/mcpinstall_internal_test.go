package cli

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var testOpts = installOpts{command: "/opt/pinky/bin/pinky", url: defaultMCPURL, tokenEnv: defaultTokenEnv}

// decodeJSON is data as a generic JSON value, failing the test when it is
// not JSON.
func decodeJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	return v
}

func TestMCPInstallJSON(t *testing.T) {
	entry := json.RawMessage(`{"type":"stdio","command":"/opt/pinky/bin/pinky","args":["mcp"]}`)
	for _, key := range []string{"mcpServers", "servers"} {
		cases := []struct {
			name, old string
			// want is the document expected after the install; "" when
			// the file is refused.
			want    string
			changed bool
		}{
			{"no file", "", `{"K":{"pinky":E}}`, true},
			{"blank file", "  \n", `{"K":{"pinky":E}}`, true},
			{"empty object", `{}`, `{"K":{"pinky":E}}`, true},
			{"others kept", `{"theme":"dark","K":{"github":{"command":"gh","args":["mcp"],"env":{"T":"x"}}},"inputs":[]}`,
				`{"theme":"dark","K":{"github":{"command":"gh","args":["mcp"],"env":{"T":"x"}},"pinky":E},"inputs":[]}`, true},
			{"old pinky replaced", `{"K":{"pinky":{"command":"pinky","args":["mcp"]},"b":{"url":"u"}}}`,
				`{"K":{"pinky":E,"b":{"url":"u"}}}`, true},
			{"same entry", `{"K": {"pinky": {"args": ["mcp"], "command": "/opt/pinky/bin/pinky", "type": "stdio"}}}`,
				`{"K":{"pinky":E}}`, false},
			{"comment", "{\n  // mine\n  \"K\": {}\n}", "", false},
			{"trailing comma", `{"K": {"a": {"command": "a"},}}`, "", false},
			{"not an object", `["K"]`, "", false},
			{"servers not an object", `{"K": []}`, "", false},
			{"two values", `{} {}`, "", false},
		}
		for _, c := range cases {
			t.Run(key+"/"+c.name, func(t *testing.T) {
				old := strings.ReplaceAll(c.old, `"K"`, `"`+key+`"`)
				out, changed, err := installJSON([]byte(old), key, entry)
				if c.want == "" {
					if !errors.Is(err, errMalformed) {
						t.Fatalf("install into %s: err %v; want it refused as malformed", old, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want := strings.ReplaceAll(strings.ReplaceAll(c.want, `"K"`, `"`+key+`"`), "E", string(entry))
				if got := decodeJSON(t, out); !reflect.DeepEqual(got, decodeJSON(t, []byte(want))) || changed != c.changed {
					t.Errorf("install into %s:\ngot  %s (changed %v)\nwant %s (changed %v)", old, out, changed, want, c.changed)
				}
				// The order of the keys is kept.
				if c.name == "others kept" && !(strings.Index(string(out), "theme") < strings.Index(string(out), key) &&
					strings.Index(string(out), key) < strings.Index(string(out), "inputs") &&
					strings.Index(string(out), "github") < strings.Index(string(out), "pinky")) {
					t.Errorf("keys reordered:\n%s", out)
				}
				// A second install changes nothing.
				if again, changed, err := installJSON(out, key, entry); err != nil || changed || string(again) != string(out) {
					t.Errorf("second install: changed %v, %v", changed, err)
				}
				// Uninstall takes pinky out and leaves the rest.
				back, changed, err := uninstallJSON(out, key)
				if err != nil || !changed {
					t.Fatalf("uninstall: changed %v, %v", changed, err)
				}
				doc := decodeJSON(t, back)
				servers, _ := doc[key].(map[string]any)
				if _, ok := servers["pinky"]; ok || servers == nil {
					t.Errorf("after uninstall: %s", back)
				}
				wantDoc := decodeJSON(t, []byte(want))
				delete(wantDoc[key].(map[string]any), "pinky")
				if !reflect.DeepEqual(doc, wantDoc) {
					t.Errorf("uninstall changed other entries:\ngot  %s\nwant %v", back, wantDoc)
				}
				if _, changed, err := uninstallJSON(back, key); changed || err != nil {
					t.Errorf("second uninstall: changed %v, %v", changed, err)
				}
			})
		}
	}
}

func TestMCPInstallTOML(t *testing.T) {
	entry := codexEntry(testOpts)
	const other = `# My servers.
model = "o3"

[mcp_servers.docs]
command = "docs-mcp"   # the docs
args = ["--stdio"]

[mcp_servers.docs.env]
DOCS_KEY = "k"
`
	cases := []struct {
		name, old string
		// kept are lines of old that must stay, comments included.
		kept []string
		lost bool
	}{
		{"no file", "", nil, false},
		{"others and comments kept", other, []string{"# My servers.", `command = "docs-mcp"   # the docs`, "DOCS_KEY"}, false},
		{"old pinky in the middle replaced", `model = "o3"
[mcp_servers.pinky]
command = "pinky"
args = ["mcp", "--old"]

[mcp_servers.pinky.env]
PINKY_HOME = "/old"

# The next one is mine.
[mcp_servers.other]
url = "https://example.org/mcp"
`, []string{"# The next one is mine.", "[mcp_servers.other]"}, false},
		{"quoted pinky table", "[mcp_servers.\"pinky\"]\ncommand = \"x\"\n[profiles.a]\nmodel = \"m\"\n", []string{"[profiles.a]"}, false},
		{"inline pinky rewritten whole", "# gone\n[mcp_servers]\npinky = { command = \"x\" }\nother = { command = \"y\" }\n", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			oldDoc, err := decodeTOML(c.old)
			if err != nil {
				t.Fatal(err)
			}
			out, changed, lost, err := editTOML([]byte(c.old), entry)
			if err != nil || !changed || lost != c.lost {
				t.Fatalf("install: changed %v, lost %v, %v; want changed, lost %v", changed, lost, err, c.lost)
			}
			got, err := decodeTOML(string(out))
			if err != nil {
				t.Fatalf("result is not TOML: %v\n%s", err, out)
			}
			entryDoc, _ := decodeTOML(entry)
			if want := withPinky(oldDoc, entryDoc["mcp_servers"].(map[string]any)["pinky"]); !reflect.DeepEqual(got, want) {
				t.Errorf("install:\ngot  %v\nwant %v\n%s", got, want, out)
			}
			for _, line := range c.kept {
				if !strings.Contains(string(out), line) {
					t.Errorf("%q lost:\n%s", line, out)
				}
			}
			if again, changed, _, err := editTOML(out, entry); err != nil || changed || string(again) != string(out) {
				t.Errorf("second install: changed %v, %v", changed, err)
			}
			back, changed, _, err := editTOML(out, "")
			if err != nil || !changed {
				t.Fatalf("uninstall: changed %v, %v", changed, err)
			}
			gotBack, err := decodeTOML(string(back))
			if err != nil {
				t.Fatalf("after uninstall, not TOML: %v\n%s", err, back)
			}
			if want := withPinky(oldDoc, nil); !reflect.DeepEqual(withoutEmptyServers(gotBack), want) {
				t.Errorf("uninstall:\ngot  %v\nwant %v\n%s", gotBack, want, back)
			}
			if !c.lost {
				for _, line := range c.kept {
					if !strings.Contains(string(back), line) {
						t.Errorf("uninstall lost %q:\n%s", line, back)
					}
				}
			}
			if _, changed, _, err := editTOML(back, ""); changed || err != nil {
				t.Errorf("second uninstall: changed %v, %v", changed, err)
			}
		})
	}
	t.Run("malformed", func(t *testing.T) {
		for _, bad := range []string{"[mcp_servers.pinky\ncommand = 1", "a = 1\na = 2", "x = ", "mcp_servers = 5"} {
			if _, _, _, err := editTOML([]byte(bad), entry); !errors.Is(err, errMalformed) {
				t.Errorf("%q: err %v; want it refused as malformed", bad, err)
			}
		}
	})
	t.Run("http entry names the variable, not the token", func(t *testing.T) {
		o := testOpts
		o.http, o.url = true, "https://phones.example.org/mcp"
		doc, err := decodeTOML(codexEntry(o))
		if err != nil {
			t.Fatal(err)
		}
		p := doc["mcp_servers"].(map[string]any)["pinky"].(map[string]any)
		if p["url"] != o.url || p["bearer_token_env_var"] != "PINKY_TOKEN" || p["command"] != nil || p["env"] != nil {
			t.Errorf("http entry: %v", p)
		}
	})
}

func TestMCPInstallEditConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	edit := func(data []byte) ([]byte, bool, bool, error) {
		out, changed, err := installJSON(data, "mcpServers", json.RawMessage(`{"command":"p","args":["mcp"]}`))
		return out, changed, false, err
	}

	// A new file, in a new folder.
	newPath := filepath.Join(dir, "sub", "new.json")
	res, err := editConfig(newPath, true, edit)
	if err != nil || !res.changed || res.backup != "" {
		t.Fatalf("new file: %+v, %v", res, err)
	}
	if st, err := os.Stat(filepath.Dir(newPath)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("new user folder: %v, %v; want 0700", st, err)
	}

	// An existing file: the old content is kept in a backup, the mode stays.
	old := `{"mcpServers":{"a":{"command":"a"}}}`
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = editConfig(path, false, edit)
	if err != nil || !res.changed || res.backup == "" {
		t.Fatalf("existing file: %+v, %v", res, err)
	}
	if b, err := os.ReadFile(res.backup); err != nil || string(b) != old {
		t.Errorf("backup %s: %q, %v; want the old content", res.backup, b, err)
	}
	if !strings.HasPrefix(filepath.Base(res.backup), "mcp.json.bak-") {
		t.Errorf("backup name %s", res.backup)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v; want the old 0644", st.Mode().Perm())
	}
	first := res.backup

	// Unchanged: no write, no backup.
	res, err = editConfig(path, false, edit)
	if err != nil || res.changed || res.backup != "" {
		t.Errorf("second install: %+v, %v", res, err)
	}

	// Two backups in the same second get different names.
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = editConfig(path, false, edit)
	if err != nil || res.backup == "" || res.backup == first {
		t.Errorf("another backup: %+v, %v (the first was %s)", res, err, first)
	}

	// A malformed file is refused and left as it is, without a backup.
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"mcpServers": {,}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := editConfig(bad, false, edit); err == nil || !strings.Contains(err.Error(), "not changed") || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("malformed file: %v; want a refusal that says where", err)
	}
	if b, _ := os.ReadFile(bad); string(b) != `{"mcpServers": {,}` {
		t.Errorf("malformed file changed: %q", b)
	}
	if backups, _ := filepath.Glob(bad + ".bak-*"); len(backups) != 0 {
		t.Errorf("backups of a refused file: %v", backups)
	}

	// A symbolic link stays a link; its target changes.
	target := filepath.Join(dir, "dotfiles.json")
	if err := os.WriteFile(target, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := editConfig(link, false, edit); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v, %v", st, err)
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), `"p"`) {
		t.Errorf("the link's target was not changed: %s", b)
	}
}

// TestSnippet parses each file of deploy/mcp as its host's format and
// checks that it holds what pinky mcp install writes (with pinky on the
// PATH), so the snippets and the installer agree.
func TestSnippet(t *testing.T) {
	stdio, web := testOpts, testOpts
	stdio.command = "pinky"
	web.http = true
	files := []struct {
		file, host string
		o          installOpts
	}{
		{"claude-code.mcp.json", "claude-code", stdio},
		{"claude-code.http.mcp.json", "claude-code", web},
		{"codex.config.toml", "codex", stdio},
		{"codex.http.config.toml", "codex", web},
		{"cursor.mcp.json", "cursor", stdio},
		{"cursor.http.mcp.json", "cursor", web},
		{"vscode.mcp.json", "vscode", stdio},
		{"vscode.http.mcp.json", "vscode", web},
		{"claude-desktop.json", "claude-desktop", stdio},
	}
	seen := map[string]bool{"README.md": true}
	for _, f := range files {
		seen[f.file] = true
		t.Run(f.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "deploy", "mcp", f.file))
			if err != nil {
				t.Fatal(err)
			}
			h, err := findHost(f.host)
			if err != nil {
				t.Fatal(err)
			}
			if h.isTOML() {
				got, err := decodeTOML(string(data))
				if err != nil {
					t.Fatalf("not TOML: %v", err)
				}
				want, _ := decodeTOML(h.entry(f.o))
				if !reflect.DeepEqual(got, want) {
					t.Errorf("got %v\nwant %v", got, want)
				}
				return
			}
			got := decodeJSON(t, data)
			if len(got) != 1 || got[h.key] == nil {
				t.Fatalf("top-level keys %v; want %q alone", reflect.ValueOf(got).MapKeys(), h.key)
			}
			var want any
			json.Unmarshal([]byte(h.entry(f.o)), &want)
			if p := got[h.key].(map[string]any)["pinky"]; !reflect.DeepEqual(p, want) {
				t.Errorf("pinky's entry:\ngot  %v\nwant %v", p, want)
			}
		})
	}
	all, _ := os.ReadDir(filepath.Join("..", "deploy", "mcp"))
	for _, e := range all {
		if !seen[e.Name()] {
			t.Errorf("deploy/mcp/%s is not checked here", e.Name())
		}
	}
}

func TestSkillName(t *testing.T) {
	for _, c := range []struct{ skill, want string }{
		{"---\nname: pinky-phones\ndescription: x\n---\n# Body\n", "pinky-phones"},
		{"---\ndescription: x\nname: \"a-b\"\n---\n", "a-b"},
		{"# no front matter\n", ""},
		{"---\ndescription: x\n---\nname: late\n", ""},
		{"---\nname: Not A Name\n---\n", ""},
	} {
		got, err := skillName(c.skill)
		if got != c.want || (err == nil) != (c.want != "") {
			t.Errorf("skillName(%q) = %q, %v; want %q", c.skill, got, err, c.want)
		}
	}
}

func TestMCPInstallClaudeDesktopStoreBuild(t *testing.T) {
	h, err := findHost("claude-desktop")
	if err != nil {
		t.Fatal(err)
	}
	local := t.TempDir()
	o := installOpts{goos: "windows", localAppData: local, configDir: filepath.Join("C:", "Users", "a", "AppData", "Roaming")}
	if got, want := h.file(scopeUser, o), filepath.Join(o.configDir, "Claude", "claude_desktop_config.json"); got != want {
		t.Errorf("without the Store build: %s; want %s", got, want)
	}
	store := filepath.Join(local, "Packages", "Claude_pzs8sxrjxfjjc", "LocalCache", "Roaming", "Claude")
	if err := os.MkdirAll(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, want := h.file(scopeUser, o), filepath.Join(store, "claude_desktop_config.json"); got != want {
		t.Errorf("with the Store build: %s; want %s", got, want)
	}
	o.goos = "linux"
	if got := h.file(scopeUser, o); strings.Contains(got, "Packages") {
		t.Errorf("on Linux: %s", got)
	}
}
