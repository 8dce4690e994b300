package adbd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// sdkLevels maps Android releases to API levels.
var sdkLevels = map[string]string{
	"16": "36", "15": "35", "14": "34", "13": "33", "12L": "32", "12": "31", "11": "30", "10": "29",
	"9": "28", "8.1": "27", "8": "26", "8.0": "26", "7.1": "25", "7": "24", "7.0": "24",
}

// releaseOf is the Android release of an API level, "" when unknown.
func releaseOf(level int) string {
	best := ""
	for r, l := range sdkLevels {
		// The shortest spelling: "8" rather than "8.0", "12" for 31.
		if l == strconv.Itoa(level) && (best == "" || len(r) < len(best) || len(r) == len(best) && r < best) {
			best = r
		}
	}
	return best
}

func sdkLevel(release string) string {
	if v, ok := sdkLevels[release]; ok {
		return v
	}
	major, _, _ := strings.Cut(release, ".")
	if v, ok := sdkLevels[major]; ok {
		return v
	}
	return "35"
}

// slug makes a product name: lowercase letters, digits and underscores.
func slug(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '_'
	}, s)
	if s == "" {
		return "pinky_sim"
	}
	return s
}

// props are the phone's static system properties; they never call the
// driver, so that the handshake cannot wait on a slow or hung one.
func (d *Device) props() map[string]string {
	release := d.info.OSVersion
	if release == "" {
		release = "15"
	}
	level := sdkLevel(release)
	if d.cfg.SDKLevel > 0 {
		level = strconv.Itoa(d.cfg.SDKLevel)
		if r := releaseOf(d.cfg.SDKLevel); r != "" {
			release = r
		}
	}
	name := slug(d.info.Model)
	manufacturer := d.info.Manufacturer
	if manufacturer == "" {
		manufacturer = "Pinky"
	}
	brand := manufacturer
	board, platform := name, name
	if m, ok := models[d.info.Model]; ok {
		// A real phone's names are its code name ("shiba" for a Pixel 8).
		name, board, platform = m.device, m.device, m.platform
		brand = m.brand
	}
	model := d.info.Model
	if model == "" {
		model = "Pinky Sim"
	}
	secure := "0"
	if d.cfg.Unauthorized {
		secure = "1"
	}
	p := map[string]string{
		"ro.build.version.release":             release,
		"ro.build.version.release_or_codename": release,
		"ro.build.version.sdk":                 level,
		"ro.build.version.security_patch":      "2025-01-05",
		"ro.build.version.incremental":         "1",
		"ro.build.id":                          "PINKY.SIM",
		"ro.build.display.id":                  "PINKY.SIM",
		"ro.build.type":                        "user",
		"ro.build.tags":                        "release-keys",
		"ro.build.fingerprint":                 brand + "/" + name + "/" + name + ":" + release + "/PINKY.SIM/1:user/release-keys",
		"ro.product.model":                     model,
		"ro.product.brand":                     brand,
		"ro.product.manufacturer":              manufacturer,
		"ro.product.name":                      name,
		"ro.product.device":                    name,
		"ro.product.board":                     board,
		"ro.board.platform":                    platform,
		"ro.hardware":                          board,
		"ro.build.version.codename":            "REL",
		"ro.build.version.preview_sdk":         "0",
		"ro.build.characteristics":             "nosdcard",
		"ro.product.first_api_level":           level,
		"ro.opengles.version":                  "196610",
		"ro.product.cpu.abi":                   "arm64-v8a",
		"ro.product.cpu.abilist":               "arm64-v8a",
		"ro.serialno":                          d.cfg.Serial,
		"ro.boot.serialno":                     d.cfg.Serial,
		"ro.secure":                            "1",
		"ro.adb.secure":                        secure,
		"ro.debuggable":                        "0",
		"sys.boot_completed":                   "1",
		"dev.bootcomplete":                     "1",
		"init.svc.bootanim":                    "stopped",
		"persist.sys.locale":                   "en-US",
		"ro.product.locale":                    "en-US",
		"persist.sys.timezone":                 "UTC",
		"ro.pinky.sim":                         "1",
		"ro.pinky.device_id":                   d.id,
	}
	return p
}

func (d *Device) prop(key string) string { return d.props()[key] }

func (d *Device) screen(ctx context.Context) (*sdk.Screen, error) {
	return d.cfg.Driver.Screen(ctx, d.id, 0)
}

