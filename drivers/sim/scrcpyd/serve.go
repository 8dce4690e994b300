package scrcpyd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// ServerVersion is the fake server's version unless Server.Version says
// another. Like the real server, it starts only for a client that sends
// exactly its version; it speaks the protocol of any 3.x or 4.x version it
// is made as.
const ServerVersion = "4.1"

// Server is a fake scrcpy server of one version for one phone.
type Server struct {
	// Version is the only version the server starts for; empty is
	// ServerVersion. It must be one scrcpy.ParseVersion takes.
	Version string
	Driver  sdk.Driver
	Device  string
	// Dial connects to the client through its reverse tunnel, as the real
	// server connects to its local abstract socket when tunnel_forward is
	// false; it is called once per socket. nil: the server refuses reverse
	// tunnels.
	Dial func(ctx context.Context) (net.Conn, error)
}

func (s Server) version() string {
	if s.Version == "" {
		return ServerVersion
	}
	return s.Version
}

// ErrUsage means the server arguments were rejected; the real server exits
// with status 1 then.
var ErrUsage = errors.New("scrcpy server: bad arguments")

// errVersion marks the version mismatch, which the real server reports
// with an IllegalArgumentException's stack trace.
var errVersion = errors.New("version")

// Log levels, as Ln.java orders them.
const (
	levelVerbose = iota
	levelDebug
	levelInfo
	levelWarn
	levelError
)

var levelNames = map[string]int{"verbose": levelVerbose, "debug": levelDebug, "info": levelInfo, "warn": levelWarn, "error": levelError}

// options are the parsed server arguments.
type options struct {
	version                  scrcpy.Version
	scid                     int64 // -1: unset
	logLevel                 int
	video, audio             bool
	control                  bool
	codec                    string
	maxSize                  int  // 3.x: rounded down to a multiple of 8, as Options.parse does
	minSizeAlignment         int  // 4.x: min_size_alignment, 1 by default
	ignoreEncoderConstraints bool // 4.1: ignore_video_encoder_constraints
	maxFPS                   int
	bitRate                  int
	tunnelForward            bool
	displayID                int
	newDisplay               string // new_display's value: "WxH", "WxH/dpi", "/dpi" or ""
	newDisplaySet            bool   // new_display was given (even empty: the main display's size)
	sendDeviceMeta           bool
	sendDummyByte            bool
	sendStreamMeta           bool
	sendFrameMeta            bool
	powerOn                  bool
	clipboardAutosync        bool
	list                     lists // list_*: print and exit
}

// logger writes lines as the real server's Ln does: "[server] LEVEL: msg",
// verbose to info on stdout, warn and error on stderr.
type logger struct {
	mu             sync.Mutex
	level          int
	stdout, stderr io.Writer
}

