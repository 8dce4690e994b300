package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		apps   string
		want   []string // each must be in the error, with its file and line
	}{
		{"bad YAML", "rules:\n  - decision: allow\n   action: tap\n", "",
			[]string{"policy.yaml:3: "}},
		{"an unclosed list", "blocked_categories: [banking\nrules: [{decision: allow}]\n", "",
			[]string{"policy.yaml:1: "}},
		{"bad YAML deep in a file", "blocked_categories: [banking]\nread_only:\n  all: false\nrules:\n  - decision: allow\n  - commit: payment\n     decision: ask\n", "",
			[]string{"policy.yaml:7: "}},
		{"a tab", "rules:\n\t- decision: allow\n", "",
			[]string{"policy.yaml:2: "}},
		{"an empty file", "", "",
			[]string{"policy.yaml: no rules"}},
		{"rules: with nothing", "rules:\n", "",
			[]string{"policy.yaml: no rules"}},
		{"an empty rules list", "blocked_categories: []\nrules: []\n", "",
			[]string{"policy.yaml:2: no rules"}},
		{"rules is not a list", "rules: {decision: allow}\n", "",
			[]string{"policy.yaml:1: rules is a list"}},
		{"an unknown top-level key", "rule:\n  - decision: allow\nrules: [{decision: allow}]\n", "",
			[]string{`policy.yaml:1: unknown key "rule"; want blocked_categories`}},
		{"an unknown key in a rule", "rules:\n  - decision: allow\n  - actions: tap\n    decision: ask\n", "",
			[]string{`policy.yaml:3: unknown key "actions" in a rule`}},
		{"an unknown key in read_only", "read_only:\n  device: [a]\nrules: [{decision: allow}]\n", "",
			[]string{`policy.yaml:2: unknown key "device" in read_only`}},
		{"a wrong type in read_only", "read_only:\n  all: sometimes\nrules: [{decision: allow}]\n", "",
			[]string{`policy.yaml:2: `}},
		{"an unknown decision", "rules:\n  - decision: allow\n  - commit: payment\n    decision: maybe\n", "",
			[]string{`policy.yaml:4: unknown decision "maybe"`}},
		{"a missing decision", "rules:\n  - name: forgot\n    commit: payment\n", "",
			[]string{`policy.yaml:2: rule "forgot" (line 2) has no decision`}},
		{"a decision without a value", "rules:\n  - commit: payment\n    decision:\n", "",
			[]string{`policy.yaml:2: rule 1 (line 2): decision has no value`}},
		{"a list for a decision", "rules:\n  - decision: [allow, ask]\n", "",
			[]string{`policy.yaml:2: want one value`}},
		{"an unknown action", "rules:\n  - action: [tap, swipe_up]\n    decision: ask\n", "",
			[]string{`policy.yaml:2: action: unknown action "swipe_up"`}},
		{"an unknown commit kind", "rules:\n  - commit:\n      - payment\n      - payments\n    decision: ask\n", "",
			[]string{`policy.yaml:4: commit: unknown commit kind "payments"`}},
		{"any with kinds", "rules:\n  - commit: [any, post]\n    decision: ask\n", "",
			[]string{"policy.yaml:2: commit: `any` already covers"}},
		{"an unknown category in a rule", "rules:\n  - category: bank\n    decision: deny\n", "",
			[]string{`policy.yaml:2: category: unknown category "bank"`}},
		{"an unknown blocked category", "blocked_categories: [banking, crypto]\nrules: [{decision: allow}]\n", "",
			[]string{`policy.yaml:1: blocked_categories: unknown category "crypto"`}},
		{"a match key without a value", "rules:\n  - app:\n    decision: deny\n", "",
			[]string{"policy.yaml:2: app: no value"}},
		{"an empty match list", "rules:\n  - app: []\n    decision: deny\n", "",
			[]string{"policy.yaml:2: app: an empty list matches nothing"}},
		{"an empty name in a list", "rules:\n  - device: [a, \"\"]\n    decision: deny\n", "",
			[]string{"policy.yaml:2: device: an empty name"}},
		{"a map for a name", "rules:\n  - agent: [{name: x}]\n    decision: deny\n", "",
			[]string{"policy.yaml:2: want a name here"}},
		{"a rule that is not a map", "rules:\n  - allow\n", "",
			[]string{"policy.yaml:2: a rule is a map"}},
		{"conflicting rules", "rules:\n  - decision: allow\n  - name: pay\n    commit: [payment, purchase]\n    decision: ask\n  - commit: [purchase, payment]\n    decision: deny\n", "",
			[]string{`policy.yaml:6: rule 3 (line 6) matches exactly what rule "pay" (line 3) matches but says deny, not ask`}},
		{"conflicting defaults", "rules:\n  - decision: allow\n  - decision: deny\n", "",
			[]string{`policy.yaml:3: rule 2 (line 3) matches exactly what rule 1 (line 2) matches but says deny, not allow`}},
		{"conflicting agents differ only in case", "rules:\n  - {agent: Claude, decision: allow}\n  - {agent: claude, decision: ask}\n", "",
			[]string{`policy.yaml:3: rule 2 (line 3) matches exactly what rule 1 (line 2)`}},
		{"duplicate rule names", "rules:\n  - {name: a, decision: allow}\n  - {name: a, action: tap, decision: ask}\n", "",
			[]string{`policy.yaml:3: a second rule named "a" (the first is at line 2)`}},
		{"a duplicate key", "rules:\n  - decision: allow\n    decision: deny\n", "",
			[]string{`policy.yaml:3: `}},
		{"a second document", "rules: [{decision: allow}]\n---\nrules: [{decision: deny}]\n", "",
			[]string{`policy.yaml:2: a second YAML document`}},
		{"every problem is reported", "rules:\n  - decision: alow\n    actions: tap\n  - category: [social, socail]\n    decision: deny\nfoo: 1\n", "",
			[]string{`policy.yaml:2: unknown decision "alow"`, `policy.yaml:3: unknown key "actions"`, `policy.yaml:4: category: unknown category "socail"`, `policy.yaml:6: unknown key "foo"`}},
		{"bad apps.yaml YAML", "rules: [{decision: allow}]\n", "banking:\n  - {android: x\n",
			[]string{"apps.yaml:"}},
		{"an unknown category in apps.yaml", "rules: [{decision: allow}]\n", "banks:\n  - com.mybank\n",
			[]string{`apps.yaml:1: unknown category "banks"`}},
		{"an unknown key in apps.yaml", "rules: [{decision: allow}]\n", "banking:\n  - {name: B, andriod: com.b}\n",
			[]string{`apps.yaml:2: unknown key "andriod" in an app`}},
		{"an app without an id", "rules: [{decision: allow}]\n", "banking:\n  - {name: B}\n",
			[]string{`apps.yaml:2: an app needs an id`}},
		{"one app in two categories", "rules: [{decision: allow}]\n", "banking: [com.b]\nsocial:\n  - com.b\n",
			[]string{`apps.yaml:3: app com.b is already filed under banking at line 1`}},
		{"apps.yaml not a map", "rules: [{decision: allow}]\n", "- com.b\n",
			[]string{`apps.yaml:1: want categories as keys`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var apps []byte
			if tt.apps != "" {
				apps = []byte(tt.apps)
			}
			p, err := Parse([]byte(tt.policy), apps)
			if p != nil {
				t.Errorf("Parse returned a policy with the error %v", err)
			}
			if err == nil {
				t.Fatalf("Parse: got no error; want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Parse: got %q; want it to contain %q", err, w)
				}
			}
			var pe *Error
			if !errors.As(err, &pe) || pe.File == "" {
				t.Errorf("Parse: got %#v; want an *Error with a file", err)
			}
		})
	}
}

