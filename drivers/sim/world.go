package sim

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

//go:embed worlds/default.yaml
var defaultWorld []byte

// World is a parsed, checked world file: the phones a Driver simulates.
type World struct {
	Phones []*PhoneSpec `yaml:"phones"`
	Apps   []*AppSpec   `yaml:"apps"`
	// Faults are the world's fault knobs; PINKY_SIM_FAULTS can add to them.
	Faults Faults `yaml:"-"`
	// RawFaults is the faults: section as written.
	RawFaults map[string]any `yaml:"faults"`
}

// PhoneSpec describes one virtual phone.
type PhoneSpec struct {
	ID            string            `yaml:"id"`
	Name          string            `yaml:"name"`
	Model         string            `yaml:"model"`
	Manufacturer  string            `yaml:"manufacturer"`
	Platform      sdk.Platform      `yaml:"platform"`
	OSVersion     string            `yaml:"os_version"`
	Width         int               `yaml:"width"`
	Height        int               `yaml:"height"`
	Density       int               `yaml:"density"`
	PIN           string            `yaml:"pin"`
	Locked        bool              `yaml:"locked"`
	ScreenOff     bool              `yaml:"screen_off"`
	Clipboard     string            `yaml:"clipboard"`
	Files         map[string]string `yaml:"files"`
	Notifications []NotifySpec      `yaml:"notifications"`
	// Apps lists the keys of the world's apps installed here; empty means all.
	Apps []string `yaml:"apps"`
	// Dump makes a phone that shows only this captured screen.
	Dump string `yaml:"dump"`
	// Lacks are capabilities of the driver this phone does not serve, each
	// with the reason and fix it reports.
	Lacks []LackSpec `yaml:"lacks"`

	dump    *sdk.Screen
	dumpXML []byte // the dump's bytes when it is UI Automator XML
}

// AppSpec describes an app: its ids, its launcher icon, its state and screens.
type AppSpec struct {
	Key       string                 `yaml:"key"`
	ID        PerPlatform            `yaml:"id"`
	Label     string                 `yaml:"label"`
	Icon      string                 `yaml:"icon"`
	Version   string                 `yaml:"version"`
	System    bool                   `yaml:"system"`
	Start     string                 `yaml:"start"`
	URLScreen string                 `yaml:"url_screen"`
	Vars      map[string]string      `yaml:"vars"`
	Lists     map[string][]string    `yaml:"lists"`
	Screens   map[string]*ScreenSpec `yaml:"screens"`
	// Hidden leaves the app off the launcher, as a system app without a
	// launcher activity (the permission controller) is.
	Hidden bool `yaml:"hidden"`
	// Secure marks the app's windows with FLAG_SECURE, as banking and
	// streaming apps do: on Android, screenshots and video draw the app's
	// area black (the status bar, the keyboard and the shade still show),
	// the tree is read as usual, and dumpsys window lists SECURE among the
	// focused window's flags. iOS has no such flag for an app's screen, so
	// an iPhone draws the app as usual.
	Secure bool `yaml:"secure"`
}

// ScreenSpec is one screen of an app: an element tree, or a captured dump.
type ScreenSpec struct {
	Title    string         `yaml:"title"`
	Elements []*ElementSpec `yaml:"elements"`
	Dump     string         `yaml:"dump"`
	// Canvas says the app draws the screen itself, as a Flutter, canvas or
	// game app does: its elements are drawn and answer taps where they are
	// drawn, but the tree holds one full-screen View with no text and no
	// children.
	Canvas bool `yaml:"canvas"`
	// Orientation locks the phone's own screen while the screen is in
	// front, as an app's requested orientation does: "landscape" (a video
	// player's full screen) or "portrait"; empty follows the phone's
	// rotation.
	Orientation string `yaml:"orientation"`

	dump    *sdk.Screen
	dumpXML []byte // the dump's bytes when it is UI Automator XML
}

// ElementSpec is one element of a screen and what acting on it does.
type ElementSpec struct {
	Name               string         `yaml:"name"`
	Role               string         `yaml:"role"`
	Class              PerPlatform    `yaml:"class"`
	Text               string         `yaml:"text"`
	ContentDescription string         `yaml:"content_description"`
	ResourceID         PerPlatform    `yaml:"resource_id"`
	Hint               string         `yaml:"hint"`
	Value              string         `yaml:"value"`
	Bounds             []int          `yaml:"bounds"`
	Height             int            `yaml:"height"`
	Width              int            `yaml:"width"`
	Row                bool           `yaml:"row"`
	Dock               string         `yaml:"dock"`
	Fill               bool           `yaml:"fill"`
	Color              string         `yaml:"color"`
	Flags              []string       `yaml:"flags"`
	Repeat             int            `yaml:"repeat"`
	Each               string         `yaml:"each"`
	OnTap              []*Step        `yaml:"on_tap"`
	OnLongPress        []*Step        `yaml:"on_long_press"`
	OnSubmit           []*Step        `yaml:"on_submit"`
	Zoom               string         `yaml:"zoom"` // the variable holding its zoom in percent, which a pinch changes (100 to 500)
	Children           []*ElementSpec `yaml:"children"`
}

