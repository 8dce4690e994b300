package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testPolicy exercises every match field; its rules are numbered by line in
// the test cases below, so keep the lines as they are.
const testPolicy = `blocked_categories: [banking, password_managers]
blocked_apps: ["com.casino.*"]
unblocked_apps: [com.pinky.sim.bank]
read_only:
  devices: [work-phone]
  agents: ["watcher*"]
rules:
  - name: default
    decision: allow
  - name: commits ask
    commit: any
    decision: ask
  - name: no posting
    category: social
    commit: [post, send_message]
    decision: deny
  - name: shop asks too
    app: com.pinky.sim.shop
    category: stores
    decision: ask
  - name: test agents ask to type
    agent: "test-*"
    action: [type, key]
    decision: ask
  - name: no payments on the ipad
    device: "ipad-?"
    commit: [payment, purchase]
    decision: deny
  - decision: ask
    action: files_push
  - name: second deny on posting
    app: com.twitter.android
    decision: deny
`

func mustParse(t testing.TB, policy, apps string) *Policy {
	t.Helper()
	var a []byte
	if apps != "" {
		a = []byte(apps)
	}
	p, err := Parse([]byte(policy), a)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return p
}

func TestDecide(t *testing.T) {
	p := mustParse(t, testPolicy, "")
	tests := []struct {
		name string
		req  Request
		want Verdict // Reason is checked separately: not empty
	}{
		{"a default allows what nothing else matches",
			Request{App: "com.google.android.apps.messaging", Device: "pixel", Agent: "claude-code", Action: "tap"},
			Verdict{Decision: Allow, Rule: "default"}},
		{"any commit asks",
			Request{App: "com.google.android.apps.messaging", Device: "pixel", Action: "tap", Commit: "send_message"},
			Verdict{Decision: Ask, Rule: "commits ask"}},
		{"deny beats ask and allow: a category and a commit list",
			Request{App: "com.instagram.android", Device: "pixel", Action: "tap", Commit: "post"},
			Verdict{Decision: Deny, Rule: "no posting"}},
		{"a commit outside the rule's list falls to the next strictest",
			Request{App: "com.instagram.android", Device: "pixel", Action: "tap", Commit: "delete"},
			Verdict{Decision: Ask, Rule: "commits ask"}},
		{"ties go to the first rule in the file",
			Request{App: "com.pinky.sim.shop", Action: "tap", Commit: "payment"},
			Verdict{Decision: Ask, Rule: "commits ask"}},
		{"two denies: the first in the file",
			Request{App: "com.twitter.android", Action: "tap", Commit: "post"},
			Verdict{Decision: Deny, Rule: "no posting"}},
		{"the later deny alone",
			Request{App: "com.twitter.android", Action: "scroll"},
			Verdict{Decision: Deny, Rule: "second deny on posting"}},
		{"app or category: the app id matches",
			Request{App: "com.pinky.sim.shop", Action: "scroll"},
			Verdict{Decision: Ask, Rule: "shop asks too"}},
		{"app or category: the category matches",
			Request{App: "com.android.vending", Action: "scroll"},
			Verdict{Decision: Ask, Rule: "shop asks too"}},
		{"an agent glob, case alike",
			Request{App: "com.whatsapp", Agent: "Test-Bot", Action: "type"},
			Verdict{Decision: Ask, Rule: "test agents ask to type"}},
		{"an agent glob that does not match",
			Request{App: "com.whatsapp", Agent: "a-test-bot", Action: "type"},
			Verdict{Decision: Allow, Rule: "default"}},
		{"a device glob with ?",
			Request{App: "com.pinky.sim.shop", Device: "ipad-2", Action: "tap", Commit: "purchase"},
			Verdict{Decision: Deny, Rule: "no payments on the ipad"}},
		{"a device glob with ? is one character",
			Request{App: "com.pinky.sim.shop", Device: "ipad-12", Action: "tap", Commit: "purchase"},
			Verdict{Decision: Ask, Rule: "commits ask"}},
		{"an unnamed rule is named by number and line",
			Request{Device: "pixel", Action: "files_push"},
			Verdict{Decision: Ask, Rule: "rule 7 (line 29)"}},
		{"a blocked category",
			Request{App: "com.chase.sig.android", Action: "tap"},
			Verdict{Decision: Deny, Rule: "blocked_categories", Code: CodeBlockedApp}},
		{"a blocked app is blocked for reads too",
			Request{App: "com.x8bit.bitwarden", Action: "read", Read: true},
			Verdict{Decision: Deny, Rule: "blocked_categories", Code: CodeBlockedApp}},
		{"a category not blocked here",
			Request{App: "com.google.android.apps.walletnfcrel", Action: "read"},
			Verdict{Decision: Allow, Rule: "default"}},
		{"blocked_apps with a glob",
			Request{App: "com.casino.slots", Action: "launch"},
			Verdict{Decision: Deny, Rule: "blocked_apps", Code: CodeBlockedApp}},
		{"unblocked_apps beats a blocked category",
			Request{App: "com.pinky.sim.bank", Action: "tap"},
			Verdict{Decision: Allow, Rule: "default"}},
		{"read-only device refuses acting",
			Request{App: "com.whatsapp", Device: "work-phone", Action: "tap"},
			Verdict{Decision: Deny, Rule: "read_only.devices", Code: CodeScopeDenied}},
		{"read-only device lets reads through",
			Request{App: "com.whatsapp", Device: "work-phone", Action: "read"},
			Verdict{Decision: Allow, Rule: "default"}},
		{"read-only device lets a reading tool through by its flag",
			Request{App: "com.whatsapp", Device: "work-phone", Action: "screenshot-of-sorts", Read: true},
			Verdict{Decision: Allow, Rule: "default"}},
		{"read-only agent glob",
			Request{App: "com.whatsapp", Agent: "watcher-1", Action: "scroll"},
			Verdict{Decision: Deny, Rule: "read_only.agents", Code: CodeScopeDenied}},
		{"a watch-only agent",
			Request{App: "com.whatsapp", Agent: "claude", Action: "upload", WatchOnly: true},
			Verdict{Decision: Deny, Rule: "watch_only", Code: CodeScopeDenied}},
		{"a watch-only agent reads",
			Request{App: "com.whatsapp", Agent: "claude", Action: "notifications", WatchOnly: true},
			Verdict{Decision: Allow, Rule: "default"}},
		{"a blocked app before read-only",
			Request{App: "com.chase.sig.Chase", Device: "work-phone", Action: "tap"},
			Verdict{Decision: Deny, Rule: "blocked_categories", Code: CodeBlockedApp}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Decide(tt.req)
			if got.Reason == "" {
				t.Errorf("Decide(%+v): no reason", tt.req)
			}
			got.Reason = ""
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide(%+v) (-want +got):\n%s", tt.req, diff)
			}
		})
	}
}

