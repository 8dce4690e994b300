// Package android is the driver of real Android phones: pinky-driver-android.
// It reaches phones through the person's own adb server (package adb: one
// socket per request, no adb process per action), reads screens with
// `uiautomator dump` and dumpsys, and streams video and injects input
// through scrcpy's server (package scrcpy), which it pushes and starts on the
// phone when first needed. Nothing is installed on the phone by hand.
//
// # Reading
//
// Screen runs `uiautomator dump /dev/tty` through exec: (it needs a tty) and
// `dumpsys window` and `dumpsys power` in one shell call, and parses them
// with the parsers every driver shares (drivers/dump) and ParseFocus and
// ParseLock. A screen that never idles ("could not get idle state") is read
// again twice, then reported. The read is one function (readScreen) so that
// a faster on-phone reader can replace the dump later.
//
// # Input and video
//
// Taps, presses, swipes, keys and text go through scrcpy's control socket
// (milliseconds rather than the half second of `adb shell input`). Text
// that scrcpy cannot inject (anything but ASCII: its key map has no other
// characters) is pasted through the clipboard, and the person's clipboard,
// whatever it holds, is put back afterwards; neither is ever logged.
// Replacing a field's text is Ctrl+A (a text field's select all), then
// delete. README.md says what a real phone does with a paste (a maximum
// length, the moment the text sits on the clipboard). When no scrcpy
// server can be started (none found on this computer), input falls back to
// `adb shell input` (a scroll is the same swipe there), and the phones lack
// video, pinch and displays; text that only scrcpy types (anything but
// printable ASCII) is then refused whole with sdk.ErrUnsupported, saying
// what enables it, before any of it is typed.
//
// # Capabilities per phone
//
// Each phone is listed with what it can do now (sdk.Device.Caps, caps.go):
// video, pinch and displays need the scrcpy server, displays Android 13
// too; a lacked one has a reason and a fix, and its calls answer
// sdk.ErrUnsupported with the same reason. While it has none, the driver
// looks for a scrcpy server again (Config.FindScrcpy) and, once found,
// sends each phone CHANGED; while it has one, it checks that the server's
// file is still there, and sends CHANGED when it is gone.
//
// The scrcpy server is found at $SCRCPY_SERVER_PATH, then where the scrcpy
// package installs it on Linux and macOS; its exact version is
// $SCRCPY_SERVER_VERSION, else what `scrcpy --version` says. Each phone has
// one control session, started on the first action and kept; a session
// that died is started again once before an action fails. Video runs a
// session of its own per stream.
//
// # Background displays
//
// The driver is an sdk.Displayer: CreateDisplay starts a scrcpy server of
// its own with new_display=WxH/DPI (and power_on=false: the phone is never
// woken for it), which makes a virtual display on the phone and logs its
// id ("[server] INFO: New display: 1080x1920/420 (id=7)"); the driver reads
// the id from the server's log, as the server prints it. That server is the
// display's session: its video is the display's (StreamVideo and
// RequestKeyFrame of the display), its control socket's taps, swipes, keys,
// text and clipboard pastes go to the display, and Act's launch_app sends
// START_APP, which launches onto the session's display (`am start
// --display` is refused to the shell on recent Android). The display lives
// as long as its server (vd_destroy_content): RemoveDisplay ends it, and so
// does a phone that goes away, or the driver's Close.
//
// Screen of a background display runs Android 13's `uiautomator dump
// --windows FILE` (every display's windows, written to a file only), reads
// the file and deletes it in the same shell call, and takes the display's
// windows from it (dump.ParseUIAutomatorWindows), one dump at a time per
// phone as for display 0. Before Android 13 uiautomator ignores --windows
// and writes the phone's own screen: CreateDisplay reads one dump to find
// out, and then removes the display and answers sdk.ErrUnsupported.
// screencap cannot capture a virtual display: a Screenshot of one is a key
// frame of its video decoded by ffmpeg, when this computer has it
// (sdk.ErrUnsupported otherwise). Opening a URL on a background display is
// sdk.ErrUnsupported.
//
// # Idle
//
// WaitIdle watches the phone's video: scrcpy's server sends a frame only
// when the screen changes, and every session's video is always read (see
// pump), so the screen is idle once no session of the phone (display 0's
// and its background displays') had a frame for a quiet period (idle.go
// says why 300 ms) after the driver's last action. The gateway then reads
// the screen once. Without a scrcpy server it compares two screencaps in a
// row, which costs less than the two dumps the gateway would read.
//
// # Faults
//
// When the adb server goes away, WatchDevices reports its phones offline and
// tracks again with backoff (starting a server unless Options.NoStart) until
// the phones are listed again; calls in between fail at once with
// sdk.ErrDeviceOffline. An action whose scrcpy session ends under it, once
// part of it was written, fails with an error that does not say it did not
// run (sdk.ErrDeviceOffline when the phone went away): it may have happened.
// A tap or key is one write; a write to a session whose end adb has not yet
// reported is lost without an error, which scrcpy's control protocol (no
// acknowledgement of input) cannot tell.
//
// # Checks
//
// What the driver needs of this computer it reports on stderr as checks
// that `pinky doctor` and `pinky drivers` show (checks.go): a line with
// check=adb or check=scrcpy at WARN says what is missing and how to get it
// (adb not installed, no server answering, no scrcpy server), and one at
// INFO that the check passes again. A missing adb is thus a sentence next to
// the driver, not a driver that runs with no phones and says nothing.
package android

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/version"
)