// Step is one thing a tap, submit or long press does. Exactly one field is set.
type Step struct {
	Go      string            `yaml:"go"`
	Back    bool              `yaml:"back"`
	Home    bool              `yaml:"home"`
	Launch  string            `yaml:"launch"`
	Dialog  string            `yaml:"dialog"`
	Dismiss bool              `yaml:"dismiss"`
	Set     map[string]string `yaml:"set"`
	Append  *AppendStep       `yaml:"append"`
	Notify  *NotifySpec       `yaml:"notify"`
	Animate *AnimateStep      `yaml:"animate"`
	Copy    string            `yaml:"copy"`
	Require string            `yaml:"require"`
}

// AppendStep adds a line to a list.
type AppendStep struct {
	List string `yaml:"list"`
	Text string `yaml:"text"`
}

// NotifySpec is a notification, posted at once or After a delay.
type NotifySpec struct {
	App   string        `yaml:"app"`
	Title string        `yaml:"title"`
	Text  string        `yaml:"text"`
	After time.Duration `yaml:"after"`
}

// AnimateStep shows a progress animation for Duration, then runs Then.
type AnimateStep struct {
	Duration time.Duration `yaml:"duration"`
	Label    string        `yaml:"label"`
	Then     []*Step       `yaml:"then"`
}

// PerPlatform is a string that may differ by platform: a plain scalar, or a
// mapping with the keys android and ios.
type PerPlatform struct {
	All, Android, IOS string
}

// UnmarshalYAML accepts a scalar or an {android, ios} mapping.
func (p *PerPlatform) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		p.All = n.Value
		return nil
	}
	var m struct {
		Android string `yaml:"android"`
		IOS     string `yaml:"ios"`
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a string or a mapping with android and ios", n.Line)
	}
	for i := 0; i < len(n.Content); i += 2 {
		if k := n.Content[i].Value; k != "android" && k != "ios" {
			return fmt.Errorf("line %d: key %q: want android or ios", n.Content[i].Line, k)
		}
	}
	if err := n.Decode(&m); err != nil {
		return err
	}
	p.Android, p.IOS = m.Android, m.IOS
	return nil
}

// For returns the value for platform pl.
func (p PerPlatform) For(pl sdk.Platform) string {
	switch {
	case pl == sdk.PlatformAndroid && p.Android != "":
		return p.Android
	case pl == sdk.PlatformIOS && p.IOS != "":
		return p.IOS
	}
	return p.All
}

// DefaultWorld returns the bundled world: an Android and an iOS phone with
// everyday apps.
func DefaultWorld() (*World, error) {
	return Parse(defaultWorld, "")
}

