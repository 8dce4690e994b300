package scrcpyd

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

const android = simtest.Android

type server struct {
	stdout, stderr testkit.Buffer
	done           chan error
}

// start runs Serve on a localhost listener and dials it as the Android driver would.
func start(t *testing.T, d sdk.Driver, version string, o scrcpy.Options) (*scrcpy.Client, *server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	args, err := scrcpy.ServerArgs(version, o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv := &server{done: make(chan error, 1)}
	go func() {
		srv.done <- Server{Version: version, Driver: d, Device: android}.Serve(ctx, args[4:], lis, &srv.stdout, &srv.stderr)
	}()
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	defer dcancel()
	c, err := scrcpy.Dial(dctx, version, o, func(ctx context.Context) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "tcp", lis.Addr().String())
	})
	if err != nil {
		cancel()
		t.Fatalf("Dial: %v (server stderr: %s)", err, srv.stderr.String())
	}
	t.Cleanup(func() {
		c.Close()
		select {
		case err := <-srv.done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Serve did not return 5s after the client closed")
		}
		cancel()
	})
	return c, srv
}

// recorder collects a stream's packets.
type recorder struct {
	mu   sync.Mutex
	pkts []sdk.VideoPacket
}

func (r *recorder) add(p sdk.VideoPacket) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pkts = append(r.pkts, p)
	return nil
}

func (r *recorder) snapshot() []sdk.VideoPacket {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdk.VideoPacket(nil), r.pkts...)
}

func (r *recorder) keys() int {
	n := 0
	for _, p := range r.snapshot() {
		if p.KeyFrame {
			n++
		}
	}
	return n
}

