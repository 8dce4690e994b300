package policy

import "testing"

func TestAppNames(t *testing.T) {
	p := mustParse(t, "rules: [{decision: allow}]\n", "banking:\n  - {name: My Bank, android: com.mybank.app, ios: com.mybank.ios}\n  - com.bare.id\n")
	for id, want := range map[string]string{
		"com.mybank.app":        "My Bank",
		"com.mybank.ios":        "My Bank",
		"com.chase.sig.android": "Chase",
		"com.pinky.sim.bank":    "Pinky virtual Bank",
		"com.bare.id":           "",
		"com.unknown":           "",
	} {
		if got := p.Name(id); got != want {
			t.Errorf("Name(%q): got %q; want %q", id, got, want)
		}
	}
}
