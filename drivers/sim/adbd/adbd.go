package adbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
)

// ScrcpyServerClass is the main class of the scrcpy server's jar.
const ScrcpyServerClass = "com.genymobile.scrcpy.Server"

// Config says which phone a Server serves and how.
type Config struct {
	// Driver is the sim driver (in process). The face uses sdk.Driver and the
	// optional sdk.Waker, sdk.AppLister and sdk.Filer when it implements them.
	Driver sdk.Driver
	// DeviceID names the driver's phone; empty picks its first Android phone.
	DeviceID string
	// Serial is what getprop ro.serialno and the banner show; default
	// "pinky-sim-<id>". adb itself lists the device as HOST:PORT.
	Serial string
	// AppProcess runs when a shell is asked to run app_process, which is how
	// the scrcpy server starts:
	//
	//	CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server VERSION key=value…
	//
	// It gets the arguments after the class name, the stream's stdout and
	// stderr, and the device (to listen on local abstract sockets), and
	// returns when the server ends; ctx ends when the adb stream closes. nil:
	// app_process is missing, like any unknown command.
	//
	// As on a phone, app_process aborts ("Aborted", exit 134) unless the
	// first CLASSPATH entry is a file on the phone (pushed there first) and
	// the class is AppProcessClass.
	AppProcess func(ctx context.Context, args []string, stdout, stderr io.Writer, d *Device) error
	// AppProcessClass is the only class app_process can load; empty is
	// ScrcpyServerClass.
	AppProcessClass string
	// Unauthorized makes the face answer every handshake with AUTH tokens and
	// never accept, so that adb lists the device as unauthorized.
	Unauthorized bool
	// SDKLevel is the phone's API level (getprop ro.build.version.sdk, and
	// the release that goes with it); 0 takes it from the driver's Android
	// version. Below 33 (Android 13), `uiautomator dump --windows` writes
	// the single-display document, as older phones' uiautomator does.
	SDKLevel int
	// Commands adds shell commands, or replaces built-in ones, by name: a
	// fault test's command that prints garbage, hangs, or cuts its stream
	// short (return CutStream). A command gets the shell's context (it ends
	// when the adb stream closes), its arguments, stdin, stdout and stderr,
	// and returns its exit status.
	Commands map[string]func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
	// Logger gets debug and error logs; nil discards them.
	Logger *slog.Logger
	// Timing is how long uiautomator, input and screencap take; the zero
	// value answers at once (timing.Phone takes a real phone's time).
	Timing timing.Profile
}

// CutStream is the status a Config.Commands command returns to end its
// shell stream at once, with no exit packet and no more commands, as if the
// phone dropped it.
const CutStream = -1

// Server is an emulated adbd for one virtual phone, listening on TCP.
type Server struct {
	ln     net.Listener
	dev    *Device
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex // guards conns and closed
	conns  map[*conn]struct{}
	nconns int // connections accepted, which name their transports
}

