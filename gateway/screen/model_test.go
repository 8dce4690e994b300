package screen

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

func TestRefsStableAcrossReads(t *testing.T) {
	tests := []struct {
		name  string
		id    string
		setup func(p *simtest.Phone)
	}{
		{"lock screen", android, func(p *simtest.Phone) {}},
		{"launcher", android, func(p *simtest.Phone) { p.Unlock() }},
		{"messages", ios, func(p *simtest.Phone) { p.Unlock(); p.Launch("messages") }},
		{"thread with keyboard", android, func(p *simtest.Phone) {
			p.Unlock()
			p.Launch("messages")
			p.Tap("Ana Silva")
			p.Tap("compose_message_text")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := simtest.NewPhone(t, tt.id)
			tt.setup(p)
			m := NewModel()
			first := m.Read(p.Screen())
			second := m.Read(p.Screen())
			if len(first.Nodes) == 0 {
				t.Fatal("got no nodes; want some")
			}
			if diff := cmp.Diff(first.Text(), second.Text()); diff != "" {
				t.Errorf("second read differs (-first +second):\n%s", diff)
			}
			if d := Diff(first, second); !d.Empty() {
				t.Errorf("Diff of two equal reads: got %q; want empty", d.Text())
			}
		})
	}
}

func TestRefsAfterScroll(t *testing.T) {
	p := simtest.NewPhone(t, android)
	p.Unlock()
	p.Launch("settings")
	m := NewModel()
	before := m.Read(p.Screen())
	p.Act(sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown})
	after := m.Read(p.Screen())

	maxBefore := 0
	for _, n := range before.Nodes {
		maxBefore = max(maxBefore, n.Ref)
	}
	old := refs(before)
	kept, added := 0, 0
	for key, ref := range refs(after) {
		if was, ok := old[key]; ok {
			kept++
			if ref != was {
				t.Errorf("%s: got ref %d after the scroll; want %d as before", key, ref, was)
			}
			continue
		}
		added++
		if ref <= maxBefore {
			t.Errorf("%s: got ref %d; want a new ref above %d", key, ref, maxBefore)
		}
	}
	if kept < 4 || added < 4 {
		t.Errorf("got %d kept and %d new nodes; want at least 4 of each:\n%s\n%s", kept, added, before.Text(), after.Text())
	}
	// Scrolling back shows the first items again under their old refs.
	p.Act(sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollUp})
	back := m.Read(p.Screen())
	if got, want := node(t, back, "Wi-Fi").Ref, node(t, before, "Wi-Fi").Ref; got != want {
		t.Errorf("Wi-Fi after scrolling back: got ref %d; want %d", got, want)
	}
}

func TestRefAfterTyping(t *testing.T) {
	for _, id := range []string{android, ios} {
		t.Run(id, func(t *testing.T) {
			p := simtest.NewPhone(t, id)
			p.Unlock()
			p.Launch("messages")
			p.Tap("Ben Okafor")
			p.Tap("compose_message_text")
			m := NewModel()
			before := node(t, m.Read(p.Screen()), "Text message")
			p.Type("See you at 8")
			after := m.Read(p.Screen())
			got := node(t, after, "See you at 8")
			if got.Ref != before.Ref {
				t.Errorf("field after typing: got ref %d; want %d", got.Ref, before.Ref)
			}
			if got.Label != "See you at 8" || got.Role != RoleField {
				t.Errorf("field after typing: got %s; want the typed text", got.line())
			}
		})
	}
}

// TestRefsNeverReused walks through several screens and checks that every
// ref is either one seen before for the same kind of element, or new and
// larger than every ref handed out so far.
func TestRefsNeverReused(t *testing.T) {
	p := simtest.NewPhone(t, android)
	m := NewModel()
	seen := map[int]Role{}
	top := 0
	check := func(step string) {
		t.Helper()
		v := m.Read(p.Screen())
		inView := map[int]bool{}
		newTop := top
		for _, n := range v.Nodes {
			if inView[n.Ref] {
				t.Errorf("%s: ref %d twice in one view", step, n.Ref)
			}
			inView[n.Ref] = true
			if n.Ref <= 0 {
				t.Errorf("%s: got ref %d; want positive", step, n.Ref)
			}
			if role, ok := seen[n.Ref]; ok {
				if role != n.Role {
					t.Errorf("%s: ref %d was a %s, now a %s", step, n.Ref, role, n.Role)
				}
				continue
			}
			if n.Ref <= top {
				t.Errorf("%s: new node %s got an old ref (at most %d)", step, n.line(), top)
			}
			seen[n.Ref] = n.Role
			newTop = max(newTop, n.Ref)
		}
		top = newTop
	}
	check("locked")
	p.Unlock()
	check("launcher")
	for _, app := range []string{"messages", "mail", "settings", "messages"} {
		p.Launch(app)
		check(app)
		p.Key(sdk.KeyHome)
		check("home")
	}
	p.Launch("messages")
	p.Tap("Mum")
	check("thread")
	p.Key(sdk.KeyBack)
	check("back")
}