func screen(t *testing.T, d sdk.Driver) *sdk.Screen {
	t.Helper()
	s, err := d.Screen(context.Background(), android, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tapOn taps an element through the control socket, in video coordinates.
func tapOn(t *testing.T, c *scrcpy.Client, d sdk.Driver, what string) {
	t.Helper()
	s := screen(t, d)
	e, ok := simtest.Find(s, what)
	if !ok {
		t.Fatalf("tap %q: not on screen", what)
	}
	vw, vh := c.VideoSize()
	p := e.Bounds.Center()
	if err := c.Tap(p.X*vw/s.Width, p.Y*vh/s.Height); err != nil {
		t.Fatal(err)
	}
}

func TestServe(t *testing.T) {
	for _, version := range []string{"3.3.4", "4.1"} {
		t.Run(version, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			o := scrcpy.DefaultOptions()
			o.MaxSize, o.LogLevel = 800, "info"
			// As the driver does: with autosync, the real server answers
			// GET_CLIPBOARD with nothing.
			o.ClipboardAutosync = false
			c, srv := start(t, d, version, o)

			if got := c.DeviceName(); got != "Pixel 8" {
				t.Errorf("DeviceName() = %q; want Pixel 8", got)
			}
			if want := "[server] INFO: Device: [Google] google Pixel 8 (Android 15)\n"; !strings.Contains(srv.stdout.String(), want) {
				t.Errorf("server stdout = %q; want it to contain %q", srv.stdout.String(), want)
			}
			shot, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: android, MaxSide: 800})
			if err != nil {
				t.Fatal(err)
			}
			if w, h := c.VideoSize(); w != shot.Width || h != shot.Height {
				t.Errorf("VideoSize() = %dx%d; want the sim's %dx%d", w, h, shot.Width, shot.Height)
			}

			rec := &recorder{}
			ctx, cancel := context.WithCancel(context.Background())
			streamed := make(chan error, 1)
			go func() { streamed <- c.Stream(ctx, rec.add) }()
			t.Cleanup(func() {
				cancel()
				if err := <-streamed; err != nil {
					t.Errorf("Stream: %v", err)
				}
			})
			testkit.WaitUntil(t, "a key frame", func() bool { return rec.keys() >= 1 })
			pkts := rec.snapshot()
			if !pkts[0].Config || pkts[0].PTS != 0 || !pkts[1].KeyFrame || pkts[1].Config {
				t.Fatalf("first packets: config %v key %v, then config %v key %v; want a config packet then a key frame",
					pkts[0].Config, pkts[0].KeyFrame, pkts[1].Config, pkts[1].KeyFrame)
			}
			if pkts[1].Width != shot.Width || pkts[1].Height != shot.Height {
				t.Errorf("key frame size %dx%d; want %dx%d", pkts[1].Width, pkts[1].Height, shot.Width, shot.Height)
			}

			t.Run("decodes", func(t *testing.T) {
				ffmpeg := testdep.Need(t, "ffmpeg")
				cmd := exec.Command(ffmpeg, "-loglevel", "error", "-f", "h264", "-i", "pipe:0", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1")
				cmd.Stdin = bytes.NewReader(append(append([]byte(nil), pkts[0].Data...), pkts[1].Data...))
				var errb bytes.Buffer
				cmd.Stderr = &errb
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("ffmpeg: %v: %s", err, errb.String())
				}
				if want := shot.Width * shot.Height * 3; len(out) != want {
					t.Errorf("ffmpeg decoded %d bytes; want %d (%dx%d RGB)", len(out), want, shot.Width, shot.Height)
				}
			})

			t.Run("reset video", func(t *testing.T) {
				k := rec.keys()
				if err := c.ResetVideo(); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "a key frame after reset video", func() bool { return rec.keys() > k })
			})

			t.Run("tap opens settings", func(t *testing.T) {
				tapOn(t, c, d, "Settings")
				testkit.WaitUntil(t, "Settings in front", func() bool { return screen(t, d).App.ID == "com.android.settings" })
				if err := c.Key(scrcpy.KeycodeHome); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "the launcher", func() bool { return screen(t, d).App.ID != "com.android.settings" })
			})

			t.Run("text", func(t *testing.T) {
				tapOn(t, c, d, "Notes")
				testkit.WaitUntil(t, "Notes", func() bool { _, ok := simtest.Find(screen(t, d), "new_note"); return ok })
				tapOn(t, c, d, "new_note")
				testkit.WaitUntil(t, "the note field", func() bool { _, ok := simtest.Find(screen(t, d), "edit_note_text"); return ok })
				tapOn(t, c, d, "edit_note_text")
				testkit.WaitUntil(t, "focus", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Focused })
				if err := c.Text("hello"); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "typed text", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "hello" })
				// As the real server's key map: accented letters type with a
				// dead key; an emoji or a CJK character is dropped, with a
				// warning per UTF-16 unit.
				if err := c.Text(" é😀中!"); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "what the key map types", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "hello é!" })
				for _, w := range []string{"Could not inject char u+d83d", "Could not inject char u+de00", "Could not inject char u+4e2d"} {
					if !strings.Contains(srv.stdout.String()+srv.stderr.String(), w) {
						t.Errorf("the server's log lacks %q", w)
					}
				}
				if err := c.Text("\b"); err != nil { // nothing typeable: no action at all
					t.Fatal(err)
				}
				if e, _ := simtest.Find(screen(t, d), "edit_note_text"); e.Text != "hello é!" {
					t.Fatalf("text after an untypeable one = %q", e.Text)
				}
				if err := c.Send(scrcpy.InjectText{Text: ""}); err != nil {
					t.Fatal(err)
				}
				e, _ := simtest.Find(screen(t, d), "edit_note_text")
				for range len(e.Text) {
					if err := c.Key(scrcpy.KeycodeDel); err != nil {
						t.Fatal(err)
					}
				}
				testkit.WaitUntil(t, "the field emptied", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "" })
				if err := c.Text("hello"); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "typed text again", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "hello" })

				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := c.SetClipboard(ctx, "before", false); err != nil {
					t.Fatal(err)
				}
				if err := c.PasteText(ctx, " wörld ✓"); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "pasted text", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "hello wörld ✓" })
				if got, err := c.Clipboard(ctx); err != nil || got != "before" {
					t.Errorf("Clipboard() after PasteText = %q, %v; want the old clipboard back", got, err)
				}

				// Ctrl+A selects the field's text, as a TextView does: what is
				// typed next replaces it, and delete removes it; Ctrl with
				// another letter types nothing.
				ctrl := func(code uint32) {
					t.Helper()
					for _, a := range []scrcpy.KeyAction{scrcpy.KeyActionDown, scrcpy.KeyActionUp} {
						if err := c.Send(scrcpy.InjectKeycode{Action: a, Keycode: code, MetaState: scrcpy.MetaCtrlOn}); err != nil {
							t.Fatal(err)
						}
					}
				}
				ctrl(scrcpy.KeycodeA)
				if err := c.Text("over"); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "the selection typed over", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "over" })
				ctrl(scrcpy.KeycodeA + 2) // Ctrl+C
				ctrl(scrcpy.KeycodeA)
				if err := c.Key(scrcpy.KeycodeDel); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "the selection deleted", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "" })
				if err := c.Text("kept"); err != nil {
					t.Fatal(err)
				}
				testkit.WaitUntil(t, "typing after the selection is gone", func() bool { e, _ := simtest.Find(screen(t, d), "edit_note_text"); return e.Text == "kept" })
			})

			t.Run("rotation", func(t *testing.T) {
				// The phone turns landscape and back, as the real server
				// turns it; the capture restarts at the turned size.
				w0, h0 := c.VideoSize()
				for _, want := range []string{"landscape", "portrait"} {
					if err := c.Send(scrcpy.RotateDevice{}); err != nil {
						t.Fatal(err)
					}
					testkit.WaitUntil(t, "the server's log", func() bool {
						return strings.Contains(srv.stdout.String(), "Device rotation requested: "+want)
					})
					testkit.WaitUntil(t, "a "+want+" video size", func() bool {
						w, h := c.VideoSize()
						return (want == "landscape") == (w == h0 && h == w0) && (w > h) == (want == "landscape")
					})
				}
			})
		})
	}
}

