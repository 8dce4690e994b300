package sim

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestUnlockWithPINPad(t *testing.T) {
	for _, id := range []string{android, "sim-ios-1"} {
		t.Run(id, func(t *testing.T) {
			d := newDefault(t)
			s := screen(t, d, id)
			if s.LockState != sdk.LockLocked {
				t.Fatalf("lock state: got %v; want locked", s.LockState)
			}
			if _, err := d.Act(context.Background(), id, sdk.Action{Kind: sdk.ActLaunch, AppID: "messages"}); !errors.Is(err, sdk.ErrLocked) {
				t.Fatalf("launch while locked: got %v; want ErrLocked", err)
			}
			for _, k := range []string{"1", "2", "3", "5", "OK"} {
				tapOn(t, d, id, k)
			}
			if _, ok := find(screen(t, d, id), "Wrong PIN"); !ok {
				t.Fatal("wrong PIN: got no message; want Wrong PIN")
			}
			for _, k := range []string{"1", "2", "3", "4", "OK"} {
				tapOn(t, d, id, k)
			}
			if got := screen(t, d, id).LockState; got != sdk.LockUnlocked {
				t.Errorf("lock state: got %v; want unlocked", got)
			}
		})
	}
}

func TestUnlockAPI(t *testing.T) {
	d := newDefault(t)
	ctx := context.Background()
	if err := d.Unlock(ctx, android, "0000"); !errors.Is(err, sdk.ErrWrongPIN) {
		t.Fatalf("wrong pin: got %v; want ErrWrongPIN", err)
	}
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyPower})
	s := screen(t, d, android)
	if s.ScreenOn || s.LockState != sdk.LockLocked || len(s.Elements) != 0 {
		t.Fatalf("after power: got on=%v lock=%v elements=%d; want off, locked, none", s.ScreenOn, s.LockState, len(s.Elements))
	}
	if _, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 10, Y: 10}}); !errors.Is(err, sdk.ErrScreenOff) {
		t.Errorf("tap with screen off: got %v; want ErrScreenOff", err)
	}
	if err := d.Wake(ctx, android); err != nil {
		t.Fatal(err)
	}
	if s := screen(t, d, android); !s.ScreenOn || s.LockState != sdk.LockLocked {
		t.Errorf("after wake: got on=%v lock=%v; want on, locked", s.ScreenOn, s.LockState)
	}
}

func TestMessagesReply(t *testing.T) {
	for _, id := range []string{android, "sim-ios-1"} {
		t.Run(id, func(t *testing.T) {
			d := newDefault(t)
			unlock(t, d, id)
			tapOn(t, d, id, "Messages")
			tapOn(t, d, id, "Ana Silva")
			tapOn(t, d, id, "compose_message_text")
			s := screen(t, d, id)
			if !s.KeyboardShown {
				t.Fatal("keyboard: got hidden; want shown after focusing the reply field")
			}
			if _, ok := find(s, "Ana Silva"); !ok {
				t.Error("contact name: gone while the keyboard shows; want it kept")
			}
			act(t, d, id, sdk.Action{Kind: sdk.ActType, Text: "See you there"})
			tapOn(t, d, id, "Send SMS")
			if _, ok := find(screen(t, d, id), "Me: See you there"); !ok {
				t.Error("sent message: not in the conversation")
			}
			act(t, d, id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack}) // keyboard
			act(t, d, id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack}) // thread
			if _, ok := find(screen(t, d, id), "conversation_list"); !ok {
				t.Error("back: want the conversation list")
			}
			act(t, d, id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
			if s := screen(t, d, id); !s.App.System || s.App.ID == "com.google.android.apps.messaging" || s.App.ID == "com.apple.MobileSMS" {
				t.Errorf("home: got app %+v; want the launcher (a system app)", s.App)
			}
		})
	}
}

func TestShopOrder(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"})
	tapOn(t, d, android, "Add to cart")
	tapOn(t, d, android, "Place order")
	if _, ok := find(screen(t, d, android), "Pay $59.99 with Visa •••• 4242?"); !ok {
		t.Fatal("confirmation dialog: not shown")
	}
	tapOn(t, d, android, "Pay")
	idle, err := d.WaitIdle(context.Background(), android, 2*time.Second)
	if err != nil || !idle {
		t.Fatalf("WaitIdle: got %v, %v; want true, nil", idle, err)
	}
	if _, ok := find(screen(t, d, android), "Order placed"); !ok {
		t.Error("order: not placed")
	}
}

func TestMailCompose(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, "sim-ios-1")
	act(t, d, "sim-ios-1", sdk.Action{Kind: sdk.ActLaunch, AppID: "com.apple.mobilemail"})
	tapOn(t, d, "sim-ios-1", "Compose")
	for _, f := range []struct{ field, text string }{{"to", "ben@example.com"}, {"subject", "Tickets"}, {"body", "Got them!"}} {
		tapOn(t, d, "sim-ios-1", f.field)
		act(t, d, "sim-ios-1", sdk.Action{Kind: sdk.ActType, Text: f.text})
	}
	tapOn(t, d, "sim-ios-1", "send")
	if _, ok := find(screen(t, d, "sim-ios-1"), "To ben@example.com: Tickets"); !ok {
		t.Error("sent mail: not listed in the inbox")
	}
}

func TestOpenURL(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActOpenURL, URL: "https://pinky.example/docs"})
	s := screen(t, d, android)
	if s.App.ID != "com.android.chrome" {
		t.Errorf("app: got %q; want com.android.chrome", s.App.ID)
	}
	if _, ok := find(s, "https://pinky.example/docs"); !ok {
		t.Error("page: URL not shown")
	}
}