func (l *logger) log(level int, format string, args ...any) {
	if level < l.level {
		return
	}
	name := [...]string{"VERBOSE", "DEBUG", "INFO", "WARN", "ERROR"}[level]
	w := l.stdout
	if level >= levelWarn {
		w = l.stderr
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(w, "[server] %s: %s\n", name, fmt.Sprintf(format, args...))
}

// trace writes an exception's stack trace after an error line, on stderr
// as Ln.e prints it.
func (l *logger) trace(format string, args ...any) {
	if levelError < l.level {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.stderr, format, args...)
}

// parseArgs parses what follows com.genymobile.scrcpy.Server on the command
// line, like Options.parse.
func parseArgs(version string, args []string, log *logger) (options, error) {
	if len(args) < 1 {
		return options{}, errors.New("Missing client version")
	}
	// Options.parse compares the strings: "3.3" is not "3.3.0".
	if args[0] != version {
		return options{}, fmt.Errorf("%w: The server version (%s) does not match the client (%s)", errVersion, version, args[0])
	}
	v, err := scrcpy.ParseVersion(version)
	if err != nil {
		return options{}, fmt.Errorf("the fake server cannot be version %s: %w", version, err)
	}
	o := options{
		version: v, scid: -1, logLevel: levelDebug, video: true, audio: true, control: true, codec: "h264",
		sendDeviceMeta: true, sendDummyByte: true, sendStreamMeta: true, sendFrameMeta: true, powerOn: true, clipboardAutosync: true,
		minSizeAlignment: 1,
	}
	boolean := func(s string) bool { return strings.EqualFold(s, "true") } // Boolean.parseBoolean
	integer := func(key, s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("Invalid value for %s: %q", key, s)
		}
		return n, nil
	}
	for _, arg := range args[1:] {
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			return options{}, fmt.Errorf("Invalid key=value pair: %q", arg)
		}
		switch key {
		case "scid":
			n, err := strconv.ParseInt(value, 16, 32)
			if err != nil || n < -1 {
				return options{}, fmt.Errorf("Invalid scid: %s", value)
			}
			o.scid = n
		case "log_level":
			l, ok := levelNames[strings.ToLower(value)]
			if !ok {
				return options{}, fmt.Errorf("Invalid log level: %s", value)
			}
			o.logLevel = l
			log.level = l
		case "video":
			o.video = boolean(value)
		case "audio":
			o.audio = boolean(value)
		case "control":
			o.control = boolean(value)
		case "video_codec":
			o.codec = value
		case "max_size":
			if o.maxSize, err = integer(key, value); err != nil {
				return options{}, err
			}
			if v.Major < 4 {
				o.maxSize &^= 7 // 3.x's Options.parse: "multiple of 8"
			}
		case "min_size_alignment":
			if v.Major < 4 {
				log.log(levelWarn, "Unknown server option: %s", key)
				continue
			}
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 || n > 16 || n&(n-1) != 0 {
				return options{}, fmt.Errorf("min_size_alignment (%s) must be 1, 2, 4, 8 or 16", value)
			}
			o.minSizeAlignment = n
		case "ignore_video_encoder_constraints":
			if v.Major < 4 || (v.Major == 4 && v.Minor < 1) {
				log.log(levelWarn, "Unknown server option: %s", key)
				continue
			}
			o.ignoreEncoderConstraints = boolean(value)
		case "max_fps":
			f, err := strconv.ParseFloat(value, 32)
			if err != nil || f < 0 {
				return options{}, fmt.Errorf("Invalid value for max_fps: %q", value)
			}
			o.maxFPS = int(f + 0.5)
		case "video_bit_rate":
			if o.bitRate, err = integer(key, value); err != nil {
				return options{}, err
			}
		case "tunnel_forward":
			o.tunnelForward = boolean(value)
		case "display_id":
			if o.displayID, err = integer(key, value); err != nil {
				return options{}, err
			}
		case "new_display":
			o.newDisplay, o.newDisplaySet = value, true
		case "send_device_meta":
			o.sendDeviceMeta = boolean(value)
		case "send_dummy_byte":
			o.sendDummyByte = boolean(value)
		case "send_frame_meta":
			o.sendFrameMeta = boolean(value)
		case "send_codec_meta", "send_stream_meta":
			if (key == "send_stream_meta") != (v.Major >= 4) {
				log.log(levelWarn, "Unknown server option: %s", key)
				continue
			}
			o.sendStreamMeta = boolean(value)
		case "raw_stream":
			if boolean(value) {
				o.sendDeviceMeta, o.sendDummyByte, o.sendStreamMeta, o.sendFrameMeta = false, false, false, false
			}
		case "list_encoders":
			o.list.encoders = boolean(value)
		case "list_displays":
			o.list.displays = boolean(value)
		case "list_cameras":
			o.list.cameras = boolean(value)
		case "list_camera_sizes":
			o.list.cameraSizes = boolean(value)
		case "list_apps":
			o.list.apps = boolean(value)
		case "clipboard_autosync":
			o.clipboardAutosync = boolean(value)
		case "power_on":
			o.powerOn = boolean(value)
		case "audio_codec", "audio_bit_rate", "audio_source", "audio_dup", "video_source", "max_size_alignment", "crop", "angle", "capture_orientation", "show_touches", "stay_awake",
			"power_off_on_close", "screen_off_timeout", "video_codec_options", "video_encoder",
			"downsize_on_error", "cleanup", "vd_destroy_content", "vd_system_decorations",
			"display_ime_policy", "keyboard", "mouse":
			// Accepted and without effect on the virtual phone.
		default:
			log.log(levelWarn, "Unknown server option: %s", key)
		}
	}
	if o.newDisplaySet && o.displayID != 0 {
		return options{}, errors.New("Cannot specify both new_display and display_id")
	}
	return o, nil
}