// Load reads and checks a world file; dumps it names are read relative to it.
func Load(path string) (*World, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w, err := Parse(data, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, nil
}

// Parse decodes and checks a world file. Unknown fields are errors; dumps
// are read relative to baseDir.
func Parse(data []byte, baseDir string) (*World, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var w World
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	if err := w.check(baseDir); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	return &w, nil
}

func (w *World) check(baseDir string) error {
	if err := w.Faults.setMap(w.RawFaults); err != nil {
		return fmt.Errorf("faults: %w", err)
	}
	if len(w.Phones) == 0 {
		return errors.New("no phones")
	}
	apps := map[string]*AppSpec{}
	for i, a := range w.Apps {
		if a.Key == "" {
			return fmt.Errorf("apps[%d]: key is required", i)
		}
		if apps[a.Key] != nil {
			return fmt.Errorf("apps[%d]: duplicate key %q", i, a.Key)
		}
		apps[a.Key] = a
		if err := a.check(w.Apps, baseDir); err != nil {
			return fmt.Errorf("app %q: %w", a.Key, err)
		}
	}
	ids := map[string]bool{}
	for i, p := range w.Phones {
		if err := p.check(w.Apps, baseDir); err != nil {
			return fmt.Errorf("phones[%d] (%q): %w", i, p.ID, err)
		}
		if ids[p.ID] {
			return fmt.Errorf("phones[%d]: duplicate id %q", i, p.ID)
		}
		ids[p.ID] = true
	}
	return nil
}

func (p *PhoneSpec) check(apps []*AppSpec, baseDir string) error {
	if !validID(p.ID) {
		return errors.New("id: want 1 to 128 of [A-Za-z0-9._:-]")
	}
	if p.Platform != sdk.PlatformAndroid && p.Platform != sdk.PlatformIOS {
		return fmt.Errorf("platform %q: want android or ios", p.Platform)
	}
	if err := checkLacks(p.Lacks); err != nil {
		return err
	}
	if p.Dump != "" {
		s, raw, err := readDump(baseDir, p.Dump)
		if err != nil {
			return err
		}
		p.dump, p.dumpXML = s, raw
		if p.Width == 0 {
			p.Width, p.Height = s.Width, s.Height
		}
	}
	if p.Width <= 0 || p.Height <= 0 {
		return fmt.Errorf("size %dx%d: want width and height > 0", p.Width, p.Height)
	}
	if p.Density == 0 {
		p.Density = 160
	}
	if strings.Trim(p.PIN, "0123456789") != "" {
		return fmt.Errorf("pin %q: want digits only", p.PIN)
	}
	if p.Locked && p.PIN == "" {
		return errors.New("locked: a locked phone needs a pin")
	}
	for _, k := range p.Apps {
		if findApp(apps, k) == nil {
			return fmt.Errorf("apps: unknown app %q", k)
		}
	}
	for name := range p.Files {
		if path.IsAbs(name) || slices.Contains(strings.Split(name, "/"), "..") {
			return fmt.Errorf("files: %q: want a path inside the Pinky folder", name)
		}
	}
	for i, n := range p.Notifications {
		if n.App != "" && findApp(apps, n.App) == nil {
			return fmt.Errorf("notifications[%d]: unknown app %q", i, n.App)
		}
	}
	return nil
}

func (a *AppSpec) check(all []*AppSpec, baseDir string) error {
	if a.ID.All == "" && (a.ID.Android == "" || a.ID.IOS == "") {
		return errors.New("id is required (a string, or both android and ios)")
	}
	if a.Label == "" {
		return errors.New("label is required")
	}
	if _, err := parseColor(a.Icon); err != nil {
		return fmt.Errorf("icon: %w", err)
	}
	if a.Screens[a.Start] == nil {
		return fmt.Errorf("start: unknown screen %q", a.Start)
	}
	if a.URLScreen != "" && a.Screens[a.URLScreen] == nil {
		return fmt.Errorf("url_screen: unknown screen %q", a.URLScreen)
	}
	for name, s := range a.Screens {
		if s.Dump != "" {
			if len(s.Elements) > 0 {
				return fmt.Errorf("screen %q: dump and elements exclude each other", name)
			}
			if s.Canvas {
				return fmt.Errorf("screen %q: dump and canvas exclude each other", name)
			}
			d, raw, err := readDump(baseDir, s.Dump)
			if err != nil {
				return fmt.Errorf("screen %q: %w", name, err)
			}
			s.dump, s.dumpXML = d, raw
		}
		if s.Orientation != "" && s.Orientation != "landscape" && s.Orientation != "portrait" {
			return fmt.Errorf("screen %q: orientation %q: want landscape, portrait or none", name, s.Orientation)
		}
		c := checker{app: a, all: all}
		for i, e := range s.Elements {
			if err := c.element(e); err != nil {
				return fmt.Errorf("screen %q: elements[%d]: %w", name, i, err)
			}
		}
	}
	return nil
}

// checker checks element trees and the screens and apps their steps name.
type checker struct {
	app *AppSpec
	all []*AppSpec
}

var roles = map[string]bool{
	"": true, "group": true, "text": true, "button": true, "field": true, "password": true,
	"image": true, "list": true, "item": true, "switch": true, "web": true,
}

var flagNames = map[string]bool{
	"clickable": true, "long_clickable": true, "focusable": true, "focused": true, "editable": true,
	"password": true, "scrollable": true, "checkable": true, "checked": true, "selected": true,
	"disabled": true, "invisible": true,
}

func (c checker) element(e *ElementSpec) error {
	where := func(err error) error {
		if e.Name != "" {
			return fmt.Errorf("%q: %w", e.Name, err)
		}
		return err
	}
	if !roles[e.Role] {
		return where(fmt.Errorf("role %q: want one of group, text, button, field, password, image, list, item, switch, web", e.Role))
	}
	for _, f := range e.Flags {
		if !flagNames[f] {
			return where(fmt.Errorf("flag %q unknown", f))
		}
	}
	if len(e.Bounds) != 0 && len(e.Bounds) != 4 {
		return where(errors.New("bounds: want [left, top, right, bottom]"))
	}
	if len(e.Bounds) == 4 && (e.Bounds[2] <= e.Bounds[0] || e.Bounds[3] <= e.Bounds[1]) {
		return where(fmt.Errorf("bounds %v: right and bottom must exceed left and top", e.Bounds))
	}
	if e.Dock != "" && e.Dock != "bottom" {
		return where(fmt.Errorf("dock %q: want bottom", e.Dock))
	}
	if e.Height < 0 || e.Width < 0 || e.Repeat < 0 {
		return where(errors.New("height, width and repeat must not be negative"))
	}
	if (e.Role == "field" || e.Role == "password") && e.Name == "" {
		return errors.New("a field needs a name (the variable it edits)")
	}
	if _, err := parseColor(e.Color); err != nil {
		return where(fmt.Errorf("color: %w", err))
	}
	for what, steps := range map[string][]*Step{"on_tap": e.OnTap, "on_long_press": e.OnLongPress, "on_submit": e.OnSubmit} {
		if err := c.steps(steps); err != nil {
			return where(fmt.Errorf("%s: %w", what, err))
		}
	}
	for i, ch := range e.Children {
		if err := c.element(ch); err != nil {
			return where(fmt.Errorf("children[%d]: %w", i, err))
		}
	}
	return nil
}

func (c checker) steps(steps []*Step) error {
	for i, s := range steps {
		if err := c.step(s); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return nil
}

func (c checker) step(s *Step) error {
	set := 0
	for _, ok := range []bool{s.Go != "", s.Back, s.Home, s.Launch != "", s.Dialog != "", s.Dismiss,
		s.Set != nil, s.Append != nil, s.Notify != nil, s.Animate != nil, s.Copy != "", s.Require != ""} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return fmt.Errorf("a step has exactly one of go, back, home, launch, dialog, dismiss, set, append, notify, animate, copy, require; got %d", set)
	}
	switch {
	case s.Go != "":
		if _, _, ok := c.screen(s.Go); !ok {
			return fmt.Errorf("go: unknown screen %q", s.Go)
		}
	case s.Dialog != "":
		if _, _, ok := c.screen(s.Dialog); !ok {
			return fmt.Errorf("dialog: unknown screen %q", s.Dialog)
		}
	case s.Launch != "":
		if findApp(c.all, s.Launch) == nil {
			return fmt.Errorf("launch: unknown app %q", s.Launch)
		}
	case s.Append != nil && s.Append.List == "":
		return errors.New("append: list is required")
	case s.Notify != nil && s.Notify.App != "" && findApp(c.all, s.Notify.App) == nil:
		return fmt.Errorf("notify: unknown app %q", s.Notify.App)
	case s.Animate != nil:
		if s.Animate.Duration <= 0 || s.Animate.Duration > 5*time.Second {
			return fmt.Errorf("animate: duration %v: want 1ms to 5s", s.Animate.Duration)
		}
		return c.steps(s.Animate.Then)
	}
	return nil
}

// screen resolves "name" (this app) or "app/name".
func (c checker) screen(ref string) (*AppSpec, string, bool) {
	app, name := c.app, ref
	if k, n, ok := strings.Cut(ref, "/"); ok {
		app, name = findApp(c.all, k), n
	}
	return app, name, app != nil && app.Screens[name] != nil
}

// findApp finds an app by key or by any of its ids.
func findApp(apps []*AppSpec, ref string) *AppSpec {
	for _, a := range apps {
		if a.Key == ref || a.ID.All == ref || a.ID.Android == ref || a.ID.IOS == ref {
			return a
		}
	}
	return nil
}

// readDump parses a captured screen; it also returns the file's bytes when
// they are UI Automator XML, for the adb face's uiautomator dump.
func readDump(baseDir, name string) (*sdk.Screen, []byte, error) {
	data, err := os.ReadFile(filepath.Join(baseDir, name))
	if err != nil {
		return nil, nil, fmt.Errorf("dump: %w", err)
	}
	var s *sdk.Screen
	var raw []byte
	if strings.HasSuffix(name, ".json") || bytes.Contains(data[:min(len(data), 512)], []byte("XCUIElementType")) {
		s, err = dump.ParseWDA(data)
	} else {
		s, err = dump.ParseUIAutomator(bytes.NewReader(data))
		raw = data
	}
	if err != nil {
		return nil, nil, fmt.Errorf("dump %s: %w", name, err)
	}
	return s, raw, nil
}

func validID(id string) bool {
	if len(id) == 0 || len(id) > 128 {
		return false
	}
	return strings.Trim(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") == ""
}