func TestScrollLongList(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "settings"})
	if _, ok := find(screen(t, d, android), "About phone"); ok {
		t.Fatal("About phone: visible before scrolling; want it below the screen")
	}
	for i := 0; i < 3; i++ {
		act(t, d, android, sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown})
	}
	s := screen(t, d, android)
	if _, ok := find(s, "About phone"); !ok {
		t.Error("About phone: hidden after scrolling down; want visible")
	}
	if _, ok := find(s, "Wi-Fi"); ok {
		t.Error("Wi-Fi: still visible after scrolling down; want scrolled away")
	}
}

func TestDelayedNotification(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "bank"})
	tapOn(t, d, android, "username")
	act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "ana"})
	tapOn(t, d, android, "password")
	act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "s3cret!"})
	for _, e := range screen(t, d, android).Elements {
		if strings.Contains(e.Text, "s3cret") || strings.Contains(e.Value, "s3cret") {
			t.Fatalf("password: element %d exposes the secret: %+v", e.ID, e)
		}
	}
	tapOn(t, d, android, "Sign in")
	act(t, d, android, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 10}, To: sdk.Point{X: 540, Y: 1200}})
	if _, ok := find(screen(t, d, android), "Your code is 482913"); ok {
		t.Fatal("code: arrived at once; want it after a delay")
	}
	if !testkit.Poll(3*time.Second, func() bool { _, ok := find(screen(t, d, android), "Your code is 482913"); return ok }) {
		t.Error("code: notification never arrived in the shade")
	}
}

func TestAnimationSettles(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "browser"})
	tapOn(t, d, android, "Reload")
	a := screen(t, d, android)
	time.Sleep(40 * time.Millisecond)
	b := screen(t, d, android)
	pa, _ := find(a, "progress")
	pb, _ := find(b, "progress")
	if pa.Value == "" || pa == pb {
		t.Fatalf("progress: got %q then %q; want two different readings", pa.Value, pb.Value)
	}
	idle, err := d.WaitIdle(context.Background(), android, 2*time.Second)
	if err != nil || !idle {
		t.Fatalf("WaitIdle: got %v, %v; want true, nil", idle, err)
	}
	if _, ok := find(screen(t, d, android), "progress"); ok {
		t.Error("progress: still shown after idle")
	}
}

func TestScreenshot(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	tests := []struct {
		req  sdk.ScreenshotRequest
		w, h int
		fmt  string
	}{
		{sdk.ScreenshotRequest{DeviceID: android}, 1080, 2400, "png"},
		{sdk.ScreenshotRequest{DeviceID: android, Format: sdk.FormatJPEG, Quality: 50}, 1080, 2400, "jpeg"},
		{sdk.ScreenshotRequest{DeviceID: android, MaxSide: 800}, 360, 800, "png"},
		{sdk.ScreenshotRequest{DeviceID: "sim-ios-1", Format: sdk.FormatJPEG, MaxSide: 1000}, 461, 1000, "jpeg"},
	}
	for _, tt := range tests {
		img, err := d.Screenshot(context.Background(), tt.req)
		if err != nil {
			t.Fatalf("%+v: %v", tt.req, err)
		}
		m, format, err := image.Decode(bytes.NewReader(img.Data))
		if err != nil {
			t.Fatalf("%+v: decode: %v", tt.req, err)
		}
		if got := m.Bounds().Size(); got.X != tt.w || got.Y != tt.h || img.Width != tt.w || img.Height != tt.h || format != tt.fmt {
			t.Errorf("%+v: got %v %s (declared %dx%d); want %dx%d %s", tt.req, got, format, img.Width, img.Height, tt.w, tt.h, tt.fmt)
		}
	}
}

func TestErrors(t *testing.T) {
	d := newDefault(t)
	ctx := context.Background()
	unlock(t, d, android)
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"unknown device screen", func() error { _, err := d.Screen(ctx, "nope", 0); return err }(), sdk.ErrDeviceNotFound},
		{"unknown device act", func() error { _, err := d.Act(ctx, "nope", sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); return err }(), sdk.ErrDeviceNotFound},
		{"tap outside", func() error {
			_, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 1080, Y: 5}})
			return err
		}(), sdk.ErrInvalidArgument},
		{"unknown app", func() error {
			_, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.nope"})
			return err
		}(), sdk.ErrAppNotFound},
		{"type without focus", func() error { _, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActType, Text: "x"}); return err }(), sdk.ErrNoFocus},
		{"file dotdot", d.PullFile(ctx, android, "../etc/passwd", &bytes.Buffer{}), sdk.ErrInvalidArgument},
		{"file absolute", func() error { _, err := d.ListFiles(ctx, android, "/etc"); return err }(), sdk.ErrInvalidArgument},
		{"file missing", d.PullFile(ctx, android, "missing.txt", &bytes.Buffer{}), sdk.ErrFileNotFound},
		{"push dotdot", func() error { _, err := d.PushFile(ctx, android, "a/../../x", strings.NewReader("x")); return err }(), sdk.ErrInvalidArgument},
	}
	dir, err := d.byID[android].pinkyFolder()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	_, err = d.PushFile(ctx, android, "link/x", strings.NewReader("x"))
	tests = append(tests, struct {
		name string
		err  error
		want error
	}{"through symlink", err, sdk.ErrInvalidArgument})
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyPower})
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyWake})
	_, err = d.Act(ctx, android, sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown})
	tests = append(tests, struct {
		name string
		err  error
		want error
	}{"scroll while locked", err, sdk.ErrLocked})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("got %v; want %v", tt.err, tt.want)
			}
		})
	}
}
