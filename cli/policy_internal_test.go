package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/gateway/policy"
)

// runPolicy runs `pinky ARGS…` in-process with PINKY_HOME set to home.
func runPolicy(t *testing.T, home string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	t.Setenv("PINKY_HOME", home)
	var out, errOut bytes.Buffer
	code = Execute(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPolicyCheck(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, policy.PolicyFile)
	if _, err := policy.EnsureDefault(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, policy.AppsFile), []byte("social: [com.example.chirp]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(home, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - decision: allow\n  - commit: payment\n    decision: maybe\n  - {decision: deny}\nextra: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   []string // each must be in stdout
		stderr   []string // each must be in stderr
		noStdout string   // must not be in stdout
	}{
		{"the default in PINKY_HOME", []string{"policy", "check"}, 0,
			[]string{path + ": valid."}, nil, "Decision"},
		{"an example that asks", []string{"policy", "check", "--app", "com.whatsapp", "--action", "tap", "--commit", "send_message", "--agent", "claude-code"}, 0,
			[]string{
				"app com.whatsapp (messaging), device -, agent claude-code, action tap, commit send_message",
				`Decision: ask, by rule "ask before committing" (line `,
				"The person must approve send message (tap) in com.whatsapp",
				`+  allow  "default" (line `,
				`*  ask    "ask before committing" (line `,
				"commit send_message",
				"-  ask    \"files\" (line ",
			}, nil, ""},
		{"an example that is allowed", []string{"policy", "check", "--action", "scroll"}, 0,
			[]string{`Decision: allow, by rule "default"`, `*  allow  "default"`}, nil, ""},
		{"a blocked app", []string{"policy", "check", "--app", "com.x8bit.bitwarden", "--action", "read"}, 0,
			[]string{"(password_managers)", "Decision: deny (blocked_app), by blocked_categories, before any rule"}, nil, "*  "},
		{"apps.yaml in PINKY_HOME is used", []string{"policy", "check", "--app", "com.example.chirp"}, 0,
			[]string{"app com.example.chirp (social)"}, nil, ""},
		{"an invalid file", []string{"policy", "check", bad}, 1, nil,
			[]string{
				bad + `:4: unknown decision "maybe"`,
				bad + `:5: rule 3 (line 5) matches exactly what rule 1 (line 2) matches`,
				bad + `:6: unknown key "extra"`,
				"The policy is invalid",
			}, "valid"},
		{"an invalid file with an example", []string{"policy", "check", bad, "--action", "tap"}, 1, nil,
			[]string{"The policy is invalid"}, "Decision"},
		{"a missing file", []string{"policy", "check", filepath.Join(home, "nope.yaml")}, 1, nil,
			[]string{"nope.yaml"}, ""},
		{"a missing --apps file", []string{"policy", "check", "--apps", filepath.Join(home, "nope.yaml")}, 1, nil,
			[]string{"nope.yaml"}, ""},
		{"an unknown action", []string{"policy", "check", "--action", "tapp"}, 1, nil,
			[]string{`--action "tapp": want one of tap,`}, ""},
		{"an unknown commit kind", []string{"policy", "check", "--commit", "pay"}, 1, nil,
			[]string{`--commit "pay": want one of payment,`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runPolicy(t, home, tt.args...)
			if code != tt.code {
				t.Errorf("exit code: got %d; want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout, stderr)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout: got\n%s\nwant it to contain %q", stdout, w)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr: got\n%s\nwant it to contain %q", stderr, w)
				}
			}
			if tt.noStdout != "" && strings.Contains(stdout, tt.noStdout) {
				t.Errorf("stdout: got\n%s\nwant no %q", stdout, tt.noStdout)
			}
		})
	}
}

// Before the daemon's first start there is no policy.yaml: check explains
// the default it will write.
func TestPolicyCheckBeforeFirstStart(t *testing.T) {
	home := t.TempDir()
	code, stdout, stderr := runPolicy(t, home, "policy", "check", "--commit", "payment")
	if code != 0 {
		t.Fatalf("exit code: got %d; want 0\n%s%s", code, stdout, stderr)
	}
	for _, w := range []string{"There is no " + filepath.Join(home, policy.PolicyFile) + " yet", "The default policy: valid.", "Decision: ask"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout: got\n%s\nwant it to contain %q", stdout, w)
		}
	}
	if _, err := os.Stat(filepath.Join(home, policy.PolicyFile)); err == nil {
		t.Error("check wrote a policy file; only the daemon does")
	}
}