// Version is the driver's version: Pinky's, which it ships with.
var Version = version.Get().Version

// Config configures a Driver.
type Config struct {
	// ADB says how to reach the adb server; zero is the environment's
	// (ANDROID_ADB_SERVER_PORT, ADB_SERVER_SOCKET) or 127.0.0.1:5037.
	ADB adb.Options
	// Scrcpy is the scrcpy server to push to phones (FindScrcpyServer finds
	// it); zero is none: input goes through adb, and there is no video.
	Scrcpy ScrcpyServer
	// NoScrcpy says why there is none, for the log and the devices' state.
	NoScrcpy error
	// FindScrcpy, when set, looks for a scrcpy server again while the
	// driver has none (the person may install scrcpy while it runs): at
	// most every 10 s, when a call needs one and at the devices' polls.
	// Once it finds one, the phones serve video, pinch and displays, and
	// WatchDevices sends them CHANGED (caps.go). The driver also checks as
	// often that the server's file is still there; when it is gone, it asks
	// FindScrcpy again at once, and the phones lack what needs the server
	// with FindScrcpy's reason.
	FindScrcpy func() (ScrcpyServer, error)
	// IdleQuiet is how long the video must stay quiet for WaitIdle to say
	// the screen is idle; zero is 300 ms (idle.go says why). Tests on a
	// loaded machine, whose virtual phone draws its frames slowly, lengthen it.
	IdleQuiet time.Duration
	// ReuseFor is how long a screen read may be given again while the
	// video shows no change and the driver did not act (reuse.go); zero is
	// 30 s, negative never.
	ReuseFor time.Duration
	Logger   *slog.Logger
}

// Driver drives the Android phones an adb server knows.
type Driver struct {
	cfg Config
	log *slog.Logger
	adb *adb.Client

	declared []sdk.Capability // what the driver declares (sdk.Capabilities)

	mu       sync.Mutex
	phones   map[string]*phone         // by serial
	versions map[string]androidRelease // the phones' Android versions, by serial, once read

	scrMu     sync.Mutex    // guards scrcpy, scrErr, looked and scrFile
	scrcpy    *ScrcpyServer // nil when none was found
	scrErr    error         // why none was found
	looked    time.Time     // when the driver last looked for a server, or at its file
	scrFile   string        // the server's file as it was found (fileID): a change is an upgrade
	lookEvery time.Duration // how often, at most, it looks (tests shorten it)
}