func (d *Device) act(ctx context.Context, a sdk.Action) error {
	if a.Kind == sdk.ActKey && (a.Key == sdk.KeyEnter || a.Key == sdk.KeyDelete) {
		// Enter or delete after digits typed on the lock screen work on them.
		d.mu.Lock()
		typed := len(d.pin) > 0
		d.mu.Unlock()
		if typed {
			return d.lockScreen(ctx, a)
		}
	}
	_, err := d.cfg.Driver.Act(ctx, d.id, a)
	if errors.Is(err, sdk.ErrLocked) {
		return d.lockScreen(ctx, a)
	}
	return err
}

// lockScreen is input on the lock screen, as a real phone takes it: a
// swipe or a tap brings up the PIN pad (nothing to do here), typed digits
// go into the PIN field, delete removes one, and Enter tries the PIN: a
// wrong one clears the field and the phone stays locked, as on a phone.
func (d *Device) lockScreen(ctx context.Context, a sdk.Action) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case a.Kind == sdk.ActTap || a.Kind == sdk.ActSwipe || a.Kind == sdk.ActLongPress:
		return nil
	case a.Kind == sdk.ActType:
		for _, r := range a.Text {
			if r >= '0' && r <= '9' {
				d.pin = append(d.pin, byte(r))
			}
		}
		if a.Submit {
			return d.tryPIN(ctx)
		}
		return nil
	case a.Kind == sdk.ActKey && a.Key == sdk.KeyDelete:
		if len(d.pin) > 0 {
			d.pin = d.pin[:len(d.pin)-1]
		}
		return nil
	case a.Kind == sdk.ActKey && a.Key == sdk.KeyEnter:
		return d.tryPIN(ctx)
	}
	return fmt.Errorf("device %q: %s: %w", d.id, a.Kind, sdk.ErrLocked)
}

// tryPIN unlocks with the PIN typed on the lock screen; d.mu is held.
func (d *Device) tryPIN(ctx context.Context) error {
	pin := string(d.pin)
	d.pin = d.pin[:0]
	u, ok := d.cfg.Driver.(sdk.Unlocker)
	if !ok || pin == "" {
		return nil
	}
	if err := u.Unlock(ctx, d.id, pin); err != nil && !errors.Is(err, sdk.ErrWrongPIN) {
		return err
	}
	return nil
}

// reportErr prints a driver error the way Android tools print exceptions.
func reportErr(io3 stdio, err error) int {
	fmt.Fprintf(io3.err, "Error: %v\n", err)
	return 1
}

func cmdGetprop(sh *shell, args []string, io3 stdio) int {
	p := sh.d.props()
	if s, err := sh.d.screen(sh.ctx); err == nil && s.DensityDPI > 0 {
		p["ro.sf.lcd_density"] = strconv.Itoa(s.DensityDPI)
	}
	if len(args) > 0 {
		v, ok := p[args[0]]
		if !ok && len(args) > 1 {
			v = args[1]
		}
		fmt.Fprintln(io3.out, v)
		return 0
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(io3.out, "[%s]: [%s]\n", k, p[k])
	}
	return 0
}

func cmdWm(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 {
		fmt.Fprintln(io3.err, "usage: wm size|density|dismiss-keyguard")
		return 1
	}
	switch args[0] {
	case "size", "density":
		s, err := sh.d.screen(sh.ctx)
		if err != nil {
			return reportErr(io3, err)
		}
		if len(args) > 1 {
			fmt.Fprintf(io3.err, "Error: the Pinky sim cannot change the display %s\n", args[0])
			return 1
		}
		if args[0] == "size" {
			// The natural size, whatever the rotation, as on a phone.
			w, h := naturalSize(s.Width, s.Height, sh.d.rotation(sh.ctx))
			fmt.Fprintf(io3.out, "Physical size: %dx%d\n", w, h)
		} else {
			fmt.Fprintf(io3.out, "Physical density: %d\n", s.DensityDPI)
		}
		return 0
	case "dismiss-keyguard":
		return 0 // a keyguard with a PIN stays
	}
	fmt.Fprintf(io3.err, "Error: unknown command '%s'\n", args[0])
	return 1
}

// component is the activity the face reports for an app.
func component(pkg string) string {
	switch pkg {
	case "":
		return ""
	case "com.google.android.apps.nexuslauncher":
		return pkg + "/.NexusLauncherActivity"
	case "com.android.systemui":
		return pkg + "/.keyguard.KeyguardActivity"
	}
	return pkg + "/.MainActivity"
}

func record(pkg string) string {
	if pkg == "" {
		return "null"
	}
	return "ActivityRecord{5a1e2f7 u0 " + component(pkg) + " t17}"
}

// securer is a driver that knows whether the focused window forbids
// capture (the virtual phones do, for a world's secure apps).
type securer interface {
	SecureWindow(ctx context.Context, deviceID string) (bool, error)
}

