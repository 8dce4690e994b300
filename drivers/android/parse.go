package android

import (
	"bufio"
	"bytes"
	"errors"
	"regexp"
	"strings"
)

// The parsers of what the phone's shell prints. Android's output changes
// between versions; each parser looks for every known spelling and says
// when it found none, rather than guess.

// Focus is the app in front, from `dumpsys window`.
type Focus struct {
	Package  string
	Activity string // may be empty (a window that is not an activity)
}

var (
	// mCurrentFocus=Window{4f3c1a u0 com.android.settings/com.android.settings.Settings}
	currentFocusRE = regexp.MustCompile(`mCurrentFocus=Window\{[^}]*?\su\d+\s+([^\s}/]+)(?:/([^\s}]+))?\}`)
	// mFocusedApp=ActivityRecord{9b1c2f3 u0 com.google.android.apps.nexuslauncher/.NexusLauncherActivity t2}
	focusedAppRE = regexp.MustCompile(`mFocusedApp=(?:AppWindowToken\{.*?)?ActivityRecord\{[^}]*?\su\d+\s+([^\s}/]+)/([^\s}]+)`)
	// topResumedActivity=ActivityRecord{… u0 com.pkg/.Main t42} (Android 10+), mResumedActivity: ActivityRecord{…}
	resumedRE = regexp.MustCompile(`(?:topResumedActivity=|mResumedActivity: )ActivityRecord\{[^}]*?\su\d+\s+([^\s}/]+)/([^\s}]+)`)
)

// systemUI is the package of the lock screen, the status bar and the shade.
const systemUI = "com.android.systemui"

// ErrNoFocus means the output names no app in front.
var ErrNoFocus = errors.New("no focused window or app in the output")

// ParseFocus finds the app in front in `dumpsys window` (or `dumpsys
// activity activities`) output: the focused window first, then the focused
// app, then the resumed activity. A focused window of the system (the
// status bar, the keyguard) gives its own package, "com.android.systemui".
func ParseFocus(out []byte) (Focus, error) {
	s := string(out)
	if m := currentFocusRE.FindStringSubmatch(s); m != nil {
		if !strings.Contains(m[1], ".") {
			// A system window by its title (NotificationShade, Keyguard,
			// StatusBar): the lock screen and the shade are System UI's.
			return Focus{Package: systemUI}, nil
		}
		return Focus{Package: m[1], Activity: fullActivity(m[1], m[2])}, nil
	}
	if m := focusedAppRE.FindStringSubmatch(s); m != nil {
		return Focus{Package: m[1], Activity: fullActivity(m[1], m[2])}, nil
	}
	if m := resumedRE.FindStringSubmatch(s); m != nil {
		return Focus{Package: m[1], Activity: fullActivity(m[1], m[2])}, nil
	}
	return Focus{}, ErrNoFocus
}

// fullActivity expands ".Main" to "pkg.Main".
func fullActivity(pkg, act string) string {
	if strings.HasPrefix(act, ".") {
		return pkg + act
	}
	return act
}

// Lock is what `dumpsys window` and `dumpsys power` say of the lock and the
// screen.
type Lock struct {
	Locked   bool
	ScreenOn bool
	Known    bool // some line told; false when neither output said anything
}