// Serve parses the server arguments (the first must be the server's
// version), accepts the video and control connections on lis (the adb
// face's local abstract socket named scrcpy.SocketName(scid)), in scrcpy's
// order, and serves the virtual phone's H.264 video
// (sdk.Streamer.StreamVideo of the driver for the device, at max_size) and
// applies control messages to it (touch down/up → tap, down-move-up → swipe,
// long press, keys (Android keycodes → sdk.Key), text → sdk type action, set
// clipboard (+paste), get clipboard, reset video → a restarted stream,
// back-or-screen-on, set display power, start app), as the package doc
// says. It writes what the real
// server prints to stdout/stderr ("[server] INFO: Device: …"), and returns
// when the connections close or ctx ends. Like the real server, it closes lis
// once every connection is accepted.
//
// With display_id=N the session shows and drives the phone's display N.
// With new_display=[WxH][/DPI] it makes a background display through drv's
// sdk.Displayer once the connections are accepted, prints "[server] INFO:
// New display: WxH/DPI (id=N)" as the real server does, shows and drives
// that display (START_APP launches onto it), and removes it when the
// session ends.
//
// With tunnel_forward=false it connects through Server.Dial instead (lis is
// unused), once per socket, and sends no dummy byte; a refused connection
// is logged as the real server logs its IOException and returned.
//
// A rejected argument (a version other than its own, a reverse tunnel
// without Server.Dial, a codec other than h264) is printed as the real server prints it and
// returned wrapped in ErrUsage; the adb face should exit with status 1.
func (srv Server) Serve(ctx context.Context, args []string, lis net.Listener, stdout, stderr io.Writer) error {
	disp, _ := srv.Driver.(sdk.Displayer)
	return srv.serve(ctx, args, lis, disp, stdout, stderr)
}

// serve is Serve with the displays made through disp (the adb face, which
// lists them in its dumps), nil when the phone makes none.
func (srv Server) serve(ctx context.Context, args []string, lis net.Listener, disp sdk.Displayer, stdout, stderr io.Writer) error {
	drv, device := srv.Driver, srv.Device
	log := &logger{level: levelDebug, stdout: stdout, stderr: stderr}
	fail := func(err error) error {
		log.log(levelError, "%s", err)
		return fmt.Errorf("%w: %w", ErrUsage, err)
	}
	o, err := parseArgs(srv.version(), args, log)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), errVersion.Error()+": ")
		log.log(levelError, "%s", msg)
		if errors.Is(err, errVersion) {
			// What Ln.e prints next: the exception's stack trace, and
			// Server.main exits with status 1.
			fmt.Fprintf(stderr, "java.lang.IllegalArgumentException: %s\n\tat com.genymobile.scrcpy.Options.parse(Options.java:331)\n\tat com.genymobile.scrcpy.Server.internalMain(Server.java:202)\n\tat com.genymobile.scrcpy.Server.main(Server.java:215)\n\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:399)\n", msg)
		}
		return fmt.Errorf("%w: %s", ErrUsage, msg)
	}
	if o.list.any() {
		// The real server prints the device and the lists, and exits
		// before it opens any connection.
		dev, err := lookup(ctx, drv, device)
		if err != nil {
			return fail(err)
		}
		logDevice(log, dev)
		srv.printLists(ctx, o.list, disp, log)
		return nil
	}
	switch {
	case !o.tunnelForward && srv.Dial == nil:
		return fail(errors.New("Reverse tunnel is not supported by the virtual phone: pass tunnel_forward=true"))
	case o.video && o.codec != "h264":
		return fail(fmt.Errorf("Could not find encoder for %s: the virtual phone encodes h264 only", o.codec))
	case o.newDisplaySet && disp == nil:
		return fail(errors.New("Could not create display: the virtual phone makes no virtual displays"))
	}
	var nd newDisplay
	if o.newDisplaySet {
		if nd, err = parseNewDisplay(o.newDisplay); err != nil {
			return fail(err)
		}
	}
	if o.displayID != 0 {
		if _, err := drv.Screen(ctx, device, o.displayID); err != nil {
			return fail(fmt.Errorf("Display %d not found", o.displayID))
		}
	}
	streamer, ok := drv.(sdk.Streamer)
	if o.video && !ok {
		return fail(errors.New("Video capture is not supported by this phone"))
	}
	dev, err := lookup(ctx, drv, device)
	if err != nil {
		return fail(err)
	}
	logDevice(log, dev)

	s := &session{o: o, log: log, drv: drv, streamer: streamer, device: device, display: o.displayID, reset: make(chan struct{}, 1), sizer: newSizer(o)}
	open := func() error { return s.accept(ctx, lis) }
	if !o.tunnelForward {
		open = func() error { return s.connect(ctx, srv.Dial) }
	}
	if err := open(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer s.closeAll()
	if o.newDisplaySet {
		// The real server makes the display when its capture starts, once
		// the client is connected, and destroys it (and its content) when
		// it exits.
		id, err := s.createDisplay(ctx, disp, nd)
		if err != nil {
			log.log(levelError, "Could not create display: %v", err)
			return fmt.Errorf("scrcpy server: could not create display: %w", err)
		}
		defer func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := disp.RemoveDisplay(rctx, device, id); err != nil {
				log.log(levelWarn, "Could not release the virtual display %d: %v", id, err)
			}
		}()
	}
	return s.run(ctx, dev)
}