// appWindow writes the focused app window's entry of dumpsys window's list:
// its title and its layout parameters, whose fl= line names the window's
// flags as WindowManager.LayoutParams.toString does (SECURE for
// FLAG_SECURE, which tools read to learn why a screencap came back black).
func appWindow(ctx context.Context, d *Device, out io.Writer, pkg string) error {
	flags := "LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED DRAWS_SYSTEM_BAR_BACKGROUNDS"
	if sc, ok := d.cfg.Driver.(securer); ok {
		secure, err := sc.SecureWindow(ctx, d.id)
		if err != nil {
			return err
		}
		if secure {
			flags = "LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SECURE SPLIT_TOUCH HARDWARE_ACCELERATED DRAWS_SYSTEM_BAR_BACKGROUNDS"
		}
	}
	fmt.Fprintf(out, "  Window #0 Window{7b3c1e4 u0 %s}:\n    mDisplayId=0 rootTaskId=17 package=%s appop=NONE\n", component(pkg), pkg)
	fmt.Fprintf(out, "    mAttrs={(0,0)(fillxfill) sim={adjust=pan} ty=BASE_APPLICATION fmt=TRANSPARENT\n      fl=%s}\n", flags)
	return nil
}

func cmdDumpsys(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 {
		fmt.Fprintln(io3.out, "Currently running services:\n  SurfaceFlinger\n  activity\n  display\n  input\n  input_method\n  package\n  power\n  window")
		return 0
	}
	switch args[0] {
	case "package":
		return dumpsysPackage(sh.ctx, sh.d, args[1:], io3)
	case "SurfaceFlinger":
		return dumpsysSurfaceFlinger(sh.d, args[1:], io3)
	case "display":
		return dumpsysDisplay(sh.ctx, sh.d, io3)
	case "input":
		return dumpsysInput(sh.ctx, sh.d, io3)
	}
	s, err := sh.d.screen(sh.ctx)
	if err != nil {
		return reportErr(io3, err)
	}
	locked := s.LockState == sdk.LockLocked
	pkg := s.App.ID
	out := io3.out
	switch args[0] {
	case "window":
		fmt.Fprintln(out, "WINDOW MANAGER WINDOWS (dumpsys window windows)")
		focus := "null"
		switch {
		case !s.ScreenOn:
		case locked:
			focus = "Window{2c8a9d1 u0 NotificationShade}"
		case pkg != "":
			focus = "Window{7b3c1e4 u0 " + component(pkg) + "}"
		}
		app := pkg
		if locked {
			app = "com.google.android.apps.nexuslauncher"
		}
		if s.ScreenOn && !locked && pkg != "" {
			if err := appWindow(sh.ctx, sh.d, out, pkg); err != nil {
				return reportErr(io3, err)
			}
		}
		fmt.Fprintf(out, "  mCurrentFocus=%s\n  mFocusedApp=%s\n", focus, record(app))
		fmt.Fprintf(out, "  mShowingLockscreen=%t mShowingDream=false mDreamingLockscreen=%t\n", locked, locked)
		fmt.Fprintf(out, "  isStatusBarKeyguard=%t\n", locked)
		fmt.Fprintf(out, "  KeyguardStateMonitor\n    mIsShowing=%t\n    mInputRestricted=%t\n", locked, locked)
		fmt.Fprintf(out, "  mScreenOnFully=%t\n", s.ScreenOn)
		fmt.Fprintf(out, "  mCurrentRotation=%s\n", rotationName(sh.d.rotation(sh.ctx)))
		state := "SCREEN_STATE_OFF"
		if s.ScreenOn {
			state = "SCREEN_STATE_ON"
		}
		fmt.Fprintf(out, "  screenState=%s\n", state)
		fmt.Fprintf(out, "  mInputMethodWindow=%s\n", map[bool]string{true: "Window{9e0f3a2 u0 InputMethod}", false: "null"}[s.KeyboardShown])
	case "activity":
		if len(args) > 1 && args[1] != "activities" && args[1] != "a" {
			fmt.Fprintf(io3.err, "Error: the Pinky sim has no dumpsys activity %s\n", args[1])
			return 1
		}
		app := pkg
		if locked || app == "com.android.systemui" {
			app = "com.google.android.apps.nexuslauncher"
		}
		fmt.Fprintln(out, "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)")
		fmt.Fprintln(out, "Display #0 (activities from top to bottom):")
		fmt.Fprintf(out, "    mResumedActivity: %s\n", record(app))
		fmt.Fprintf(out, "  ResumedActivity: %s\n", record(app))
		fmt.Fprintf(out, "  topResumedActivity=%s\n", record(app))
	case "power":
		wake, disp := "Asleep", "OFF"
		if s.ScreenOn {
			wake, disp = "Awake", "ON"
		}
		fmt.Fprintf(out, "POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mWakefulness=%s\n  mWakefulnessChanging=false\n  mIsPowered=true\n  mHoldingDisplaySuspendBlocker=%t\n\nDisplay Power: state=%s\n", wake, s.ScreenOn, disp)
	case "input_method":
		return dumpsysInputMethod(s.KeyboardShown, io3)
	default:
		fmt.Fprintf(out, "Can't find service: %s\n", args[0])
	}
	return 0
}

