package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// policyCheck is what `pinky policy check --json` prints.
type policyCheck struct {
	File     string `json:"file"`
	Default  bool   `json:"default"`
	Valid    bool   `json:"valid"`
	Problems []struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Message string `json:"message"`
	} `json:"problems"`
	App      *string `json:"app"`
	Category string  `json:"category"`
	Commit   *string `json:"commit"`
	Decision *string `json:"decision"`
	Rule     string  `json:"rule"`
	Code     string  `json:"code"`
	Reason   string  `json:"reason"`
	Rules    []struct {
		Rule    string `json:"rule"`
		Line    int    `json:"line"`
		Matched bool   `json:"matched"`
		Winner  bool   `json:"winner"`
	} `json:"rules"`
}

// TestPolicyCheckJSON runs `pinky policy check --json` before the first
// start (the default policy), on examples, and on a broken file; stdout is
// always one JSON object and nothing else.
func TestPolicyCheckJSON(t *testing.T) {
	e := newEnv(t)
	e.WriteFile("bad.yaml", "rules:\n  - decision: allow\n  - commit: payment\n    decision: maybe\n")
	run := func(t *testing.T, wantCode int, args ...string) policyCheck {
		t.Helper()
		out, errs, code := e.Run(append([]string{"policy", "check", "--json"}, args...)...)
		if code != wantCode {
			t.Fatalf("exit %d; want %d: %s%s", code, wantCode, out, errs)
		}
		var got policyCheck
		dec := json.NewDecoder(strings.NewReader(out))
		if err := dec.Decode(&got); err != nil || dec.More() {
			t.Fatalf("stdout is not one JSON object (%v):\n%s", err, out)
		}
		return got
	}

	t.Run("no example", func(t *testing.T) {
		got := run(t, 0)
		if got.File != filepath.Join(e.Home, "policy.yaml") || !got.Default || !got.Valid || got.Decision != nil || got.Commit != nil || got.App != nil || got.Rules != nil {
			t.Errorf("got %+v; want the default policy checked for %s, valid, and no example", got, e.Home)
		}
	})
	t.Run("an example that asks", func(t *testing.T) {
		got := run(t, 0, "--app", "com.whatsapp", "--action", "tap", "--commit", "send_message")
		if got.Decision == nil || *got.Decision != "ask" || got.Rule != "ask before committing" || got.Code != "" ||
			got.Commit == nil || *got.Commit != "send_message" || got.App == nil || *got.App != "com.whatsapp" || got.Category != "messaging" ||
			!strings.Contains(got.Reason, "The person must approve send message") {
			t.Errorf("got %+v; want ask by \"ask before committing\" for send_message in messaging", got)
		}
		winners := 0
		for _, r := range got.Rules {
			if r.Winner {
				winners++
				if r.Rule != "ask before committing" || !r.Matched || r.Line == 0 {
					t.Errorf("winning rule: got %+v", r)
				}
			}
		}
		if winners != 1 {
			t.Errorf("got %d winning rules in %+v; want 1", winners, got.Rules)
		}
	})
	t.Run("a blocked app", func(t *testing.T) {
		got := run(t, 0, "--app", "com.x8bit.bitwarden", "--action", "read")
		if got.Decision == nil || *got.Decision != "deny" || got.Code != "blocked_app" || got.Rule != "blocked_categories" || got.Commit == nil || *got.Commit != "" {
			t.Errorf("got %+v; want deny, blocked_app, by blocked_categories, no commit", got)
		}
	})
	t.Run("an invalid file", func(t *testing.T) {
		got := run(t, 1, filepath.Join(e.Home, "bad.yaml"), "--action", "tap")
		if got.Valid || len(got.Problems) == 0 || got.Decision != nil {
			t.Fatalf("got %+v; want invalid with problems and no decision", got)
		}
		for _, p := range got.Problems {
			if p.Line == 0 || p.Message == "" || !strings.HasSuffix(p.File, "bad.yaml") {
				t.Errorf("problem %+v; want the file, a line and a message", p)
			}
		}
	})
}
