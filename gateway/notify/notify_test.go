package notify

import (
	"context"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/dbustest"
)

// TestDBus sends a note through a real session bus to a stand-in
// notification service, and fails cleanly when none is there.
func TestDBus(t *testing.T) {
	addr := dbustest.Bus(t)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", addr)
	var log testkit.Buffer
	n := &logged{n: &DBus{}, log: log.Logger()}
	if err := n.Notify(context.Background(), Note{Title: "t", Body: "b"}); err == nil {
		t.Errorf("a bus with no notification service: no error")
	}
	if !strings.Contains(log.String(), "desktop notifications do not reach you") {
		t.Errorf("log %q; want it to say notifications do not reach the person", log.String())
	}
	srv := dbustest.Serve(t, addr)
	if err := n.Notify(context.Background(), Note{Title: "Pinky: agent asks", Body: `Send "hi" to <a href="http://x">Ben</a> & co`}); err != nil {
		t.Fatal(err)
	}
	got := srv.Notes()
	// The body's markup is escaped: no link an agent or a screen wrote.
	if len(got) != 1 || got[0].App != "Pinky" || got[0].Summary != "Pinky: agent asks" || got[0].Body != `Send "hi" to &lt;a href="http://x"&gt;Ben&lt;/a&gt; &amp; co` {
		t.Fatalf("notes %+v", got)
	}
	if u, ok := got[0].Hints["urgency"].Value().(byte); !ok || u != 2 {
		t.Errorf("urgency hint %v; want 2 (critical: the person is waited for)", got[0].Hints["urgency"])
	}
	if !strings.Contains(log.String(), "reach you again") {
		t.Errorf("log %q; want it to say notifications work again", log.String())
	}
}