// keycodes maps Android key codes and names to the contract's keys.
var keycodes = map[int]sdk.Key{
	3: sdk.KeyHome, 4: sdk.KeyBack, 19: sdk.KeyDpadUp, 20: sdk.KeyDpadDown, 21: sdk.KeyDpadLeft,
	22: sdk.KeyDpadRight, 23: sdk.KeyDpadCenter, 24: sdk.KeyVolumeUp, 25: sdk.KeyVolumeDown,
	26: sdk.KeyPower, 61: sdk.KeyTab, 66: sdk.KeyEnter, 67: sdk.KeyDelete, 82: sdk.KeyMenu,
	84: sdk.KeySearch, 111: sdk.KeyEscape, 112: sdk.KeyForwardDelete, 164: sdk.KeyVolumeMute,
	187: sdk.KeyRecents, 223: sdk.KeySleep, 224: sdk.KeyWake,
}

var keynames = map[string]int{
	"HOME": 3, "BACK": 4, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22,
	"DPAD_CENTER": 23, "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "TAB": 61, "SPACE": 62,
	"ENTER": 66, "DEL": 67, "MENU": 82, "SEARCH": 84, "ESCAPE": 111, "FORWARD_DEL": 112,
	"VOLUME_MUTE": 164, "APP_SWITCH": 187, "SLEEP": 223, "WAKEUP": 224,
}

// keyAction is the action for a key code or KEYCODE_ name: a key, or
// typing the character it stands for.
func keyAction(s string) (sdk.Action, bool) {
	code, err := strconv.Atoi(s)
	if err != nil {
		name := strings.TrimPrefix(strings.ToUpper(s), "KEYCODE_")
		switch {
		case len(name) == 1 && name[0] >= 'A' && name[0] <= 'Z':
			code = 29 + int(name[0]-'A')
		case len(name) == 1 && name[0] >= '0' && name[0] <= '9':
			code = 7 + int(name[0]-'0')
		default:
			var ok bool
			if code, ok = keynames[name]; !ok {
				return sdk.Action{}, false
			}
		}
	}
	switch {
	case keycodes[code] != "":
		return sdk.Action{Kind: sdk.ActKey, Key: keycodes[code]}, true
	case code >= 7 && code <= 16:
		return sdk.Action{Kind: sdk.ActType, Text: string(rune('0' + code - 7))}, true
	case code >= 29 && code <= 54:
		return sdk.Action{Kind: sdk.ActType, Text: string(rune('a' + code - 29))}, true
	case code == 62:
		return sdk.Action{Kind: sdk.ActType, Text: " "}, true
	}
	return sdk.Action{}, false
}

var inputSources = []string{"keyboard", "mouse", "joystick", "touchnavigation", "touchpad", "trackball", "dpad", "stylus", "gamepad", "touchscreen", "rotaryencoder"}

