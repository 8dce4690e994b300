package cli

import "testing"

func TestGatewayAddr(t *testing.T) {
	for listen, want := range map[string]string{
		"0.0.0.0:4778":     "THIS-MACHINE:4778",
		"[::]:4778":        "THIS-MACHINE:4778",
		":4778":            "THIS-MACHINE:4778",
		"127.0.0.2:4778":   "127.0.0.2:4778",
		"gw.example:4778":  "gw.example:4778",
		"[2001:db8::1]:47": "[2001:db8::1]:47",
	} {
		if got := gatewayAddr(listen); got != want {
			t.Errorf("gatewayAddr(%q) = %q; want %q", listen, got, want)
		}
	}
}