func TestServeSwipe(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	o := scrcpy.DefaultOptions()
	c, _ := start(t, d, "4.1", o)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Stream(ctx, func(sdk.VideoPacket) error { return nil })
	// Pull the notification shade down from the top edge.
	w, h := c.VideoSize()
	if err := c.Swipe(ctx, sdk.Point{X: w / 2, Y: 1}, sdk.Point{X: w / 2, Y: h / 2}, 150*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the notification shade", func() bool { _, ok := simtest.Find(screen(t, d), "notification_panel"); return ok })
	if err := c.Send(scrcpy.CollapsePanels{}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the shade closed", func() bool { _, ok := simtest.Find(screen(t, d), "notification_panel"); return !ok })
}

func TestServeRejects(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	tests := []struct {
		name, want string
		args       []string
	}{
		{"unknown version", "[server] ERROR: The server version (4.1) does not match the client (5.0)\njava.lang.IllegalArgumentException: The server version (4.1) does not match the client (5.0)\n\tat ", []string{"5.0", "tunnel_forward=true"}},
		{"another version", "[server] ERROR: The server version (4.1) does not match the client (3.3.4)\n", []string{"3.3.4", "tunnel_forward=true"}},
		{"the version written otherwise", "[server] ERROR: The server version (4.1) does not match the client (4.1.0)\n", []string{"4.1.0", "tunnel_forward=true"}},
		{"no version", "[server] ERROR: Missing client version\n", nil},
		{"reverse tunnel", "[server] ERROR: Reverse tunnel is not supported", []string{"4.1"}},
		{"codec", "[server] ERROR: Could not find encoder for av1", []string{"4.1", "tunnel_forward=true", "video_codec=av1"}},
		{"not key=value", `[server] ERROR: Invalid key=value pair: "oops"`, []string{"4.1", "oops"}},
		{"bad new display", "[server] ERROR: Invalid new display size: 12", []string{"4.1", "tunnel_forward=true", "new_display=12"}},
		{"bad new display dpi", "[server] ERROR: Invalid new display dpi: x", []string{"4.1", "tunnel_forward=true", "new_display=640x480/x"}},
		{"unknown display", "[server] ERROR: Display 5 not found", []string{"4.1", "tunnel_forward=true", "display_id=5"}},
		{"new and existing display", "[server] ERROR: Cannot specify both new_display and display_id", []string{"4.1", "tunnel_forward=true", "new_display=", "display_id=3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer lis.Close()
			var stdout, stderr testkit.Buffer
			err = Server{Driver: d, Device: android}.Serve(context.Background(), tt.args, lis, &stdout, &stderr)
			if !errors.Is(err, ErrUsage) {
				t.Errorf("Serve error = %v; want ErrUsage", err)
			}
			if !strings.HasPrefix(stderr.String(), tt.want) {
				t.Errorf("stderr = %q; want it to start with %q", stderr.String(), tt.want)
			}
		})
	}
	// The client refuses the version before starting anything.
	if _, err := scrcpy.ServerArgs("5.0", scrcpy.DefaultOptions()); !errors.Is(err, scrcpy.ErrUnsupportedVersion) {
		t.Errorf("ServerArgs(5.0) error = %v; want ErrUnsupportedVersion", err)
	}
	if _, err := scrcpy.Connect("5.0", nil, nil); !errors.Is(err, scrcpy.ErrUnsupportedVersion) || !strings.Contains(err.Error(), "3.x, 4.x") {
		t.Errorf("Connect(5.0) error = %v; want ErrUnsupportedVersion naming 3.x and 4.x", err)
	}
}

func TestServeUnknownOptionWarns(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	o := scrcpy.DefaultOptions()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testkit.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Server{Version: "3.3.4", Driver: d, Device: android}.Serve(ctx, []string{"3.3.4", "tunnel_forward=true", "audio=false", "send_stream_meta=false", "frobnicate=1", "scid=" + o.SCID.String()}, lis, &stdout, &stderr)
	}()
	testkit.WaitUntil(t, "the device line", func() bool { return strings.Contains(stdout.String(), "Device:") })
	cancel() // ends the accept: Serve returns
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel = %v; want nil", err)
	}
	for _, want := range []string{"[server] WARN: Unknown server option: send_stream_meta\n", "[server] WARN: Unknown server option: frobnicate\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr = %q; want it to contain %q", stderr.String(), want)
		}
	}
}