func cmdInput(sh *shell, args []string, io3 stdio) int {
	for len(args) > 0 && slices.Contains(inputSources, args[0]) {
		args = args[1:]
	}
	if len(args) > 1 && args[0] == "-d" {
		args = args[2:]
	}
	if len(args) == 0 {
		fmt.Fprintln(io3.err, "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
		return 1
	}
	nums := func(want ...int) ([]int, bool) {
		var out []int
		rest := args[1:]
		if !slices.Contains(want, len(rest)) {
			fmt.Fprintf(io3.err, "Error: wrong number of arguments for %s\n", args[0])
			return nil, false
		}
		for _, a := range rest {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil {
				fmt.Fprintf(io3.err, "Error: bad number %q for %s\n", a, args[0])
				return nil, false
			}
			out = append(out, int(f))
		}
		return out, true
	}
	var acts []sdk.Action
	switch args[0] {
	case "tap":
		n, ok := nums(2)
		if !ok {
			return 1
		}
		acts = append(acts, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: n[0], Y: n[1]}})
	case "swipe", "draganddrop":
		n, ok := nums(4, 5)
		if !ok {
			return 1
		}
		dur := 300 * time.Millisecond
		if len(n) == 5 {
			dur = time.Duration(n[4]) * time.Millisecond
		}
		a := sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: n[0], Y: n[1]}, To: sdk.Point{X: n[2], Y: n[3]}, Duration: dur}
		if a.Point == a.To {
			a = sdk.Action{Kind: sdk.ActTap, Point: a.Point}
			if dur >= 500*time.Millisecond {
				a.Kind, a.Duration = sdk.ActLongPress, dur
			}
		}
		acts = append(acts, a)
	case "text":
		if len(args) < 2 {
			fmt.Fprintln(io3.err, "Error: text needs a string")
			return 1
		}
		acts = append(acts, sdk.Action{Kind: sdk.ActType, Text: strings.ReplaceAll(strings.Join(args[1:], " "), "%s", " ")})
	case "keyevent", "press":
		codes := args[1:]
		for len(codes) > 0 && strings.HasPrefix(codes[0], "--") {
			if codes[0] == "--delay" && len(codes) > 1 {
				codes = codes[1:]
			}
			codes = codes[1:]
		}
		if args[0] == "press" {
			codes = []string{"23"}
		}
		for _, c := range codes {
			a, ok := keyAction(c)
			if !ok {
				fmt.Fprintf(io3.err, "Error: unknown key code %q\n", c)
				return 1
			}
			acts = append(acts, a)
		}
	default:
		fmt.Fprintf(io3.err, "Error: Unknown command: %s\n", args[0])
		return 1
	}
	for _, a := range acts {
		if err := sh.d.act(sh.ctx, a); err != nil && !unheard(err) {
			return reportErr(io3, err)
		}
	}
	return 0
}

// unheard reports whether err only says that nothing took the input (a
// point off the screen, no focused field, the screen off). A real phone's
// input command injects the events and exits 0 then: it never learns
// whether anything took them.
func unheard(err error) bool {
	return errors.Is(err, sdk.ErrInvalidArgument) || errors.Is(err, sdk.ErrNoFocus) || errors.Is(err, sdk.ErrScreenOff)
}

// apps lists the phone's packages, system parts included.
func (d *Device) apps(ctx context.Context) ([]sdk.App, error) {
	apps := []sdk.App{
		{ID: "android", System: true}, {ID: "com.android.shell", System: true},
		{ID: "com.android.systemui", System: true}, {ID: "com.google.android.apps.nexuslauncher", System: true},
	}
	d.mu.Lock()
	for _, pkg := range slices.Sorted(maps.Keys(d.installed)) {
		apps = append(apps, sdk.App{ID: pkg})
	}
	d.mu.Unlock()
	l, ok := d.cfg.Driver.(sdk.AppLister)
	if !ok {
		return apps, nil
	}
	more, err := l.ListApps(ctx, d.id)
	if err != nil {
		return nil, err
	}
	return append(apps, more...), nil
}

func (d *Device) hasApp(ctx context.Context, pkg string) bool {
	apps, err := d.apps(ctx)
	return err == nil && slices.ContainsFunc(apps, func(a sdk.App) bool { return a.ID == pkg })
}