// logDevice prints the line the real server starts with.
func logDevice(log *logger, dev sdk.Device) {
	log.log(levelInfo, "Device: [%s] %s %s (Android %s)", dev.Manufacturer, strings.ToLower(dev.Manufacturer), dev.Model, dev.OSVersion)
}

// newDisplay is a parsed new_display value; zero fields are the main
// display's.
type newDisplay struct {
	width, height, dpi int
}

// parseNewDisplay parses "[WxH][/DPI]", as NewDisplay.parse does.
func parseNewDisplay(v string) (newDisplay, error) {
	var nd newDisplay
	size, dpi, hasDPI := strings.Cut(v, "/")
	if size != "" {
		w, h, ok := strings.Cut(size, "x")
		var errW, errH error
		nd.width, errW = strconv.Atoi(w)
		nd.height, errH = strconv.Atoi(h)
		if !ok || errW != nil || errH != nil || nd.width <= 0 || nd.height <= 0 {
			return nd, fmt.Errorf("Invalid new display size: %s", size)
		}
	}
	if hasDPI {
		n, err := strconv.Atoi(dpi)
		if err != nil || n <= 0 {
			return nd, fmt.Errorf("Invalid new display dpi: %s", dpi)
		}
		nd.dpi = n
	}
	return nd, nil
}

// createDisplay makes the session's display, as NewDisplayCapture does: a
// missing size is the main display's in its natural orientation (4.x
// aligns the size to the video alignment), a missing density the main
// display's scaled to the size. The video of the display is sized as any
// (the sizer). It prints the real server's line and routes the session to
// the display.
func (s *session) createDisplay(ctx context.Context, disp sdk.Displayer, nd newDisplay) (int, error) {
	w, h, dpi := nd.width, nd.height, nd.dpi
	if w == 0 || dpi == 0 {
		main, err := s.drv.Screen(ctx, s.device, 0)
		if err != nil {
			return 0, err
		}
		mw, mh := naturalSize(main)
		if w == 0 {
			w, h = mw, mh
		}
		w, h = s.sizer.display(w, h)
		if dpi == 0 {
			dpi = main.DensityDPI * max(w, h) / max(mw, mh, 1) // scaleDpi
		}
	} else {
		w, h = s.sizer.display(w, h)
	}
	id, err := disp.CreateDisplay(ctx, s.device, w, h, dpi)
	if err != nil {
		return 0, err
	}
	s.log.log(levelInfo, "New display: %dx%d/%d (id=%d)", w, h, dpi, id)
	s.display = id
	return id, nil
}

// lookup finds device among drv's devices.
func lookup(ctx context.Context, drv sdk.Driver, id string) (sdk.Device, error) {
	devs, err := sdk.ListDevices(ctx, drv)
	if err != nil {
		return sdk.Device{}, fmt.Errorf("Could not list devices: %v", err)
	}
	for _, dev := range devs {
		if dev.ID == id {
			return dev, nil
		}
	}
	return sdk.Device{}, fmt.Errorf("Device %q not found", id)
}

// SocketName is the local abstract socket a server started with args
// listens on: "scrcpy_" and its scid in 8 hex digits, or "scrcpy" without
// one, as the real server names it.
func SocketName(args []string) (string, error) {
	for _, arg := range args {
		if v, ok := strings.CutPrefix(arg, "scid="); ok {
			n, err := strconv.ParseInt(v, 16, 32)
			if err != nil || n < -1 {
				return "", fmt.Errorf("Invalid scid: %s", v)
			}
			if n <= 0 {
				return "scrcpy", nil
			}
			return fmt.Sprintf("scrcpy_%08x", n), nil
		}
	}
	return "scrcpy", nil
}