// displayScreen reads a display of the sim phone.
func displayScreen(t *testing.T, d sdk.Driver, display int) *sdk.Screen {
	t.Helper()
	s, err := d.Screen(context.Background(), android, display)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A session with new_display makes a background display, says so as the
// real server does, shows it, drives it (START_APP included) and removes it
// when it ends.
func TestServeNewDisplay(t *testing.T) {
	for _, version := range []string{"3.3.4", "4.1"} {
		t.Run(version, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			ctx := context.Background()
			before := displayScreen(t, d, 0).App.ID
			o := scrcpy.DefaultOptions()
			o.NewDisplay = "720x1280/320"
			c, srv := start(t, d, version, o)
			testkit.WaitUntil(t, "the new display line", func() bool {
				return strings.Contains(srv.stdout.String(), "[server] INFO: New display: 720x1280/320 (id=1)\n")
			})
			go c.Stream(ctx, func(sdk.VideoPacket) error { return nil })
			testkit.WaitUntil(t, "the display's video size", func() bool { w, h := c.VideoSize(); return w == 720 && h == 1280 })
			if sc := displayScreen(t, d, 1); sc.Width != 720 || sc.Height != 1280 || sc.DensityDPI != 320 {
				t.Errorf("display 1: %dx%d/%d; want 720x1280/320", sc.Width, sc.Height, sc.DensityDPI)
			}
			if err := c.Send(scrcpy.StartApp{Name: "com.google.android.keep"}); err != nil {
				t.Fatal(err)
			}
			testkit.WaitUntil(t, "Notes on display 1", func() bool { return displayScreen(t, d, 1).App.ID == "com.google.android.keep" })
			if !strings.Contains(srv.stdout.String(), `[server] INFO: Starting app "Notes" [com.google.android.keep] on display 1...`) {
				t.Errorf("stdout = %q; want the starting-app line", srv.stdout.String())
			}
			// A tap in the video's coordinates lands on display 1.
			sc := displayScreen(t, d, 1)
			e, ok := simtest.Find(sc, "new_note")
			if !ok {
				t.Fatal("no new_note on display 1")
			}
			p := e.Bounds.Center()
			vw, vh := c.VideoSize()
			if err := c.Tap(p.X*vw/sc.Width, p.Y*vh/sc.Height); err != nil {
				t.Fatal(err)
			}
			testkit.WaitUntil(t, "the note field on display 1", func() bool { _, ok := simtest.Find(displayScreen(t, d, 1), "edit_note_text"); return ok })
			if got := displayScreen(t, d, 0).App.ID; got != before {
				t.Errorf("display 0 shows %q; want %q, untouched", got, before)
			}
			if err := c.Send(scrcpy.StartApp{Name: "com.example.nothing"}); err != nil {
				t.Fatal(err)
			}
			testkit.WaitUntil(t, "the no-app warning", func() bool {
				return strings.Contains(srv.stderr.String(), `[server] WARN: No app found for package "com.example.nothing"`)
			})
			// The display goes with the session.
			c.Close()
			testkit.WaitUntil(t, "display 1 removed", func() bool {
				_, err := d.Screen(ctx, android, 1)
				return errors.Is(err, sdk.ErrInvalidArgument)
			})
		})
	}
}