func cmdAm(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 {
		fmt.Fprintln(io3.err, "usage: am start|start-activity|force-stop ...")
		return 1
	}
	switch args[0] {
	case "force-stop", "kill":
		if len(args) < 2 {
			fmt.Fprintln(io3.err, "Error: package name not specified")
			return 1
		}
		err := sh.d.act(sh.ctx, sdk.Action{Kind: sdk.ActStop, AppID: args[len(args)-1]})
		if err != nil && !errors.Is(err, sdk.ErrAppNotFound) {
			return reportErr(io3, err)
		}
		return 0
	case "broadcast":
		return cmdBroadcast(args[1:], io3)
	case "start", "start-activity":
	default:
		fmt.Fprintf(io3.err, "Error: the Pinky sim has no am %s\n", args[0])
		return 1
	}
	var action, data, comp, pkg, target string
	var categories []string
	wait := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		val := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch a {
		case "-a":
			action = val()
		case "-d":
			data = val()
		case "-n":
			comp = val()
		case "-W":
			wait = true
		case "-p":
			target = val()
		case "-c":
			categories = append(categories, val())
		case "-f", "-t", "--user", "--display":
			val()
		case "-e", "--es", "--ez", "--ei", "--el", "--ef", "--eu":
			val()
			val()
		case "-S", "-D", "-N", "-R", "--activity-clear-top", "--activity-new-task", "--activity-single-top", "--activity-clear-task":
		default:
			if !strings.HasPrefix(a, "-") {
				pkg = a
			}
		}
	}
	// A real am prints why an activity did not start and exits 0 all the
	// same (ActivityManagerShellCommand.runStartActivity): on stderr, or on
	// stdout with -W.
	errOut := io3.err
	if wait {
		errOut = io3.out
	}
	switch {
	case data != "" && (action == "" || action == "android.intent.action.VIEW") && comp == "":
		intent := "Intent { act=android.intent.action.VIEW dat=" + data + " }"
		fmt.Fprintf(io3.out, "Starting: %s\n", intent)
		err := errNoHandler
		if resolvable(data) {
			err = sh.d.act(sh.ctx, sdk.Action{Kind: sdk.ActOpenURL, URL: data})
		}
		if err != nil {
			if errors.Is(err, sdk.ErrAppNotFound) || errors.Is(err, sdk.ErrInvalidArgument) {
				fmt.Fprintf(errOut, "Error: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW dat=%s flg=0x10000000 }\n", data)
				return 0
			}
			return reportErr(io3, err)
		}
	case target != "" && comp == "" && pkg == "":
		// An intent limited to a package resolves to its launcher activity
		// when it asks for one (MAIN, or the LAUNCHER category); with no
		// action it matches no activity's filter.
		if action != "android.intent.action.MAIN" && !slices.Contains(categories, "android.intent.category.LAUNCHER") || !sh.d.hasApp(sh.ctx, target) {
			intent := "flg=0x10000000 pkg=" + target
			if action != "" {
				intent = "act=" + action + " " + intent
			}
			fmt.Fprintf(io3.out, "Starting: Intent { %s }\n", intent)
			fmt.Fprintf(errOut, "Error: Activity not started, unable to resolve Intent { %s }\n", intent)
			return 0
		}
		comp = component(target)
		fmt.Fprintf(io3.out, "Starting: Intent { act=%s cat=[android.intent.category.LAUNCHER] pkg=%s }\n", action, target)
		if err := sh.d.act(sh.ctx, sdk.Action{Kind: sdk.ActLaunch, AppID: target}); err != nil {
			return reportErr(io3, err)
		}
	case comp != "" || pkg != "":
		if comp == "" {
			comp = component(pkg)
		}
		p, act, _ := strings.Cut(comp, "/")
		if strings.HasPrefix(act, ".") {
			comp = p + "/" + act
		}
		fmt.Fprintf(io3.out, "Starting: Intent { cmp=%s }\n", comp)
		if err := sh.d.act(sh.ctx, sdk.Action{Kind: sdk.ActLaunch, AppID: p}); err != nil {
			if errors.Is(err, sdk.ErrAppNotFound) {
				fmt.Fprintf(errOut, "Error type 3\nError: Activity class {%s} does not exist.\n", comp)
				return 0
			}
			return reportErr(io3, err)
		}
	default:
		fmt.Fprintln(io3.err, "Error: no intent to start (want -n PKG/ACT or -a android.intent.action.VIEW -d URL)")
		return 1
	}
	if wait {
		fmt.Fprintf(io3.out, "Status: ok\nLaunchState: COLD\nActivity: %s\nTotalTime: 120\nWaitTime: 125\nComplete\n", comp)
	}
	return 0
}

// errNoHandler is a VIEW intent that no app of the phone takes.
var errNoHandler = fmt.Errorf("no app handles the URL: %w", sdk.ErrAppNotFound)

// viewSchemes are the URL schemes a stock phone's apps take in a VIEW
// intent; the virtual phone's browser opens them all.
var viewSchemes = []string{"http", "https", "about", "file", "content", "intent", "market", "tel", "mailto", "sms", "smsto", "geo"}

// resolvable reports whether a VIEW intent for uri finds an app, as the
// package manager's resolution would: an unknown scheme finds none.
func resolvable(uri string) bool {
	scheme, _, ok := strings.Cut(uri, ":")
	return ok && slices.Contains(viewSchemes, strings.ToLower(scheme))
}

func cmdMonkey(sh *shell, args []string, io3 stdio) int {
	var pkg string
	for i := 0; i < len(args); i++ {
		if args[i] == "-p" && i+1 < len(args) {
			pkg = args[i+1]
		}
	}
	fmt.Fprintf(io3.out, "  bash arg: %s\n", strings.Join(args, "\n  bash arg: "))
	if pkg == "" || !sh.d.hasApp(sh.ctx, pkg) {
		fmt.Fprintln(io3.out, "** No activities found to run, monkey aborted.")
		return 252
	}
	if err := sh.d.act(sh.ctx, sdk.Action{Kind: sdk.ActLaunch, AppID: pkg}); err != nil {
		return reportErr(io3, err)
	}
	fmt.Fprintln(io3.out, "Events injected: 1\n## Network stats: elapsed time=12ms (0ms mobile, 0ms wifi, 12ms not connected)")
	return 0
}