// ParseLock reads the lock and screen state from `dumpsys window` and
// `dumpsys power` output, as the appium-adb rules do: locked when the
// keyguard shows (mShowingLockscreen, mDreamingLockscreen, the keyguard
// monitor showing with input restricted, or a Keyguard window focused);
// the screen is off when the power service is asleep or dozing, or the
// window manager says the screen is not fully on.
func ParseLock(window, power []byte) Lock {
	var l Lock
	w := string(window)
	flag := func(s, name string) (bool, bool) {
		i := strings.Index(s, name+"=")
		if i < 0 {
			return false, false
		}
		v := s[i+len(name)+1:]
		return strings.HasPrefix(v, "true"), true
	}
	if v, ok := flag(w, "mShowingLockscreen"); ok {
		l.Known, l.Locked = true, l.Locked || v
	}
	if v, ok := flag(w, "mDreamingLockscreen"); ok {
		l.Known, l.Locked = true, l.Locked || v
	}
	if v, ok := flag(w, "isStatusBarKeyguard"); ok {
		l.Known, l.Locked = true, l.Locked || v
	}
	if i := strings.Index(w, "KeyguardStateMonitor"); i >= 0 {
		showing, ok1 := flag(w[i:], "mIsShowing")
		restricted, ok2 := flag(w[i:], "mInputRestricted")
		if ok1 || ok2 {
			l.Known = true
			l.Locked = l.Locked || (showing && restricted)
		}
	}
	if m := currentFocusRE.FindStringSubmatch(w); m != nil && strings.Contains(m[0], "Keyguard") {
		l.Known, l.Locked = true, true
	}
	l.ScreenOn = true
	if v, ok := flag(w, "mScreenOnFully"); ok && !v {
		l.ScreenOn = false
	}
	if strings.Contains(w, "screenState=SCREEN_STATE_OFF") {
		l.ScreenOn = false
	}
	p := string(power)
	for _, key := range []string{"mWakefulness=", "getWakefulnessLocked()="} {
		if i := strings.Index(p, key); i >= 0 {
			l.Known = true
			v := p[i+len(key):]
			if strings.HasPrefix(v, "Asleep") || strings.HasPrefix(v, "Dozing") {
				l.ScreenOn = false
			}
			break
		}
	}
	if i := strings.Index(p, "Display Power: state="); i >= 0 && strings.HasPrefix(p[i+len("Display Power: state="):], "OFF") {
		l.Known, l.ScreenOn = true, false
	}
	return l
}

// The end of `uiautomator dump /dev/tty` output, after the XML ("hierchary"
// is misspelled in Android's source).
const dumpedTo = "UI hierchary dumped to:"

// ErrNotIdle is uiautomator's "could not get idle state": the screen kept
// changing for its whole wait (an animation, a video).
var ErrNotIdle = errors.New("the screen never became idle (uiautomator: could not get idle state)")

// DumpXML takes the XML out of `uiautomator dump /dev/tty` output, or
// says why there is none.
func DumpXML(out []byte) ([]byte, error) {
	if bytes.Contains(out, []byte("could not get idle state")) {
		return nil, ErrNotIdle
	}
	start := bytes.Index(out, []byte("<?xml"))
	if start < 0 {
		start = bytes.Index(out, []byte("<hierarchy"))
	}
	if start < 0 {
		msg := strings.TrimSpace(string(out))
		if len(msg) > 200 {
			msg = msg[:200]
		}
		return nil, errors.New("uiautomator gave no XML: " + msg)
	}
	x := out[start:]
	if i := bytes.Index(x, []byte(dumpedTo)); i >= 0 {
		x = x[:i]
	}
	end := bytes.LastIndex(x, []byte("</hierarchy>"))
	if end < 0 {
		return nil, errors.New("uiautomator's XML is cut short (no </hierarchy>)")
	}
	return x[:end+len("</hierarchy>")], nil
}

// ParsePackages reads `pm list packages` output: one "package:NAME" a line.
func ParsePackages(out []byte) []string {
	var pkgs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "package:"); ok && name != "" {
			pkgs = append(pkgs, name)
		}
	}
	return pkgs
}

// ParseResolvedActivity reads `cmd package resolve-activity --brief PKG`:
// its last line is the component "pkg/.Activity"; "No activity found"
// means the package has no launcher activity.
func ParseResolvedActivity(out []byte) (string, bool) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if !strings.Contains(last, "/") || strings.Contains(last, " ") {
		return "", false
	}
	return last, true
}

// InputText escapes text for the shell command `input text`: a space
// becomes %s (input turns it back) and the shell's metacharacters get a
// backslash. It reports false for text input cannot type: anything but
// printable ASCII, and a literal "%s" (input would make it a space); that
// text goes through the clipboard instead.
func InputText(text string) (string, bool) {
	if text == "" || strings.Contains(text, "%s") {
		return "", false
	}
	var b strings.Builder
	for _, r := range text {
		switch {
		case r == ' ':
			b.WriteString("%s")
		case r < 0x21 || r > 0x7e:
			return "", false
		case strings.ContainsRune("()<>|;&*\\~^\"'$`#?[]{}!", r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), true
}
