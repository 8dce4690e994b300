package policy

import "testing"

// BenchmarkDecide is the policy's cost per action: the default policy, a tap
// that sends a message in the virtual Messages app.
func BenchmarkDecide(b *testing.B) {
	p := mustParse(b, string(DefaultPolicy), "")
	r := Request{App: "com.google.android.apps.messaging", Device: "sim-android-1", Agent: "claude-code", Action: "tap", Commit: "send_message"}
	b.ReportAllocs()
	for b.Loop() {
		if v := p.Decide(r); v.Decision != Ask {
			b.Fatalf("got %+v; want ask", v)
		}
	}
}

// BenchmarkDecideAllow is a tap that commits nothing: the commonest case.
func BenchmarkDecideAllow(b *testing.B) {
	p := mustParse(b, string(DefaultPolicy), "")
	r := Request{App: "com.google.android.apps.messaging", Device: "sim-android-1", Agent: "claude-code", Action: "scroll"}
	b.ReportAllocs()
	for b.Loop() {
		if v := p.Decide(r); v.Decision != Allow {
			b.Fatalf("got %+v; want allow", v)
		}
	}
}

// BenchmarkParse is the cost of a reload: the default policy and the bundled
// app table.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(DefaultPolicy, nil); err != nil {
			b.Fatal(err)
		}
	}
}