func cmdPm(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 {
		fmt.Fprintln(io3.err, "usage: pm list packages|path|clear ...")
		return 1
	}
	switch {
	case args[0] == "list" && len(args) > 1 && args[1] == "packages":
		f, rest := flags(args[2:])
		apps, err := sh.d.apps(sh.ctx)
		if err != nil {
			return reportErr(io3, err)
		}
		for _, a := range apps {
			if (f['3'] && a.System) || (f['s'] && !a.System) || (len(rest) > 0 && !strings.Contains(a.ID, rest[0])) {
				continue
			}
			fmt.Fprintf(io3.out, "package:%s\n", a.ID)
		}
		return 0
	case args[0] == "list" && len(args) > 1 && args[1] == "features":
		return pmListFeatures(io3)
	case args[0] == "path" && len(args) > 1:
		if !sh.d.hasApp(sh.ctx, args[1]) {
			return 1
		}
		fmt.Fprintf(io3.out, "package:/data/app/%s-1/base.apk\n", args[1])
		return 0
	case args[0] == "install":
		return sh.pmInstall(args[1:], io3)
	case args[0] == "uninstall" && len(args) > 1:
		return sh.uninstall(args[len(args)-1], io3)
	case args[0] == "clear" && len(args) > 1:
		fmt.Fprintln(io3.out, "Success")
		return 0
	}
	fmt.Fprintf(io3.err, "Error: the Pinky sim has no pm %s\n", strings.Join(args, " "))
	return 1
}

func cmdCmd(sh *shell, args []string, io3 stdio) int {
	if len(args) > 0 && args[0] == "package" {
		rest := args[1:]
		if len(rest) > 0 && rest[0] == "resolve-activity" {
			var pkg string
			for _, a := range rest[1:] {
				if !strings.HasPrefix(a, "-") {
					pkg = a
				}
			}
			if pkg == "" || !sh.d.hasApp(sh.ctx, pkg) {
				fmt.Fprintln(io3.out, "No activity found")
				return 0
			}
			fmt.Fprintf(io3.out, "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n%s\n", component(pkg))
			return 0
		}
		if len(rest) > 0 && rest[0] == "has-feature" {
			return cmdHasFeature(rest[1:], io3)
		}
		return cmdPm(sh, rest, io3)
	}
	if len(args) > 0 && args[0] == "clipboard" {
		return cmdClipboard(sh.ctx, sh.d, args[1:], io3)
	}
	if len(args) > 0 && args[0] == "settings" {
		return cmdSettings(sh, args[1:], io3)
	}
	if len(args) > 0 {
		fmt.Fprintf(io3.err, "Can't find service: %s\n", args[0])
	}
	return 20
}

func defaultSettings() map[string]string {
	return map[string]string{
		"system/screen_off_timeout":             "30000",
		"system/show_touches":                   "0",
		"system/accelerometer_rotation":         "1",
		"system/user_rotation":                  "0",
		"global/stay_on_while_plugged_in":       "0",
		"global/window_animation_scale":         "1.0",
		"global/transition_animation_scale":     "1.0",
		"global/animator_duration_scale":        "1.0",
		"global/adb_enabled":                    "1",
		"secure/default_input_method":           "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME",
		"secure/android_id":                     "5e1f1a2b3c4d5e6f",
		"secure/enabled_accessibility_services": "",
	}
}

