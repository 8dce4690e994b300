package scrcpy

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    [3]int
		wantErr bool
	}{
		{"3.3.1", [3]int{3, 3, 1}, false},
		{"3.3.4", [3]int{3, 3, 4}, false},
		{"4.0", [3]int{4, 0, 0}, false},
		{"4.1", [3]int{4, 1, 0}, false},
		{"2.7", [3]int{}, true},
		{"5.0", [3]int{}, true},
		{"4", [3]int{}, true},
		{"v4.1", [3]int{}, true},
		{"4.1.x", [3]int{}, true},
		{"", [3]int{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			v, err := ParseVersion(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrUnsupportedVersion) {
					t.Fatalf("ParseVersion(%q) error = %v; want ErrUnsupportedVersion", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := [3]int{v.Major, v.Minor, v.Patch}; got != tt.want || v.String() != tt.in {
				t.Errorf("ParseVersion(%q) = %v %q; want %v %q", tt.in, got, v, tt.want, tt.in)
			}
		})
	}
	if _, err := ParseVersion("5.0"); err == nil || err.Error() != `version "5.0": unsupported scrcpy-server version (supported: 3.x, 4.x)` {
		t.Errorf("error for 5.0 = %v; want one naming the supported versions", err)
	}
}

func TestSocketName(t *testing.T) {
	for scid, want := range map[SCID]string{0: "scrcpy", 0x1a2b3c4d: "scrcpy_1a2b3c4d", 0xff: "scrcpy_000000ff"} {
		if got := SocketName(scid); got != want {
			t.Errorf("SocketName(%#x) = %q; want %q", uint32(scid), got, want)
		}
	}
	for range 100 {
		if s := NewSCID(); s == 0 || s > 0x7fffffff {
			t.Fatalf("NewSCID() = %#x; want 31 bits, not 0", uint32(s))
		}
	}
}

func TestServerArgs(t *testing.T) {
	base := func() Options {
		o := DefaultOptions()
		o.SCID = 0x1a2b3c4d
		return o
	}
	prefix := []string{"CLASSPATH=/data/local/tmp/scrcpy-server.jar", "app_process", "/", "com.genymobile.scrcpy.Server"}
	tests := []struct {
		name    string
		version string
		opts    func(*Options)
		want    []string
	}{
		{"defaults", "3.3.4", func(*Options) {}, []string{"3.3.4", "scid=1a2b3c4d", "audio=false", "tunnel_forward=true"}},
		{"gateway", "4.1", func(o *Options) { o.LogLevel, o.MaxSize, o.MaxFPS, o.VideoBitRate = "info", 1280, 30, 4000000 },
			[]string{"4.1", "scid=1a2b3c4d", "log_level=info", "video_bit_rate=4000000", "audio=false", "max_size=1280", "max_fps=30", "tunnel_forward=true"}},
		{"headers off 3.x", "3.3.4", func(o *Options) {
			o.SendStreamMeta, o.SendFrameMeta, o.SendDummyByte, o.SendDeviceMeta = false, false, false, false
		},
			[]string{"3.3.4", "scid=1a2b3c4d", "audio=false", "tunnel_forward=true", "send_device_meta=false", "send_dummy_byte=false", "send_codec_meta=false", "send_frame_meta=false"}},
		{"stream meta off 4.x", "4.0", func(o *Options) { o.SendStreamMeta = false },
			[]string{"4.0", "scid=1a2b3c4d", "audio=false", "tunnel_forward=true", "send_stream_meta=false"}},
		{"background display, no control", "4.1", func(o *Options) {
			o.NewDisplay, o.Control, o.Cleanup, o.PowerOn, o.ClipboardAutosync = "1080x1920/420", false, false, false, false
		},
			[]string{"4.1", "scid=1a2b3c4d", "audio=false", "tunnel_forward=true", "control=false", "new_display=1080x1920/420", "clipboard_autosync=false", "cleanup=false", "power_on=false"}},
		{"display id, h265, no scid", "3.3.4", func(o *Options) { o.DisplayID, o.VideoCodec, o.SCID = 2, "h265", 0 },
			[]string{"3.3.4", "audio=false", "video_codec=h265", "tunnel_forward=true", "display_id=2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base()
			tt.opts(&o)
			got, err := ServerArgs(tt.version, o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(append(prefix[:4:4], tt.want...), got); diff != "" {
				t.Errorf("ServerArgs mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ServerArgs("5.0", base()); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("ServerArgs(5.0) error = %v; want ErrUnsupportedVersion", err)
	}
	bad := base()
	bad.NewDisplay = "1080x1920;reboot"
	if _, err := ServerArgs("4.1", bad); err == nil {
		t.Error("ServerArgs with a shell character in new_display: got nil error; want one")
	}
	bad = base()
	bad.NewDisplay, bad.DisplayID = "/420", 1
	if _, err := ServerArgs("4.1", bad); err == nil {
		t.Error("ServerArgs with new_display and display_id: got nil error; want one")
	}
}
