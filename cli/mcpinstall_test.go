package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestMCPInstallEveryHost installs pinky for every host and scope through
// the real binary, next to an entry of the person's own, reads each file
// back as its host would, and uninstalls again.
func TestMCPInstallEveryHost(t *testing.T) {
	e := newEnv(t)
	home, project := t.TempDir(), t.TempDir()
	e.Extra = append(e.Extra, "HOME="+home, "XDG_CONFIG_HOME=", "CODEX_HOME=", "APPDATA=")
	config := filepath.Join(home, ".config") // os.UserConfigDir with no XDG_CONFIG_HOME
	if runtime.GOOS == "darwin" {
		config = filepath.Join(home, "Library", "Application Support")
	}
	pinky, err := filepath.EvalSymlinks(e2e.Bin.Pinky)
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		host, scope, file string
		key               string // the servers' JSON key; "" for TOML
	}{
		{"claude-code", "user", filepath.Join(home, ".claude.json"), "mcpServers"},
		{"claude-code", "project", filepath.Join(project, ".mcp.json"), "mcpServers"},
		{"codex", "user", filepath.Join(home, ".codex", "config.toml"), ""},
		{"codex", "project", filepath.Join(project, ".codex", "config.toml"), ""},
		{"cursor", "user", filepath.Join(home, ".cursor", "mcp.json"), "mcpServers"},
		{"cursor", "project", filepath.Join(project, ".cursor", "mcp.json"), "mcpServers"},
		{"vscode", "user", filepath.Join(config, "Code", "User", "mcp.json"), "servers"},
		{"vscode", "project", filepath.Join(project, ".vscode", "mcp.json"), "servers"},
		{"claude-desktop", "user", filepath.Join(config, "Claude", "claude_desktop_config.json"), "mcpServers"},
	}
	// servers reads the file as its host does: the servers by name.
	servers := func(t *testing.T, file, key string) map[string]map[string]any {
		t.Helper()
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if key == "" {
			_, err = toml.Decode(string(data), &doc)
			key = "mcp_servers"
		} else {
			err = json.Unmarshal(data, &doc)
		}
		if err != nil {
			t.Fatalf("%s does not parse: %v\n%s", file, err, data)
		}
		out := map[string]map[string]any{}
		m, _ := doc[key].(map[string]any)
		for name, v := range m {
			out[name], _ = v.(map[string]any)
		}
		return out
	}
	for _, c := range cases {
		t.Run(c.host+"/"+c.scope, func(t *testing.T) {
			// The person's own server is there first.
			if err := os.MkdirAll(filepath.Dir(c.file), 0o700); err != nil {
				t.Fatal(err)
			}
			mine := `{"` + c.key + `": {"mine": {"command": "mine", "args": ["--x"]}}, "other": true}`
			if c.key == "" {
				mine = "# my servers\n[mcp_servers.mine]\ncommand = \"mine\"\nargs = [\"--x\"]\n"
			}
			if err := os.WriteFile(c.file, []byte(mine), 0o600); err != nil {
				t.Fatal(err)
			}

			args := []string{"mcp", "install", "--host", c.host, "--scope", c.scope, "--dir", project}
			out, errs, code := e.Run(args...)
			if code != 0 || !strings.Contains(out, c.file) || !strings.Contains(out, ".bak-") {
				t.Fatalf("install: exit %d\n%s%s", code, out, errs)
			}
			got := servers(t, c.file, c.key)
			p := got["pinky"]
			if cmd, _ := p["command"].(string); cmd != pinky || !filepath.IsAbs(cmd) {
				t.Errorf("command %q; want %s", p["command"], pinky)
			}
			if !reflect.DeepEqual(p["args"], []any{"mcp"}) {
				t.Errorf("args %v; want [mcp]", p["args"])
			}
			if env, _ := p["env"].(map[string]any); env["PINKY_HOME"] != e.Home {
				t.Errorf("env %v; want PINKY_HOME=%s", p["env"], e.Home)
			}
			if got["mine"]["command"] != "mine" {
				t.Errorf("the person's entry was lost: %v", got)
			}
			data, _ := os.ReadFile(c.file)
			if c.key == "" && !strings.Contains(string(data), "# my servers") {
				t.Errorf("the comment was lost:\n%s", data)
			}
			if c.key != "" && !strings.Contains(string(data), `"other": true`) {
				t.Errorf("another key was lost:\n%s", data)
			}

			// Again: nothing changes.
			if out, errs, code := e.Run(args...); code != 0 || !strings.Contains(out, "nothing changed") {
				t.Errorf("second install: exit %d\n%s%s", code, out, errs)
			}

			out, errs, code = e.Run("mcp", "uninstall", "--host", c.host, "--scope", c.scope, "--dir", project)
			if code != 0 || !strings.Contains(out, "Removed pinky") {
				t.Fatalf("uninstall: exit %d\n%s%s", code, out, errs)
			}
			got = servers(t, c.file, c.key)
			if _, ok := got["pinky"]; ok || got["mine"]["command"] != "mine" {
				t.Errorf("after uninstall: %v; want mine alone", got)
			}
		})
	}

	t.Run("http", func(t *testing.T) {
		out, errs, code := e.Run("mcp", "install", "--host", "codex", "--http", "--url", "https://phones.example.org/mcp")
		if code != 0 || !strings.Contains(out, "PINKY_TOKEN") {
			t.Fatalf("install --http: exit %d\n%s%s", code, out, errs)
		}
		p := servers(t, filepath.Join(home, ".codex", "config.toml"), "")["pinky"]
		if p["url"] != "https://phones.example.org/mcp" || p["bearer_token_env_var"] != "PINKY_TOKEN" || p["command"] != nil {
			t.Errorf("codex http entry: %v", p)
		}
		out, errs, code = e.Run("mcp", "install", "--host", "vscode", "--scope", "project", "--dir", project, "--http")
		if code != 0 {
			t.Fatalf("vscode --http: exit %d\n%s%s", code, out, errs)
		}
		p = servers(t, filepath.Join(project, ".vscode", "mcp.json"), "servers")["pinky"]
		if p["type"] != "http" || p["url"] != "http://127.0.0.1:8765/mcp" ||
			!reflect.DeepEqual(p["headers"], map[string]any{"Authorization": "Bearer ${env:PINKY_TOKEN}"}) {
			t.Errorf("vscode http entry: %v", p)
		}
		// The token itself is never written.
		tok, _, code := e.Run("token")
		if code != 0 || strings.TrimSpace(tok) == "" {
			t.Fatalf("pinky token: exit %d", code)
		}
		for _, f := range []string{filepath.Join(home, ".codex", "config.toml"), filepath.Join(project, ".vscode", "mcp.json")} {
			if data, _ := os.ReadFile(f); strings.Contains(string(data), strings.TrimSpace(tok)) {
				t.Errorf("%s holds the token", f)
			}
		}
		if _, errs, code := e.Run("mcp", "install", "--host", "claude-desktop", "--http"); code == 0 || !strings.Contains(errs, "stdio") {
			t.Errorf("claude-desktop --http: exit %d, %q; want a refusal", code, errs)
		}
	})

	t.Run("print writes nothing", func(t *testing.T) {
		dir := t.TempDir()
		out, errs, code := e.Run("mcp", "install", "--host", "cursor", "--scope", "project", "--dir", dir, "--print")
		var doc map[string]map[string]map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc["mcpServers"]["pinky"]["command"] != pinky {
			t.Errorf("--print: exit %d\n%s%s", code, out, errs)
		}
		if _, err := os.Stat(filepath.Join(dir, ".cursor")); !os.IsNotExist(err) {
			t.Errorf("--print wrote into the project: %v", err)
		}
	})

	t.Run("malformed file refused", func(t *testing.T) {
		f := filepath.Join(project, ".mcp.json")
		bad := "{\n  \"mcpServers\": {\n    // mine\n  }\n}\n"
		if err := os.WriteFile(f, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		_, errs, code := e.Run("mcp", "install", "--host", "claude-code", "--scope", "project", "--dir", project)
		if code == 0 || !strings.Contains(errs, f) || !strings.Contains(errs, "not changed") {
			t.Errorf("malformed: exit %d, %q", code, errs)
		}
		if data, _ := os.ReadFile(f); string(data) != bad {
			t.Errorf("malformed file changed:\n%s", data)
		}
	})

	t.Run("help points to commands", func(t *testing.T) {
		out, _, _ := e.Run("mcp", "--help")
		if !strings.Contains(out, "pinky mcp install") || !strings.Contains(out, "pinky skill") || strings.Contains(out, "deploy/") {
			t.Errorf("pinky mcp --help:\n%s", out)
		}
		if _, errs, code := e.Run("mcp", "install", "--host", "emacs"); code == 0 || !strings.Contains(errs, "claude-code") {
			t.Errorf("unknown host: exit %d, %q", code, errs)
		}
	})
}
