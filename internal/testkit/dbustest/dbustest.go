// Package dbustest runs a private D-Bus session bus for a test (the real
// dbus-daemon) and a stand-in notification service on it, which records
// every notification it is sent.
package dbustest

import (
	"bufio"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/godbus/dbus/v5"

	"github.com/pinky-gateway/pinky/internal/testdep"
)

// Bus starts dbus-daemon --session and returns its address (for
// DBUS_SESSION_BUS_ADDRESS); it stops when the test ends.
func Bus(t testing.TB) string {
	t.Helper()
	path := testdep.Need(t, "dbus-daemon")
	c := exec.Command(path, "--session", "--nofork", "--print-address=1")
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon printed no address: %v", err)
	}
	return strings.TrimSpace(addr)
}

// Note is a notification the stand-in received.
type Note struct {
	App, Summary, Body string
	Hints              map[string]dbus.Variant
}

// Notifications is a stand-in org.freedesktop.Notifications.
type Notifications struct {
	mu    sync.Mutex
	notes []Note
}

// Notify is the service's method, as the specification names it.
func (n *Notifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notes = append(n.notes, Note{App: app, Summary: summary, Body: body, Hints: hints})
	return uint32(len(n.notes)), nil
}

// Notes returns what it received so far.
func (n *Notifications) Notes() []Note {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]Note(nil), n.notes...)
}

// Serve puts a stand-in notification service on the bus at addr.
func Serve(t testing.TB, addr string) *Notifications {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	n := &Notifications{}
	if err := conn.Export(n, "/org/freedesktop/Notifications", "org.freedesktop.Notifications"); err != nil {
		t.Fatal(err)
	}
	reply, err := conn.RequestName("org.freedesktop.Notifications", dbus.NameFlagDoNotQueue)
	if err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("owning org.freedesktop.Notifications: %v, %v", reply, err)
	}
	return n
}