// A policy that fails to parse must never be usable: Decide on a nil
// Policy panics rather than allowing, and Load returns no policy.
func TestBrokenPolicyIsNeverUsable(t *testing.T) {
	p, err := Parse([]byte("rules: [{decision: allw}]\n"), nil)
	if err == nil || p != nil {
		t.Fatalf("got %v, %v; want no policy and an error", p, err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Decide on a nil policy returned; want a panic")
		}
	}()
	p.Decide(Request{Action: "tap"})
}

func TestValidPolicies(t *testing.T) {
	for _, src := range []string{
		"rules: [{decision: deny}]\n",
		"rules:\n  - decision: allow\n  - decision: allow\n", // the same twice is harmless
		"rules:\n  - {commit: payment, decision: ask}\n  - {commit: [payment, post], decision: deny}\n",
		"blocked_categories:\nblocked_apps:\nread_only:\nrules: [{decision: allow}]\n",
		"rules: [{app: com.x, category: social, device: d, agent: a, action: tap, commit: post, decision: ask, name: n}]\n",
	} {
		if _, err := Parse([]byte(src), nil); err != nil {
			t.Errorf("Parse(%q): %v", src, err)
		}
	}
}

func TestBundledApps(t *testing.T) {
	apps, errs := parseApps("apps.yaml", bundledApps, nil)
	if errs != nil {
		t.Fatalf("the bundled table: %v", joinErrors(errs))
	}
	if len(apps) < 250 {
		t.Errorf("the bundled table has %d ids; want at least 250", len(apps))
	}
	per := map[string]int{}
	for _, c := range apps {
		per[c]++
	}
	for _, c := range Categories {
		if per[c] < 8 {
			t.Errorf("category %s has %d ids; want at least 8", c, per[c])
		}
	}
	for id, want := range map[string]string{
		"com.chase.sig.android":                  "banking",
		"com.chase.sig.Chase":                    "banking",
		"com.paypal.android.p2pmobile":           "payments",
		"com.yourcompany.PPClient":               "payments",
		"com.google.android.apps.walletnfcrel":   "wallets",
		"com.apple.Passbook":                     "wallets",
		"com.x8bit.bitwarden":                    "password_managers",
		"com.8bit.bitwarden":                     "password_managers",
		"com.google.android.apps.authenticator2": "authenticators",
		"com.google.Authenticator":               "authenticators",
		"com.azure.authenticator":                "authenticators",
		"com.authy.authy":                        "authenticators",
		"org.telegram.messenger":                 "messaging",
		"ph.telegra.Telegraph":                   "messaging",
		"com.whatsapp":                           "messaging",
		"net.whatsapp.WhatsApp":                  "messaging",
		"com.android.vending":                    "stores",
		"com.apple.AppStore":                     "stores",
		"com.google.android.gm":                  "email",
		"com.apple.Health":                       "health",
		"com.instagram.android":                  "social",
		// The virtual phones' apps (drivers/sim/worlds/default.yaml).
		"com.pinky.sim.bank":                "banking",
		"com.pinky.sim.shop":                "stores",
		"com.google.android.apps.messaging": "messaging",
		"com.apple.MobileSMS":               "messaging",
		"com.apple.mobilemail":              "email",
	} {
		if apps[id] != want {
			t.Errorf("%s: got %q; want %q", id, apps[id], want)
		}
	}
}
