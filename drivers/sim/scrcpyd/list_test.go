package scrcpyd

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// someApps is a sim phone with the apps a test gives.
type someApps struct {
	*sim.Driver
	apps []sdk.App
}

func (a someApps) ListApps(context.Context, string) ([]sdk.App, error) { return a.apps, nil }

// The expected lines are written from LogUtils.java's formats.
func TestServeLists(t *testing.T) {
	d := someApps{Driver: simtest.New(t, simtest.Unlocked(android)), apps: []sdk.App{
		{ID: "com.example.z", Label: "Zed"},
		{ID: "com.android.settings", Label: "Settings", System: true},
		{ID: "com.example.long", Label: "A name of thirty characters ok"},
		{ID: "com.example.a", Label: "Alpha"},
	}}
	device := "[server] INFO: Device: [Google] google Pixel 8 (Android 15)\n"
	tests := []struct {
		name, arg, want string
	}{
		{"encoders", "list_encoders=true", device +
			"[server] INFO: List of video encoders:\n    --video-codec=h264 --video-encoder=c2.android.avc.encoder         (sw)\n" +
			"[server] INFO: List of audio encoders:\n"},
		{"displays", "list_displays=true", device + "[server] INFO: List of displays:\n    --display-id=0    (1080x2400)\n"},
		{"cameras", "list_cameras=true", device + "[server] INFO: List of cameras:\n    (none)\n"},
		{"apps", "list_apps=true", device +
			"[server] INFO: Processing Android apps... (this may take some time)\n" +
			"[server] INFO: List of apps:\n" +
			" * Settings                       com.android.settings\n" +
			// A name of 30 or more: "\n   ", 30 spaces, " ", the package.
			" - A name of thirty characters ok\n" + strings.Repeat(" ", 3+30+1) + "com.example.long\n" +
			" - Alpha                          com.example.a\n" +
			" - Zed                            com.example.z\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer lis.Close()
			var stdout, stderr testkit.Buffer
			// No tunnel_forward: the real server lists before it
			// connects, so a reverse tunnel does not matter.
			err = Server{Driver: d, Device: android}.Serve(context.Background(), []string{"4.1", "log_level=info", tt.arg}, lis, &stdout, &stderr)
			if err != nil {
				t.Fatalf("Serve = %v (stderr %q); want nil", err, stderr.String())
			}
			if got := stdout.String(); got != tt.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", got, tt.want)
			}
			if got := stderr.String(); strings.Contains(got, "ERROR") {
				t.Errorf("stderr = %q; want no error", got)
			}
		})
	}
}