// phone is what the driver keeps of one device.
type phone struct {
	serial string
	info   adb.DeviceInfo

	ctlMu sync.Mutex              // serializes the control session's start and use
	ctl   *session                // the control session, nil until the first action
	vid   atomic.Pointer[session] // ctl, for reads that must not wait for ctlMu

	pushMu sync.Mutex // guards pushed
	pushed string     // which scrcpy server file is on the phone (pushedID), "" when none yet

	// readMu serializes the phone's dumps: Android allows one UiAutomation
	// client at a time, so an agent's read and the recorder's would fail
	// each other ("already registered").
	readMu sync.Mutex
	// level is the phone's API level, learned at the first read that
	// needs it (a dialog's window on top); 0 until then, -1 when getprop
	// failed. readMu guards it.
	level int
	// kept is the last read of display 0, given again while nothing
	// changed (reuse.go). readMu guards it.
	kept  *keptRead
	dumps atomic.Int64 // how many dumps of display 0 were made (tests)

	acted stamp // when the driver's last action on the phone returned (WaitIdle)

	creating sync.Mutex       // one CreateDisplay at a time
	dispMu   sync.Mutex       // guards displays
	displays map[int]*display // the background displays, by id
}

// New returns a driver; it reaches the adb server on first use.
func New(cfg Config) (*Driver, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	c, err := adb.New(cfg.ADB)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, log: log, adb: c, phones: map[string]*phone{}, versions: map[string]androidRelease{}, looked: time.Now(), lookEvery: scrcpyLookEvery}
	d.declared = sdk.Capabilities(d)
	if cfg.Scrcpy.Path != "" {
		s := cfg.Scrcpy
		d.scrcpy, d.scrFile = &s, fileID(s.Path)
	} else {
		d.scrErr = cfg.NoScrcpy
		if d.scrErr == nil {
			d.scrErr = ErrNoScrcpyServer
		}
		log.Warn(scrcpyProblem, "check", CheckScrcpy, "fix", scrcpyFix, "err", d.scrErr)
	}
	if d.scrcpy != nil {
		log.Info("scrcpy server found", "check", CheckScrcpy, "path", d.scrcpy.Path, "version", d.scrcpy.Version)
	}
	return d, nil
}

// Close ends every scrcpy session, and so every background display.
func (d *Driver) Close() {
	d.mu.Lock()
	phones := make([]*phone, 0, len(d.phones))
	for _, p := range d.phones {
		phones = append(phones, p)
	}
	d.mu.Unlock()
	for _, p := range phones {
		p.endControl()
		p.endDisplays()
	}
}

// Info implements sdk.Driver.
func (d *Driver) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name: "android", Version: Version,
		Description: "Android phones over adb (USB or Wi-Fi), with scrcpy for video and input",
		Platforms:   []sdk.Platform{sdk.PlatformAndroid},
	}, nil
}

// Backoff of WatchDevices while no adb server answers.
const (
	watchBackoffMin = 250 * time.Millisecond
	watchBackoffMax = 5 * time.Second
)