func cmdSettings(sh *shell, args []string, io3 stdio) int {
	for len(args) > 1 && args[0] == "--user" {
		args = args[2:]
	}
	if len(args) < 2 {
		fmt.Fprintln(io3.err, "usage: settings get|put|delete|list system|secure|global [KEY [VALUE]]")
		return 1
	}
	ns := args[1]
	if ns != "system" && ns != "secure" && ns != "global" {
		fmt.Fprintf(io3.err, "Invalid namespace '%s'\n", ns)
		return 1
	}
	d := sh.d
	if len(args) >= 3 && (args[0] == "put" || args[0] == "delete") && rotationKey(ns+"/"+args[2]) {
		// Registered before the unlock below, so it runs after it: the
		// window manager turns the screen once the setting is in.
		defer d.applyRotation(sh.ctx)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case args[0] == "get" && len(args) == 3:
		v, ok := d.settings[ns+"/"+args[2]]
		if !ok {
			v = "null"
		}
		fmt.Fprintln(io3.out, v)
	case args[0] == "put" && len(args) >= 4:
		d.settings[ns+"/"+args[2]] = args[3]
	case args[0] == "delete" && len(args) == 3:
		delete(d.settings, ns+"/"+args[2])
	case args[0] == "list":
		var keys []string
		for k := range d.settings {
			if rest, ok := strings.CutPrefix(k, ns+"/"); ok {
				keys = append(keys, rest)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(io3.out, "%s=%s\n", k, d.settings[ns+"/"+k])
		}
	default:
		fmt.Fprintln(io3.err, "usage: settings get|put|delete|list system|secure|global [KEY [VALUE]]")
		return 1
	}
	return 0
}

// cmdScreencap is screencap [-p] [-d ID] [FILE]: a PNG with -p or a FILE
// named .png, raw pixels otherwise (see writeRawScreencap), on stdout
// without a FILE.
func cmdScreencap(sh *shell, args []string, io3 stdio) int {
	asPNG, file := false, ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-p":
			asPNG = true
		case a == "-d":
			i++ // the display: the virtual phone captures its own
		case strings.HasPrefix(a, "-"):
		case file == "":
			file = a
		}
	}
	if strings.HasSuffix(file, ".png") {
		asPNG = true
	}
	var data bytes.Buffer
	if asPNG {
		img, err := sh.d.cfg.Driver.Screenshot(sh.ctx, sdk.ScreenshotRequest{DeviceID: sh.d.id, Format: sdk.FormatPNG})
		if err != nil {
			return reportErr(io3, err)
		}
		data.Write(img.Data)
	} else {
		img, err := sh.d.rawScreen(sh.ctx)
		if err != nil {
			return reportErr(io3, err)
		}
		sh.d.writeRawScreencap(&data, img) //nolint:errcheck // a bytes.Buffer does not fail
	}
	if file == "" {
		io3.out.Write(data.Bytes())
		return 0
	}
	w, err := sh.d.fs.create(sh.ctx, sh.abs(file), timeZero)
	if err == nil {
		_, err = w.Write(data.Bytes())
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(io3.err, "Error opening file: %s (%s)\n", file, errText(err))
		return 1
	}
	return 0
}

func cmdUiautomator(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 || args[0] != "dump" {
		fmt.Fprintln(io3.err, "Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\ndump: creates an XML dump of current UI hierarchy")
		return 1
	}
	file := "/sdcard/window_dump.xml"
	windows := false
	for _, a := range args[1:] {
		switch {
		case a == "--windows":
			// Android 13's DumpCommand; older ones ignore unknown options.
			windows = sh.d.sdkLevel() >= windowsLevel
		case !strings.HasPrefix(a, "-"):
			file = a
		}
	}
	// Android allows one UiAutomation client at a time, and a dump holds it
	// while it waits for the screen to idle: a second dump meanwhile fails.
	if !sh.d.uiAutomation.CompareAndSwap(false, true) {
		fmt.Fprintln(io3.err, "java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5f3c2a1 already registered!")
		return 1
	}
	defer sh.d.uiAutomation.Store(false)
	time.Sleep(uiAutomationHold)
	var xml []byte
	var err error
	if windows {
		xml, err = sh.d.windowsXML(sh.ctx)
	} else {
		xml, err = sh.d.uiXML(sh.ctx)
	}
	if err != nil {
		if errors.Is(err, errNoRoot) {
			// DumpCommand prints this and returns: the JVM exits 0.
			fmt.Fprintln(io3.err, "ERROR: null root node returned by UiTestAutomationBridge.")
			return 0
		}
		return reportErr(io3, err)
	}
	switch {
	case (file == "/dev/tty" || file == "/dev/stdout") && windows:
		// The window dump goes to a file only: /dev/tty gets nothing.
	case file == "/dev/tty" && sh.tty == nil:
		// No controlling terminal (shell,v2,raw: runs on pipes): the
		// FileWriter's IOException goes to logcat, and the dump still
		// says where it went (AccessibilityNodeInfoDumper).
	case file == "/dev/tty":
		sh.tty.Write(xml) // the terminal, whatever stdout is redirected to
	case file == "/dev/stdout":
		io3.out.Write(xml)
	default:
		w, err := sh.d.fs.create(sh.ctx, sh.abs(file), timeZero)
		if err == nil {
			_, err = w.Write(xml)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			fmt.Fprintf(io3.err, "ERROR: could not write %s: %s\n", file, errText(err))
			return 1
		}
		file = sh.abs(file)
	}
	fmt.Fprintf(io3.out, "UI hierchary dumped to: %s\n", file)
	return 0
}