// Listen starts serving cfg's phone on addr ("127.0.0.1:0" picks a port).
// Avoid odd ports from 5555 to 5585: the adb server probes them for
// emulators and would list the phone twice.
func Listen(addr string, cfg Config) (*Server, error) {
	if cfg.Driver == nil {
		return nil, errors.New("adbd: Config.Driver is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	dev, err := newDevice(ctx, cfg)
	if err != nil {
		cancel()
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		cancel()
		dev.close()
		return nil, fmt.Errorf("adbd: %w", err)
	}
	s := &Server{ln: ln, dev: dev, ctx: ctx, cancel: cancel, conns: map[*conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Device is the phone the server serves.
func (s *Server) Device() *Device { return s.dev }

// Close stops listening, drops every adb connection (adb then shows the
// device offline) and waits for the services to end.
func (s *Server) Close() error {
	s.cancel()
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.dev.close()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.ctx.Err() == nil {
				s.dev.log.Error("adbd: accept", "err", err)
			}
			return
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			tc.SetNoDelay(true)
		}
		ctx, end := context.WithCancel(s.ctx)
		c := &conn{dev: s.dev, nc: nc, ctx: ctx, end: end, version: versionMin, maxData: maxPayload, streams: map[uint32]*stream{}}
		s.mu.Lock()
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			end()
			nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.nconns++
		c.name = fmt.Sprintf("host-%d", s.nconns)
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := c.serve(); err != nil {
				s.dev.log.Debug("adbd: connection ended", "remote", nc.RemoteAddr(), "err", err)
			}
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

// Device is the phone a Server serves: its properties, files, settings and
// local abstract sockets.
type Device struct {
	cfg  Config
	id   string
	info sdk.Device
	log  *slog.Logger
	ctx  context.Context
	fs   *fsys

	mu        sync.Mutex // guards settings, abstract, reverse, pin, displays and installed
	settings  map[string]string
	abstract  map[string]*abstractListener
	reverse   []*reverseListener // adb reverse's listeners, in the order made (reverse.go)
	pin       []byte             // digits typed on the lock screen
	displays  map[int]bool       // background displays made through CreateDisplay
	installed map[string]bool    // packages pm install added (install.go)

	uiAutomation atomic.Bool // a uiautomator dump holds the phone's UiAutomation
}

// uiAutomationHold is how long a dump holds the UiAutomation here (a real
// one waits for the screen to idle, a second or more).
const uiAutomationHold = 20 * time.Millisecond

// ID is the driver's id of the phone.
func (d *Device) ID() string { return d.id }

// Serial is the serial the phone reports.
func (d *Device) Serial() string { return d.cfg.Serial }

func newDevice(ctx context.Context, cfg Config) (*Device, error) {
	devs, err := sdk.ListDevices(ctx, cfg.Driver)
	if err != nil {
		return nil, fmt.Errorf("adbd: list devices: %w", err)
	}
	d := &Device{cfg: cfg, log: cfg.Logger, ctx: ctx, settings: defaultSettings(), abstract: map[string]*abstractListener{}, displays: map[int]bool{}}
	for _, dev := range devs {
		if dev.ID == cfg.DeviceID || (cfg.DeviceID == "" && dev.Platform == sdk.PlatformAndroid) {
			d.info = dev
			break
		}
	}
	if d.info.ID == "" {
		if cfg.DeviceID == "" {
			return nil, fmt.Errorf("adbd: the driver has no Android phone: %w", sdk.ErrDeviceNotFound)
		}
		return nil, fmt.Errorf("adbd: device %q: %w", cfg.DeviceID, sdk.ErrDeviceNotFound)
	}
	d.id = d.info.ID
	// The name the person gave the phone, which tools show: its model's
	// until renamed.
	d.settings["global/device_name"] = d.prop("ro.product.model")
	if d.cfg.Serial == "" {
		d.cfg.Serial = "pinky-sim-" + d.id
	}
	root, err := os.MkdirTemp("", "pinky-adbd-"+d.id+"-")
	if err != nil {
		return nil, fmt.Errorf("adbd: %w", err)
	}
	for _, dir := range []string{"data/local/tmp", "sdcard/Pinky", "sdcard/Download", "system/bin"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("adbd: %w", err)
		}
	}
	d.fs = &fsys{root: root}
	if f, ok := cfg.Driver.(sdk.Filer); ok {
		d.fs.filer, d.fs.id = f, d.id
	}
	return d, nil
}

func (d *Device) close() {
	d.mu.Lock()
	for _, l := range d.abstract {
		l.closeLocked()
	}
	d.reverse = nil
	d.mu.Unlock()
	if d.fs != nil {
		os.RemoveAll(d.fs.root)
	}
}

// banner is the device's CNXN payload: no trailing ";" and no NUL
// (protocols.md 6.2.2).
func (d *Device) banner() string {
	return "device::ro.product.name=" + bannerValue(d.prop("ro.product.name")) +
		";ro.product.model=" + bannerValue(d.prop("ro.product.model")) +
		";ro.product.device=" + bannerValue(d.prop("ro.product.device")) +
		";features=" + features
}

// bannerValue drops the characters that would break the banner's grammar.
func bannerValue(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune(":;=,\x00", r) {
			return '_'
		}
		return r
	}, s)
}

// service finds the service an OPEN names.
func (d *Device) service(name string) (func(context.Context, *stream) error, bool) {
	switch {
	case name == "sync:":
		return d.serveSync, true
	case name == "framebuffer:":
		return d.serveFramebuffer, true
	case strings.HasPrefix(name, "shell"):
		args, cmd, ok := strings.Cut(name, ":")
		if !ok {
			return nil, false
		}
		v2 := false
		for _, a := range strings.Split(args, ",")[1:] {
			if a == "v2" {
				v2 = true
			}
		}
		if args != "shell" && !strings.HasPrefix(args, "shell,") {
			return nil, false
		}
		return func(ctx context.Context, s *stream) error { return d.serveShell(ctx, s, args, cmd, v2) }, true
	case strings.HasPrefix(name, "exec:"):
		cmd := strings.TrimPrefix(name, "exec:")
		return func(ctx context.Context, s *stream) error { return d.serveShell(ctx, s, "exec,raw", cmd, false) }, true
	case strings.HasPrefix(name, "localabstract:"):
		if l := d.listener(strings.TrimPrefix(name, "localabstract:")); l != nil {
			return l.serve, true
		}
		return d.reverseService(name)
	case strings.HasPrefix(name, "tcp:"):
		return d.reverseService(name)
	case strings.HasPrefix(name, "reverse:"):
		return func(ctx context.Context, s *stream) error {
			_, err := io.WriteString(s, d.reverseCommand(s.c, strings.TrimPrefix(name, "reverse:")))
			return err
		}, true
	}
	// The rest is refused, which closes a forward's client.
	return nil, false
}

func hex4(s string) string { return fmt.Sprintf("%04x%s", len(s), s) }