func TestReadConcurrently(t *testing.T) {
	p := simtest.NewPhone(t, android)
	p.Unlock()
	p.Launch("messages")
	s := p.Screen()
	m := NewModel()
	want := m.Read(s).Text()
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if got := m.Read(s).Text(); got != want {
					errs <- fmt.Sprintf("goroutine %d: got %q; want %q", i, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func TestNilAndOffScreens(t *testing.T) {
	m := NewModel()
	tests := []struct {
		name string
		s    *sdk.Screen
		want string
	}{
		{"nil", nil, "screen off\n"},
		{"off and locked", &sdk.Screen{LockState: sdk.LockLocked, Width: 10, Height: 20}, "screen off · locked\n"},
		{"on, empty", &sdk.Screen{ScreenOn: true, App: sdk.App{ID: "a.b"}, Width: 10, Height: 20}, "app a.b · 10x20\n(nothing on screen)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Read(tt.s).Text(); got != tt.want {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestRoles(t *testing.T) {
	tests := []struct {
		e    sdk.Element
		want Role
	}{
		{sdk.Element{Class: "android.widget.Button"}, RoleButton},
		{sdk.Element{Class: "android.widget.TextView", Text: "x"}, RoleText},
		{sdk.Element{Class: "android.widget.TextView", Text: "x", Clickable: true}, RoleButton},
		{sdk.Element{Class: "android.widget.EditText", Editable: true}, RoleField},
		{sdk.Element{Class: "android.widget.EditText", Editable: true, Password: true}, RolePassword},
		{sdk.Element{Class: "android.widget.ImageView"}, RoleImage},
		{sdk.Element{Class: "android.widget.Switch", Checkable: true}, RoleSwitch},
		{sdk.Element{Class: "android.widget.CheckBox", Checkable: true}, RoleCheckbox},
		{sdk.Element{Class: "androidx.recyclerview.widget.RecyclerView", Scrollable: true}, RoleList},
		{sdk.Element{Class: "android.widget.ScrollView"}, RoleList},
		{sdk.Element{Class: "android.webkit.WebView"}, RoleWeb},
		{sdk.Element{Class: "android.widget.FrameLayout", Clickable: true}, RoleButton},
		{sdk.Element{Class: "android.view.View", ContentDescription: "x"}, RoleText},
		{sdk.Element{Class: "android.view.View", Editable: true}, RoleField},
		{sdk.Element{Class: "android.widget.LinearLayout"}, RoleGroup},
		{sdk.Element{Class: "XCUIElementTypeButton"}, RoleButton},
		{sdk.Element{Class: "XCUIElementTypeStaticText"}, RoleText},
		{sdk.Element{Class: "XCUIElementTypeTextField", Editable: true}, RoleField},
		{sdk.Element{Class: "XCUIElementTypeSecureTextField", Editable: true, Password: true}, RolePassword},
		{sdk.Element{Class: "XCUIElementTypeSwitch", Checkable: true}, RoleSwitch},
		{sdk.Element{Class: "XCUIElementTypeCell"}, RoleItem},
		{sdk.Element{Class: "XCUIElementTypeTable"}, RoleList},
		{sdk.Element{Class: "XCUIElementTypeCollectionView"}, RoleList},
		{sdk.Element{Class: "XCUIElementTypeLink"}, RoleLink},
		{sdk.Element{Class: "XCUIElementTypeWebView"}, RoleWeb},
		{sdk.Element{Class: "XCUIElementTypeAlert"}, RoleDialog},
		{sdk.Element{Class: "XCUIElementTypeOther", Clickable: true}, RoleButton},
		{sdk.Element{Class: "UIAButton"}, RoleButton},
	}
	for _, tt := range tests {
		t.Run(tt.e.Class, func(t *testing.T) {
			if got := roleOf(&tt.e, false); got != tt.want {
				t.Errorf("roleOf(%+v): got %v; want %v", tt.e, got, tt.want)
			}
		})
	}
}

func TestMemoryBounded(t *testing.T) {
	m := NewModel()
	for i := range maxMemory/10 + 50 {
		s := &sdk.Screen{ScreenOn: true, App: sdk.App{ID: "app"}, Width: 100, Height: 1000}
		for j := 1; j <= 10; j++ {
			s.Elements = append(s.Elements, el(j, 0, "android.widget.Button", sdk.Rect{Top: j * 50, Right: 100, Bottom: j*50 + 40},
				func(e *sdk.Element) { e.Text, e.Clickable = fmt.Sprintf("b%d-%d", i, j), true }))
		}
		m.Read(s)
	}
	if got := len(m.mem); got > maxMemory {
		t.Errorf("memory: got %d entries; want at most %d", got, maxMemory)
	}
	if got, want := m.next, (maxMemory/10+50)*10; got != want {
		t.Errorf("refs handed out: got %d; want %d", got, want)
	}
}
