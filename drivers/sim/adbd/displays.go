package adbd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Background displays: on a real phone a scrcpy server started with
// new_display makes a virtual display, and the system lists it (Android 13's
// `uiautomator dump --windows` dumps its windows) until the server ends. The
// face's scrcpy server makes it through CreateDisplay, which asks the
// driver's sdk.Displayer and remembers the display for the dump.

// windowsLevel is the API level from which uiautomator knows --windows
// (Android 13).
const windowsLevel = 33

var _ sdk.Displayer = (*Device)(nil)

// CreateDisplay makes a background display on the phone with the driver's
// sdk.Displayer and lists it in `uiautomator dump --windows` until
// RemoveDisplay. deviceID must be the phone's (Device.ID).
func (d *Device) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	disp, err := d.displayer(deviceID)
	if err != nil {
		return 0, err
	}
	id, err := disp.CreateDisplay(ctx, d.id, width, height, densityDPI)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	d.displays[id] = true
	d.mu.Unlock()
	return id, nil
}

// RemoveDisplay removes a display made by CreateDisplay.
func (d *Device) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	disp, err := d.displayer(deviceID)
	if err != nil {
		return err
	}
	d.mu.Lock()
	delete(d.displays, displayID)
	d.mu.Unlock()
	return disp.RemoveDisplay(ctx, d.id, displayID)
}

// Displays lists the background displays made by CreateDisplay and not
// removed, in order.
func (d *Device) Displays() []int {
	d.mu.Lock()
	defer d.mu.Unlock()
	var ids []int
	for id := range d.displays {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (d *Device) displayer(deviceID string) (sdk.Displayer, error) {
	if deviceID != d.id {
		return nil, fmt.Errorf("adbd: device %q: this face serves %q: %w", deviceID, d.id, sdk.ErrDeviceNotFound)
	}
	disp, ok := d.cfg.Driver.(sdk.Displayer)
	if !ok {
		return nil, fmt.Errorf("adbd: the driver makes no displays: %w", sdk.ErrUnsupported)
	}
	return disp, nil
}

// sdkLevel is the phone's API level.
func (d *Device) sdkLevel() int {
	n, _ := strconv.Atoi(d.prop("ro.build.version.sdk"))
	return n
}

// windowsXML is what Android 13's `uiautomator dump --windows` writes
// (AccessibilityNodeInfoDumper.dumpWindowsToFile): <displays>, a <display>
// for display 0 and each background display that has windows, and in each
// its windows top first, every window with its <hierarchy>.
func (d *Device) windowsXML(ctx context.Context) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><displays>")
	wrote := false
	for _, id := range append([]int{0}, d.Displays()...) {
		s, err := d.cfg.Driver.Screen(ctx, d.id, id)
		switch {
		case err != nil && id != 0 && errors.Is(err, sdk.ErrInvalidArgument):
			continue // removed behind the face's back
		case err != nil:
			return nil, err
		}
		wrote = writeDisplay(&b, id, s) || wrote
	}
	if !wrote {
		// An empty element, as Android's XmlSerializer writes it.
		return []byte("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><displays />"), nil
	}
	b.WriteString("</displays>")
	return b.Bytes(), nil
}

// simWindow is one window of a sim screen: a root element and its type.
type simWindow struct {
	root   int // index in s.Elements
	typ    string
	pkg    string
	bounds sdk.Rect
	nodes  bool // the window has a hierarchy (the keyboard has none)
}

// writeDisplay writes one <display> of the windows document, and reports
// whether it had windows (a display without any is left out, as
// uiautomator does). Each visible root of s is a window: the system UI's
// are TYPE_SYSTEM, the others the app's (TYPE_APPLICATION, with the app's
// package), and a shown keyboard is a TYPE_INPUT_METHOD window.
func writeDisplay(b *bytes.Buffer, id int, s *sdk.Screen) bool {
	if !s.ScreenOn {
		return false
	}
	children := map[int][]int{}
	var wins []simWindow
	for i, e := range s.Elements {
		if e.ParentID != 0 {
			children[e.ParentID] = append(children[e.ParentID], i)
		}
	}
	for i, e := range s.Elements {
		if e.ParentID != 0 || !e.Visible {
			continue
		}
		w := simWindow{root: i, typ: dump.WindowApplication, pkg: s.App.ID, bounds: e.Bounds, nodes: true}
		switch pkg := windowPackage(s, i, children); {
		case pkg == "com.android.systemui" && s.App.ID != pkg:
			w.typ, w.pkg = dump.WindowSystem, pkg
		case strings.Contains(pkg, "inputmethod"):
			w.typ, w.pkg = dump.WindowInputMethod, pkg
		case otherApp(s, pkg):
			// Another app's activity over the app (the permission
			// controller's dialog): an application window of its package,
			// the topmost, so the active and focused one.
			w.pkg = pkg
		case w.pkg == "":
			w.pkg = pkg
		}
		wins = append(wins, w)
	}
	if s.KeyboardShown && !slices.ContainsFunc(wins, func(w simWindow) bool { return w.typ == dump.WindowInputMethod }) {
		wins = append(wins, simWindow{root: -1, typ: dump.WindowInputMethod, pkg: "com.google.android.inputmethod.latin",
			bounds: sdk.Rect{Top: s.Height * 3 / 5, Right: s.Width, Bottom: s.Height}})
	}
	if len(wins) == 0 {
		return false
	}
	// The app's topmost window is the active and focused one.
	front := -1
	for i, w := range wins {
		if w.typ == dump.WindowApplication {
			front = i
		}
	}
	rot := map[sdk.Orientation]int{sdk.OrientationLandscape: 1, sdk.OrientationPortraitUpsideDown: 2, sdk.OrientationLandscapeRight: 3}[s.Orientation]
	fmt.Fprintf(b, `<display id="%d">`, id)
	// Top first, as AccessibilityWindowManager lists them; the topmost
	// window has the highest layer.
	for n := range wins {
		i := len(wins) - 1 - n
		w := wins[i]
		title := w.pkg
		if w.typ == dump.WindowInputMethod {
			title = "Gboard"
		}
		fmt.Fprintf(b, `<window index="%d" title="%s" bounds="[%d,%d][%d,%d]" active="%t" focused="%t" accessibility-focused="false" id="%d" layer="%d" type="%s">`,
			n, esc(title), w.bounds.Left, w.bounds.Top, w.bounds.Right, w.bounds.Bottom, i == front, i == front, 1000*id+i+1, i, w.typ)
		if w.nodes {
			fmt.Fprintf(b, `<hierarchy rotation="%d">`, rot)
			nw := &nodeWriter{b: b, s: s, children: children}
			nw.walk(w.root, 0, w.pkg)
			b.WriteString("</hierarchy>")
		}
		b.WriteString("</window>")
	}
	b.WriteString("</display>")
	return true
}
