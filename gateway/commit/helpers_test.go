package commit

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

const android = "sim-android-1"

// fixtureDir holds real captured dumps (see its SOURCES.md).
const fixtureDir = "../../drivers/dump/testdata"

// phone is a virtual phone of the default world driven by a test.
type phone struct {
	t testing.TB
	d *sim.Driver
}

func newPhone(t testing.TB) *phone {
	t.Helper()
	w, err := sim.DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	d := sim.New(w)
	t.Cleanup(func() { d.Close() })
	if err := d.Unlock(context.Background(), android, "1234"); err != nil {
		t.Fatal(err)
	}
	return &phone{t: t, d: d}
}

func (p *phone) screen() *sdk.Screen {
	p.t.Helper()
	s, err := p.d.Screen(context.Background(), android, 0)
	if err != nil {
		p.t.Fatalf("Screen: %v", err)
	}
	return s
}

func (p *phone) act(a sdk.Action) {
	p.t.Helper()
	if _, err := p.d.Act(context.Background(), android, a); err != nil {
		p.t.Fatalf("Act(%+v): %v", a, err)
	}
}

// tap touches the element whose text, description or short resource id is what.
func (p *phone) tap(what string) {
	p.t.Helper()
	v := screen.NewModel().Read(p.screen())
	n, ok := find(v, what)
	if !ok {
		p.t.Fatalf("tap %q: not on screen", what)
	}
	p.act(sdk.Action{Kind: sdk.ActTap, Point: n.Center()})
}

// find returns the node of v whose label, hint or resource id is what.
func find(v *screen.View, what string) (*screen.Node, bool) {
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Label == what || n.Hint == what || n.ShortID == what || n.Element.ContentDescription == what ||
			filepath.Base(n.Element.ResourceID) == what || hasSuffixID(n.Element.ResourceID, what) {
			return n, true
		}
	}
	return nil, false
}

func hasSuffixID(id, what string) bool {
	return len(id) > len(what)+4 && id[len(id)-len(what)-4:] == ":id/"+what
}

// fixture reads a captured UIAutomator dump into a View.
func fixture(t testing.TB, name string) *screen.View {
	t.Helper()
	f, err := os.Open(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := dump.ParseUIAutomator(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return screen.NewModel().Read(s)
}

// threadView is the virtual Messages app with a conversation open and the
// reply field focused.
func threadView(t testing.TB) *screen.View {
	p := newPhone(t)
	p.act(sdk.Action{Kind: sdk.ActLaunch, AppID: "messages"})
	p.tap("Ana Silva")
	p.tap("compose_message_text")
	return screen.NewModel().Read(p.screen())
}