// WatchDevices implements sdk.Driver from the adb server's device tracking.
// When the server goes away (killed, restarted, upgraded), every phone it
// listed turns offline and the driver tracks again with backoff until a
// server answers (the adb client starts one unless told not to); the new
// server's first list then says which phones are back, and which are gone.
// The watch ends only with ctx or send.
func (d *Driver) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	var prev []adb.DeviceInfo
	synced := false
	locks := map[string]Lock{}               // the last lock state sent, by serial
	sentCaps := map[string]*sdk.DeviceCaps{} // the capabilities last sent, by serial
	withLock := func(info adb.DeviceInfo) sdk.Device {
		dev := device(info)
		if v, ok := d.versionOf(info.Serial); ok {
			dev.OSVersion = v.release
		}
		if l, ok := locks[info.Serial]; ok && info.State == adb.StateDevice {
			dev.LockState, dev.ScreenOn = lockOf(l), l.ScreenOn
		}
		// What the phone can do now, said with each event (caps.go).
		dev.Caps = d.caps(info.Serial)
		sentCaps[info.Serial] = dev.Caps
		return dev
	}
	// readVersion learns the Android version of an online phone that
	// has none yet (background displays need 13).
	readVersion := func(serial string) {
		if _, seen := d.versionOf(serial); seen {
			return
		}
		vctx, cancel := context.WithTimeout(ctx, lockPollTimeout)
		defer cancel()
		if level, rel, err := androidVersion(vctx, d.adb.Device(serial)); err == nil {
			d.setVersion(serial, androidRelease{level: level, release: rel})
		}
	}
	emit := func(list []adb.DeviceInfo) error {
		for _, ev := range adb.Diff(prev, list) {
			kind := map[adb.EventKind]sdk.DeviceEventKind{adb.DeviceAdded: sdk.DeviceAdded, adb.DeviceRemoved: sdk.DeviceRemoved, adb.DeviceChanged: sdk.DeviceChanged}[ev.Kind]
			if ev.Device.State == adb.StateUnauthorized && ev.Kind != adb.DeviceRemoved {
				d.log.Warn("a phone has not authorized this computer: accept the \"Allow USB debugging?\" prompt on the phone", "serial", ev.Device.Serial)
			}
			if ev.Kind == adb.DeviceRemoved {
				d.forgetVersion(ev.Device.Serial)
				delete(sentCaps, ev.Device.Serial)
			}
			if ev.Kind == adb.DeviceRemoved || ev.Device.State != adb.StateDevice {
				delete(locks, ev.Device.Serial)
			} else if _, known := locks[ev.Device.Serial]; !known {
				// A phone that comes online is listed with its lock state,
				// and with its Android version (background displays need 13).
				dev := d.adb.Device(ev.Device.Serial)
				lctx, cancel := context.WithTimeout(ctx, lockPollTimeout)
				if l, err := lockState(lctx, dev); err == nil {
					locks[ev.Device.Serial] = l
				}
				cancel()
				readVersion(ev.Device.Serial)
			}
			if err := send(sdk.DeviceEvent{Kind: kind, Device: withLock(ev.Device)}); err != nil {
				return err
			}
		}
		prev = list
		if !synced {
			synced = true
			return send(sdk.DeviceEvent{Kind: sdk.DevicesSynced})
		}
		return nil
	}
	// pollLocks reads each online phone's lock and screen state and sends a
	// change as a device event (the contract's lock events), and so does
	// a change of what a phone can do (a scrcpy server found, a version
	// learned).
	pollLocks := func() error {
		for _, info := range prev {
			if info.State != adb.StateDevice {
				if !sameCaps(d.caps(info.Serial), sentCaps[info.Serial]) {
					if err := send(sdk.DeviceEvent{Kind: sdk.DeviceChanged, Device: withLock(info)}); err != nil {
						return err
					}
				}
				continue
			}
			readVersion(info.Serial)
			capsChanged := !sameCaps(d.caps(info.Serial), sentCaps[info.Serial])
			lctx, cancel := context.WithTimeout(ctx, lockPollTimeout)
			l, err := lockState(lctx, d.adb.Device(info.Serial))
			cancel()
			lockChanged := false
			if err == nil {
				old, known := locks[info.Serial]
				locks[info.Serial] = l
				lockChanged = !known || old.Locked != l.Locked || old.ScreenOn != l.ScreenOn
			}
			// A failed read is left to the track, which tells when the
			// phone is gone.
			if !lockChanged && !capsChanged {
				continue
			}
			if err := send(sdk.DeviceEvent{Kind: sdk.DeviceChanged, Device: withLock(info)}); err != nil {
				return err
			}
		}
		return nil
	}
	poll := time.NewTicker(lockPollEvery)
	defer poll.Stop()
	backoff := watchBackoffMin
	problem, answered := "", false // the adb check last logged
	for {
		tctx, stopTrack := context.WithCancel(ctx)
		lists, ended := d.track(tctx)
		var trackErr error
	track:
		for {
			select {
			case <-ctx.Done():
				stopTrack()
				return nil
			case list := <-lists:
				backoff = watchBackoffMin
				if problem != "" || !answered {
					d.log.Info("the adb server answers", "check", CheckADB, "addr", d.adb.Addr())
					problem, answered = "", true
				}
				d.remember(list)
				if err := emit(list); err != nil {
					stopTrack()
					return err
				}
			case <-poll.C:
				if err := pollLocks(); err != nil {
					stopTrack()
					return err
				}
			case trackErr = <-ended:
				break track
			}
		}
		stopTrack()
		if ctx.Err() != nil {
			return nil
		}
		// The server went away or never answered: its phones are offline
		// until a server lists them again. A first watch still gets its
		// SYNCED, so that the gateway does not wait for a server.
		// The problem is logged when it changes, as the check the person
		// reads in `pinky doctor`; the retries in between only at debug.
		if p, fix := adbProblem(trackErr, d.adb.Addr()); p != problem {
			problem = p
			d.log.Warn(p, "check", CheckADB, "fix", fix, "err", trackErr)
		}
		d.log.Debug("the adb server does not answer; tracking again", "err", trackErr, "in", backoff)
		offline := make([]adb.DeviceInfo, len(prev))
		for i, info := range prev {
			info.State, info.StateText = adb.StateOffline, ""
			offline[i] = info
		}
		d.serverLost()
		if err := emit(offline); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, watchBackoffMax)
	}
}

