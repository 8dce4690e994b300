package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/safetext"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestUnsupportedSaysWhyAndTheFix: a call that needs what the phone lacks
// answers unsupported with the device's reason and fix and what the agent
// does instead, when the device says why; the plain sentence of old when
// it does not. Nothing reaches the phone either way.
func TestUnsupportedSaysWhyAndTheFix(t *testing.T) {
	const dev = "sim-android-1"
	calls := []struct {
		name string
		c    sdk.Capability
		call func(ctx context.Context, f *fixture, s *Session) error
		// what and instead are in the answer with a reason; plain is the
		// whole answer without.
		what, instead, plain string
	}{
		{"phone_apps", sdk.CapApps, func(ctx context.Context, _ *fixture, s *Session) error {
			_, err := s.Apps(ctx, dev)
			return err
		}, "cannot list its apps", "Find the app on the home screen", dev + " cannot list its apps"},
		{"phone_notifications", sdk.CapNotifications, func(ctx context.Context, _ *fixture, s *Session) error {
			_, err := s.Notifications(ctx, dev)
			return err
		}, "cannot list its notifications", "Open the notification shade", dev + " cannot list notifications"},
		{"phone_files", sdk.CapFiles, func(ctx context.Context, _ *fixture, s *Session) error {
			_, err := s.Files(ctx, dev, FilesRequest{Action: "list"}, nil)
			return err
		}, "cannot keep files in a Pinky folder", "Go on without files", dev + " has no Pinky folder"},
		{"phone_pinch", sdk.CapPinch, func(ctx context.Context, _ *fixture, s *Session) error {
			_, err := s.Act(ctx, dev, pinch("", 2000), nil)
			return err
		}, "cannot pinch", "Zoom with the app's own controls", "the driver of " + dev + " cannot pinch (it has no two-finger gestures); zoom with the app's own controls, such as a zoom button or a double tap"},
		{"phone_connect in the background", sdk.CapDisplays, func(ctx context.Context, f *fixture, _ *Session) error {
			_, err := f.session(t, "other").Connect(ctx, ConnectRequest{Device: "sim-ios-1", Task: "t", Background: true})
			return err
		}, "cannot make background displays", "Connect without background", "the driver of sim-ios-1 cannot make background displays: connect without background"},
	}
	says := []struct {
		name        string
		m           sdk.MissingCap
		want, avoid []string // in the answer beyond what/instead/plain; not in it
	}{
		{"a reason and a fix", sdk.MissingCap{Reason: "no scrcpy server found.", Fix: "install scrcpy 3.x"},
			[]string{": no scrcpy server found. The person can enable it: install scrcpy 3.x.", "tell the person how to enable it with phone_ask_person"}, nil},
		{"a reason alone", sdk.MissingCap{Reason: "Android 12 has none"},
			[]string{": Android 12 has none. "}, []string{"enable it", "phone_ask_person"}},
		{"nothing said", sdk.MissingCap{}, nil, nil},
	}
	for _, c := range calls {
		for _, say := range says {
			t.Run(c.name+"/"+say.name, func(t *testing.T) {
				ctx := context.Background()
				f := newFixture(t, Config{})
				s := f.connected(t)
				f.drv.lack(c.c, say.m)
				e := wantCode(t, c.name, c.call(ctx, f, s), CodeUnsupported)
				if say.m.Reason == "" && say.m.Fix == "" {
					if e.Message != c.plain {
						t.Errorf("got %q; want %q", e.Message, c.plain)
					}
					return
				}
				for _, w := range append([]string{c.what, c.instead}, say.want...) {
					if !strings.Contains(e.Message, w) {
						t.Errorf("got %q; want it to say %q", e.Message, w)
					}
				}
				for _, a := range say.avoid {
					if strings.Contains(e.Message, a) {
						t.Errorf("got %q; want it not to say %q", e.Message, a)
					}
				}
			})
		}
	}
}

func TestClause(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"install scrcpy 3.x.", "install scrcpy 3.x"},
		{"  two\nlines  . ", "two lines"},
		{"pinky ios add --video-listen", "pinky ios add --video-listen"},
		// A driver's (or a phone host's) text is another program's: its
		// control and bidirectional characters are shown, not obeyed.
		{"no video\x1b[2J\u202e", safetext.Line("no video\x1b[2J\u202e")},
	}
	for _, tt := range tests {
		if got := clause(tt.in); got != tt.want {
			t.Errorf("clause(%q): got %q; want %q", tt.in, got, tt.want)
		}
	}
	if got := clause("\x1b"); got == "\x1b" || !strings.Contains(got, `\`) {
		t.Errorf("clause of an escape character: %q; want it shown escaped", got)
	}
	if got := []rune(clause(strings.Repeat("x", 1000))); len(got) > maxDriverMessage {
		t.Errorf("a long reason: %d runes; want at most %d", len(got), maxDriverMessage)
	}
}