func TestReadOnlyAll(t *testing.T) {
	p := mustParse(t, "read_only: {all: true}\nrules: [{decision: allow}]\n", "")
	for _, tt := range []struct {
		req  Request
		want Decision
	}{
		{Request{Action: "tap"}, Deny},
		{Request{Action: "upload"}, Deny},
		{Request{Action: "read"}, Allow},
		{Request{Action: "files_pull"}, Allow},
	} {
		got := p.Decide(tt.req)
		if got.Decision != tt.want {
			t.Errorf("Decide(%+v): got %v; want %v", tt.req, got.Decision, tt.want)
		}
		if tt.want == Deny && (got.Code != CodeScopeDenied || got.Rule != "read_only.all") {
			t.Errorf("Decide(%+v): got code %q rule %q; want %q, read_only.all", tt.req, got.Code, got.Rule, CodeScopeDenied)
		}
	}
}

func TestNoRuleMatchesDenies(t *testing.T) {
	p := mustParse(t, "rules: [{action: read, decision: allow}]\n", "")
	got := p.Decide(Request{Action: "tap"})
	if got.Decision != Deny || got.Rule != "" || got.Code != "" {
		t.Errorf("got %+v; want a deny by no rule", got)
	}
	if got := p.Decide(Request{Action: "read"}); got.Decision != Allow {
		t.Errorf("read: got %+v; want allow", got)
	}
}