// Lock events: each online phone's lock and screen state is read this
// often (two dumpsys calls) and a change sent as a device event.
const (
	lockPollEvery   = 2 * time.Second
	lockPollTimeout = 3 * time.Second
)

// LockEvents implements sdk.LockEventer: WatchDevices sends lock and
// screen changes.
func (d *Driver) LockEvents() bool { return true }

// lockOf is the contract's lock state of a Lock.
func lockOf(l Lock) sdk.LockState {
	if l.Locked {
		return sdk.LockLocked
	}
	return sdk.LockUnlocked
}

// track runs the adb server's device tracking in the background: its lists
// come on the first channel; what ended it (never nil) on the second.
func (d *Driver) track(ctx context.Context) (<-chan []adb.DeviceInfo, <-chan error) {
	lists, ended := make(chan []adb.DeviceInfo), make(chan error, 1)
	go func() {
		for list, err := range d.adb.TrackDevices(ctx) {
			if err != nil {
				ended <- err
				return
			}
			select {
			case lists <- list:
			case <-ctx.Done():
				ended <- ctx.Err()
				return
			}
		}
		ended <- errors.New("the adb server ended the device tracking")
	}()
	return lists, ended
}

// remember keeps the adb server's full device list for the phones'
// details; a phone it no longer lists is forgotten, and its scrcpy session
// ended.
func (d *Driver) remember(list []adb.DeviceInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	listed := make(map[string]bool, len(list))
	for _, info := range list {
		listed[info.Serial] = true
		if p := d.phones[info.Serial]; p != nil {
			p.info = info
		} else {
			d.phones[info.Serial] = &phone{serial: info.Serial, info: info, displays: map[int]*display{}}
		}
	}
	for serial, p := range d.phones {
		if !listed[serial] {
			delete(d.phones, serial)
			delete(d.versions, serial)
			// An action may hold the session's lock: end it without waiting.
			// The phone's background displays end with their sessions.
			go p.endControl()
			go p.endDisplays()
		}
	}
}

// serverLost marks every phone offline: the adb server that listed them
// is gone, and a new one lists them again only once they reconnect.
func (d *Driver) serverLost() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.phones {
		p.info.State = adb.StateOffline
	}
}

// endControl ends the phone's scrcpy session, if any.
func (p *phone) endControl() {
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	if p.ctl != nil {
		p.ctl.close()
		p.ctl = nil
		p.vid.Store(nil)
	}
}

// device is the contract's view of an adb device.
func device(info adb.DeviceInfo) sdk.Device {
	dev := sdk.Device{
		ID: info.Serial, Name: strings.ReplaceAll(info.Model, "_", " "), Model: strings.ReplaceAll(info.Model, "_", " "),
		Platform: sdk.PlatformAndroid, Connection: sdk.ConnUSB,
	}
	if strings.Contains(info.Serial, ":") || strings.HasPrefix(info.Serial, "adb-") {
		dev.Connection = sdk.ConnWiFi // host:port, or an mDNS name
	}
	if dev.Name == "" {
		dev.Name = info.Serial
	}
	switch info.State {
	case adb.StateDevice:
		dev.State = sdk.StateOnline
	case adb.StateUnauthorized, adb.StateAuthorizing:
		dev.State = sdk.StateUnauthorized
		dev.StateDetail = "the phone has not allowed this computer: accept the \"Allow USB debugging?\" prompt on it"
	case adb.StateNoPermissions:
		dev.State = sdk.StateOffline
		dev.StateDetail = "no permission to open the USB device: add a udev rule for the phone (see adb's documentation), then plug it in again"
	case adb.StateOffline, adb.StateConnecting:
		dev.State = sdk.StateOffline
		dev.StateDetail = "adb lists the phone as " + string(info.State) + ": unplug and plug it in again, or adb connect it again"
	default:
		dev.State = sdk.StateBooting
		dev.StateDetail = "adb lists the phone as " + string(info.State)
	}
	return dev
}

