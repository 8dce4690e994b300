package scrcpy

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ServerPath is where the client pushes scrcpy-server on the phone. The server
// finds itself through the first CLASSPATH entry, so it must be absolute.
const ServerPath = "/data/local/tmp/scrcpy-server.jar"

// SCID names one server instance: its socket is "scrcpy_%08x". Zero means
// unset (the server's default of -1, socket "scrcpy"); NewSCID never returns 0.
type SCID uint32

// NewSCID returns a random 31-bit SCID, never 0.
func NewSCID() SCID {
	for {
		var b [4]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
		if id := SCID(binary.BigEndian.Uint32(b[:]) & 0x7fffffff); id != 0 {
			return id
		}
	}
}

// String formats the SCID as the server parses it: 8 lowercase hex digits.
func (s SCID) String() string { return fmt.Sprintf("%08x", uint32(s)) }

// SocketName is the local abstract socket the server listens on (forward
// tunnel) or connects to (reverse tunnel).
func SocketName(scid SCID) string {
	if scid == 0 {
		return "scrcpy"
	}
	return "scrcpy_" + scid.String()
}

// Options are the scrcpy-server options a gateway uses. Start from
// DefaultOptions: a zero Options turns video and control off.
type Options struct {
	SCID     SCID
	LogLevel string // verbose, debug, info, warn or error; "" is the server's default (debug)

	Video        bool
	VideoCodec   string // h264 (""), h265 or av1
	MaxSize      int    // limit on the longer side in pixels; 0 is none
	MaxFPS       int    // 0 is none
	VideoBitRate int    // bits per second; 0 is the server's default (8 Mbps)
	Audio        bool
	Control      bool

	// TunnelForward says the phone listens and the client connects (adb
	// forward), which is what Connect expects.
	TunnelForward bool
	DisplayID     int
	// NewDisplay creates a background virtual display: "", "WxH", "WxH/dpi"
	// or "/dpi" (Android 10+). It excludes DisplayID.
	NewDisplay string

	SendDeviceMeta bool // the 64-byte device name on the first socket
	SendDummyByte  bool // one 0x00 on the first socket (forward tunnel)
	SendStreamMeta bool // send_codec_meta (3.x) / send_stream_meta (4.x)
	SendFrameMeta  bool // the 12-byte header before each packet

	// Cleanup makes the server fork a process that restores settings and
	// deletes the pushed jar: push it again before every start, or turn it off.
	Cleanup           bool
	PowerOn           bool // wake the phone when the server starts
	ClipboardAutosync bool // the phone sends its clipboard whenever it changes
}

// DefaultOptions returns the options of a gateway session: a fresh SCID,
// H.264 video and control over a forward tunnel, no audio, every header on.
func DefaultOptions() Options {
	return Options{
		SCID: NewSCID(), Video: true, VideoCodec: "h264", Control: true, TunnelForward: true,
		SendDeviceMeta: true, SendDummyByte: true, SendStreamMeta: true, SendFrameMeta: true,
		Cleanup: true, PowerOn: true, ClipboardAutosync: true,
	}
}

// badChars are the characters scrcpy's client rejects in option values
// (validate_string): the values reach the phone's shell unescaped.
const badChars = " ;'\"*$?&`#\\|<>[]{}()!~\r\n"

// Validate checks the options against what the server accepts.
func (o Options) Validate() error {
	var errs []error
	for name, v := range map[string]string{"log level": o.LogLevel, "video codec": o.VideoCodec, "new display": o.NewDisplay} {
		if i := strings.IndexAny(v, badChars); i >= 0 {
			errs = append(errs, fmt.Errorf("%s %q: character %q is not allowed", name, v, v[i]))
		}
	}
	switch o.LogLevel {
	case "", "verbose", "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log level %q: want verbose, debug, info, warn or error", o.LogLevel))
	}
	switch o.VideoCodec {
	case "", "h264", "h265", "av1":
	default:
		errs = append(errs, fmt.Errorf("video codec %q: want h264, h265 or av1", o.VideoCodec))
	}
	if o.MaxSize < 0 || o.MaxFPS < 0 || o.VideoBitRate < 0 || o.DisplayID < 0 {
		errs = append(errs, errors.New("max size, max fps, bit rate and display id must not be negative"))
	}
	if o.NewDisplay != "" && o.DisplayID != 0 {
		errs = append(errs, errors.New("new display and display id exclude each other"))
	}
	return errors.Join(errs...)
}

// ServerArgs returns the command line that starts scrcpy-server version on
// the phone (run it through `adb shell`):
//
//	CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server VERSION key=value...
//
// version must be the pushed server's exact version. Like scrcpy's client, it
// passes only the options that differ from the server's defaults.
func ServerArgs(version string, o Options) ([]string, error) {
	v, err := ParseVersion(version)
	if err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("scrcpy options: %w", err)
	}
	args := []string{"CLASSPATH=" + ServerPath, "app_process", "/", "com.genymobile.scrcpy.Server", v.String()}
	add := func(cond bool, kv string) {
		if cond {
			args = append(args, kv)
		}
	}
	add(o.SCID != 0, "scid="+o.SCID.String())
	add(o.LogLevel != "", "log_level="+o.LogLevel)
	add(!o.Video, "video=false")
	add(o.VideoBitRate != 0, "video_bit_rate="+strconv.Itoa(o.VideoBitRate))
	add(!o.Audio, "audio=false")
	add(o.VideoCodec != "" && o.VideoCodec != "h264", "video_codec="+o.VideoCodec)
	add(o.MaxSize != 0, "max_size="+strconv.Itoa(o.MaxSize))
	add(o.MaxFPS != 0, "max_fps="+strconv.Itoa(o.MaxFPS))
	add(o.TunnelForward, "tunnel_forward=true")
	add(!o.Control, "control=false")
	add(o.DisplayID != 0, "display_id="+strconv.Itoa(o.DisplayID))
	add(o.NewDisplay != "", "new_display="+o.NewDisplay)
	add(!o.ClipboardAutosync, "clipboard_autosync=false")
	add(!o.SendDeviceMeta, "send_device_meta=false")
	add(!o.SendDummyByte, "send_dummy_byte=false")
	add(!o.SendStreamMeta, v.streamMeta()+"=false")
	add(!o.SendFrameMeta, "send_frame_meta=false")
	add(!o.Cleanup, "cleanup=false")
	add(!o.PowerOn, "power_on=false")
	return args, nil
}