func TestExplain(t *testing.T) {
	p := mustParse(t, testPolicy, "")
	got := p.Explain(Request{App: "com.instagram.android", Device: "pixel", Agent: "claude", Action: "tap", Commit: "post"})
	want := []Match{
		{Rule: "default", Line: 8, Decision: Allow, Matched: true, Why: "matches every request"},
		{Rule: "commits ask", Line: 10, Decision: Ask, Matched: true, Why: "commit post"},
		{Rule: "no posting", Line: 13, Decision: Deny, Matched: true, Why: "category social, commit post", Winner: true},
		{Rule: "shop asks too", Line: 17, Decision: Ask, Why: "app com.instagram.android (category social) is not one of app com.pinky.sim.shop; category stores"},
		{Rule: "test agents ask to type", Line: 21, Decision: Ask, Why: "agent claude is not one of test-*"},
		{Rule: "no payments on the ipad", Line: 25, Decision: Deny, Why: "device pixel is not one of ipad-?"},
		{Rule: "rule 7 (line 29)", Line: 29, Decision: Ask, Why: "action tap is not one of files_push"},
		{Rule: "second deny on posting", Line: 31, Decision: Deny, Why: "app com.instagram.android (category social) is not one of app com.twitter.android"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Explain (-want +got):\n%s", diff)
	}
	// A blocked app decides before the rules: no rule wins.
	for _, m := range p.Explain(Request{App: "com.chase.sig.android", Action: "tap"}) {
		if m.Winner {
			t.Errorf("blocked app: rule %s marked the winner", m.Rule)
		}
	}
}

func TestCategoryAndBlocked(t *testing.T) {
	p := mustParse(t, testPolicy, "banking:\n  - {name: Mine, android: com.mybank.app}\nnone: [com.chase.sig.android]\nsocial: [com.pinky.sim.shop]\n")
	for _, tt := range []struct {
		app      string
		category string
		blocked  bool
	}{
		{"com.mybank.app", "banking", true},      // added by apps.yaml
		{"com.chase.sig.android", "", false},     // taken out by apps.yaml
		{"com.chase.sig.Chase", "banking", true}, // the other platform's id is not
		{"com.pinky.sim.shop", "social", false},  // re-filed
		{"com.x8bit.bitwarden", "password_managers", true},
		{"com.pinky.sim.bank", "banking", false}, // unblocked_apps
		{"com.casino.poker", "", true},           // blocked_apps
		{"org.example.unknown", "", false},
		{"", "", false},
	} {
		if got := p.Category(tt.app); got != tt.category {
			t.Errorf("Category(%q): got %q; want %q", tt.app, got, tt.category)
		}
		blocked, category := p.Blocked(tt.app)
		if blocked != tt.blocked || category != tt.category {
			t.Errorf("Blocked(%q): got %v, %q; want %v, %q", tt.app, blocked, category, tt.blocked, tt.category)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tt := range []struct {
		pat, v string
		fold   bool
		want   bool
	}{
		{"claude*", "claude-code", false, true},
		{"claude*", "claude", false, true},
		{"claude*", "Claude", false, false},
		{"claude*", "Claude", true, true},
		{"*code", "claude-code", false, true},
		{"*-*-*", "a-b-c", false, true},
		{"*-*-*", "a-b", false, false},
		{"a?c", "abc", false, true},
		{"a?c", "ac", false, false},
		{"*", "", false, true},
		{"com.*.bank", "com.x.y.bank", false, true},
		{"com.*.bank", "com.x.y.banks", false, false},
		{"sim-android-1", "sim-android-1", false, true},
		{"sim-android-1", "sim-android-10", false, false},
	} {
		if got := newPattern(tt.pat, tt.fold).match(tt.v); got != tt.want {
			t.Errorf("%q matching %q (fold %v): got %v; want %v", tt.pat, tt.v, tt.fold, got, tt.want)
		}
	}
}
