package android

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/scrcpyd"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// TestScrcpyStartFailures: the phone's scrcpy server refuses to start, as
// a real one does, and the driver says why and what to do.
func TestScrcpyStartFailures(t *testing.T) {
	tests := []struct {
		name string
		face func(*adbd.Config)
		want []string
	}{
		{"another version", func(c *adbd.Config) { c.AppProcess = scrcpyd.AppProcessVersion(c.Driver, "4.1") },
			[]string{"is scrcpy server 4.1, not 3.3.4", "set SCRCPY_SERVER_VERSION=4.1"}},
		{"no server class in the jar", func(c *adbd.Config) { c.AppProcessClass = "com.example.Other" },
			[]string{"app_process aborted", "is SCRCPY_SERVER_PATH a scrcpy-server file?"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, tt.face)
			d := r.driver(t)
			ctx := testkit.Context(t)
			if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
				t.Fatal(err)
			}
			_, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
			if err == nil {
				t.Fatal("a key with a server that does not start: no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q; want %q in it", err, w)
				}
			}
		})
	}
}