// phone returns the phone with serial, ready for services, or the error
// the contract wants: not found, unauthorized (with what to do), offline.
// A phone not known, or known in another state than ready, is looked up on
// the adb server again: it may have come back.
func (d *Driver) phone(ctx context.Context, serial string) (*phone, *adb.Device, error) {
	if serial == "" {
		return nil, nil, sdk.Invalid("device id is empty")
	}
	p, info := d.known(serial)
	if p == nil || info.State != adb.StateDevice {
		list, err := d.adb.Devices(ctx)
		if err != nil {
			return nil, nil, mapErr(err)
		}
		d.remember(list)
		if p, info = d.known(serial); p == nil {
			return nil, nil, sdk.Errorf(sdk.ErrDeviceNotFound, "no Android device %q on the adb server", serial)
		}
	}
	switch info.State {
	case adb.StateDevice:
	case adb.StateUnauthorized:
		return nil, nil, sdk.Errorf(sdk.ErrDeviceUnauthorized, "%s has not authorized this computer: accept the \"Allow USB debugging?\" prompt on the phone", serial)
	default:
		return nil, nil, sdk.Errorf(sdk.ErrDeviceOffline, "%s is %s", serial, info.State)
	}
	return p, d.adb.Device(serial), nil
}

// known returns the phone with serial and its last details, or nil.
func (d *Driver) known(serial string) (*phone, adb.DeviceInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.phones[serial]
	if p == nil {
		return nil, adb.DeviceInfo{}
	}
	return p, p.info
}

// mapErr keeps the contract's categories that adb errors carry; an adb
// server that does not answer makes the phones offline (the driver tracks
// it again); anything else is an internal error with its text.
func mapErr(err error) error {
	var cat *sdk.Error
	if err == nil || errors.As(err, &cat) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return err // the caller went away; the gateway knows this one
	case errors.Is(err, context.DeadlineExceeded):
		return sdk.Errorf(sdk.ErrTimeout, "%v", err)
	case errors.Is(err, adb.ErrServerNotRunning):
		return sdk.Errorf(sdk.ErrDeviceOffline, "%v", err)
	}
	return sdk.Errorf(sdk.ErrInternal, "%v", err)
}

// shell runs a command and returns its stdout, or an error with its stderr
// when it exits non-zero.
func shell(ctx context.Context, dev *adb.Device, cmd string) ([]byte, error) {
	r, err := dev.Shell(ctx, cmd)
	if err != nil {
		return nil, mapErr(err)
	}
	if r.Exit != 0 {
		msg := strings.TrimSpace(string(r.Stderr))
		if msg == "" {
			msg = strings.TrimSpace(string(r.Stdout))
		}
		return r.Stdout, fmt.Errorf("%s: exit %d: %s", firstWord(cmd), r.Exit, msg)
	}
	return r.Stdout, nil
}

// shellAll runs a command and returns its stdout and then its stderr, for
// commands such as am that print their failures and exit 0 all the same; it
// returns an error when the command exits non-zero, as shell does.
func shellAll(ctx context.Context, dev *adb.Device, cmd string) ([]byte, error) {
	r, err := dev.Shell(ctx, cmd)
	if err != nil {
		return nil, mapErr(err)
	}
	all := append(append([]byte(nil), r.Stdout...), r.Stderr...)
	if r.Exit != 0 {
		return all, fmt.Errorf("%s: exit %d: %s", firstWord(cmd), r.Exit, strings.TrimSpace(string(all)))
	}
	return all, nil
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}
