package cli_test

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/dbustest"
)

// TestApprovalNotifiesTheDesktop: an approval that opens reaches the
// person's desktop through the real session bus (dbus-daemon) as a
// freedesktop notification with the card's sentence; with --notify off,
// none does.
func TestApprovalNotifiesTheDesktop(t *testing.T) {
	for _, mode := range []string{"on", "off"} {
		t.Run(mode, func(t *testing.T) {
			bus := dbustest.Bus(t)
			srv := dbustest.Serve(t, bus)
			e := newEnv(t)
			e.Extra = append(e.Extra, "DBUS_SESSION_BUS_ADDRESS="+bus)
			e.Daemon("--sim", "--notify", mode, "--approval-wait", "1s")
			e.Unlock("sim-android-1")
			h := e.StdioHost()
			h.Initialize()
			with := e2e.OnDevice("sim-android-1")
			h.OK("phone_connect", with("task", "reply to Ben"), "")
			h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
			h.OK("phone_tap", with("text", "Ben Okafor"), "")
			h.OK("phone_type", with("field", "Text message", "text", "See you Friday"), "")
			h.Fails("phone_tap", with("text", "Send"), "approval_pending")
			var cards []api.Card
			e.JSON(&cards, "approvals")
			if len(cards) != 1 {
				t.Fatalf("cards %+v; want the pending one", cards)
			}
			if mode == "off" {
				// The card is there; had a note been sent, it was sent before
				// the call answered approval_pending.
				if n := srv.Notes(); len(n) != 0 {
					t.Errorf("--notify off sent %+v", n)
				}
				return
			}
			testkit.WaitUntil(t, "the desktop notification", func() bool { return len(srv.Notes()) > 0 })
			n := srv.Notes()[0]
			if n.App != "Pinky" || !strings.Contains(n.Summary, "e2e-agent") || !strings.Contains(n.Body, cards[0].Summary) || !strings.Contains(n.Body, "sim-android-1") {
				t.Errorf("notification %+v; want Pinky, the agent, the card's sentence %q and the phone", n, cards[0].Summary)
			}
		})
	}
}