// Without a size, the new display takes the main display's (within
// max_size, rounded to 8); without a density, the main display's scaled.
// The display new_display makes and its video, from NewDisplayCapture.java
// (init and prepare) of each version: a missing size is the main display's,
// kept as it is by 3.x and aligned to the encoder's 2 by 4.x; the video of
// it is limited to max_size (3.x: Size.limit().round8(), 4.x:
// Size.constrain()); a missing density is scaled from the main display's
// 420 by the larger sides.
func TestServeNewDisplayDefaults(t *testing.T) {
	for _, tt := range []struct {
		version, value string
		maxSize        int
		want           string // the log line's WxH/DPI
		vw, vh         int    // the video size
	}{
		{"4.1", "/300", 1200, "1080x2400/300", 540, 1200},
		{"3.3.4", "/300", 1200, "1080x2400/300", 544, 1200}, // 540 rounded to the nearest 8
		{"4.1", "600x1200", 1200, "600x1200/210", 600, 1200},
		{"4.1", "601x1201", 0, "600x1200/210", 600, 1200},    // aligned down to 2
		{"3.3.4", "601x1201", 0, "601x1201/210", 600, 1200},  // the display as asked; round8: 1201 down, 601 to the nearest
		{"3.3.4", "600x1000", 900, "600x1000/175", 536, 896}, // max_size 900 is 896 (Options.parse); 537 to the nearest 8
		{"4.0", "600x1000", 900, "600x1000/175", 540, 900},   // 4.0 aligns max_size to 2 first: 900
		{"4.1", "/420", 1023, "1080x2400/420", 460, 1022},    // 1080*1023/2400 = 460; 1023 aligned down
		{"4.0", "/420", 1023, "1080x2400/420", 458, 1022},    // the codec's max is aligned first: 1080*1022/2400 = 459, aligned 458
	} {
		t.Run(tt.version+" "+tt.value, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			o := scrcpy.DefaultOptions()
			o.NewDisplay = tt.value
			o.MaxSize = tt.maxSize
			c, srv := start(t, d, tt.version, o)
			testkit.WaitUntil(t, "the new display line", func() bool {
				return strings.Contains(srv.stdout.String(), "[server] INFO: New display: "+tt.want+" (id=1)\n")
			})
			go c.Stream(context.Background(), func(sdk.VideoPacket) error { return nil })
			testkit.WaitUntil(t, "the video size", func() bool { w, h := c.VideoSize(); return w > 0 && h > 0 })
			if w, h := c.VideoSize(); w != tt.vw || h != tt.vh {
				t.Errorf("video size %dx%d; want %dx%d", w, h, tt.vw, tt.vh)
			}
		})
	}
}

// display_id shows and drives an existing display.
func TestServeDisplayID(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	ctx := context.Background()
	id, err := d.CreateDisplay(ctx, android, 640, 480, 0)
	if err != nil {
		t.Fatal(err)
	}
	o := scrcpy.DefaultOptions()
	o.DisplayID = id
	c, _ := start(t, d, "4.1", o)
	go c.Stream(ctx, func(sdk.VideoPacket) error { return nil })
	testkit.WaitUntil(t, "the display's video size", func() bool { w, h := c.VideoSize(); return w == 640 && h == 480 })
	if err := c.Send(scrcpy.StartApp{Name: "?settings"}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "Settings on the display", func() bool { return displayScreen(t, d, id).App.ID == "com.android.settings" })
}
