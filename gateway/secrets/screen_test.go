package secrets

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

const (
	android  = "sim-android-1"
	code     = "482913"
	password = "s3cret!"
)

// bankPhone signs in to the virtual Bank app up to its code screen and
// returns the phone, the sign-in screen with the password typed, and the
// notification that carries the code.
func bankPhone(t *testing.T) (*simtest.Phone, *sdk.Screen, sdk.Notification) {
	t.Helper()
	p := simtest.NewPhone(t, android, simtest.Unlocked(android))
	p.Launch("com.pinky.sim.bank")
	p.Tap("username")
	p.Type("ana")
	p.Tap("password")
	p.Type(password)
	login := p.Screen()
	p.Key(sdk.KeyEnter)
	var note sdk.Notification
	testkit.WaitWithin(t, 3*time.Second, "the code's notification", func() bool {
		ns, err := p.Driver.ListNotifications(context.Background(), android)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			if strings.Contains(n.Text, code) {
				note = n
				return true
			}
		}
		return false
	})
	return p, login, note
}

// holds reports whether any text of s holds secret.
func holds(s *sdk.Screen, secret string) bool {
	for _, e := range s.Elements {
		for _, f := range []string{e.Text, e.ContentDescription, e.Value, e.Hint} {
			if strings.Contains(f, secret) {
				return true
			}
		}
	}
	return false
}

// clone deep-copies a screen, to check MaskScreen leaves its input alone.
func clone(s *sdk.Screen) *sdk.Screen {
	c := *s
	c.Elements = append([]sdk.Element(nil), s.Elements...)
	return &c
}

// maskChecked runs MaskScreen and fails if it changed its input.
func maskChecked(t *testing.T, s *sdk.Screen, opts Options) (*sdk.Screen, []sdk.Rect) {
	t.Helper()
	before := clone(s)
	out, boxes := MaskScreen(s, opts)
	if diff := cmp.Diff(before, s); diff != "" {
		t.Fatalf("MaskScreen changed its input (-before +after):\n%s", diff)
	}
	return out, boxes
}

func covered(boxes []sdk.Rect, r sdk.Rect) bool {
	for _, b := range boxes {
		if b == r {
			return true
		}
	}
	return false
}

func TestMaskSimBank(t *testing.T) {
	p, login, note := bankPhone(t)
	ctx := context.Background()

	t.Run("password field", func(t *testing.T) {
		// A driver that leaks the password into the text, value and
		// description must not leak it further.
		leaky := clone(login)
		var field sdk.Element
		for i, e := range leaky.Elements {
			if e.Password {
				leaky.Elements[i].Text, leaky.Elements[i].Value, leaky.Elements[i].ContentDescription = password, password, password
				field = e
			}
		}
		if field.ID == 0 {
			t.Fatal("sign-in screen: no password field")
		}
		for _, s := range []*sdk.Screen{login, leaky} {
			out, boxes := maskChecked(t, s, Options{})
			if holds(out, password) {
				t.Errorf("masked screen holds the password")
			}
			if !covered(boxes, field.Bounds) {
				t.Errorf("boxes %v: password field %v not covered", boxes, field.Bounds)
			}
			if e, _ := simtest.Find(out, "username"); e.Text != "ana" {
				t.Errorf("username: got %q; want %q left alone", e.Text, "ana")
			}
		}
	})

	t.Run("notification", func(t *testing.T) {
		got := MaskNotification(note)
		if strings.Contains(got.Title+got.Text, code) {
			t.Errorf("MaskNotification: got %+v; want no %s", got, code)
		}
		if got.Text != "Your code is ••••••" {
			t.Errorf("MaskNotification text: got %q; want %q", got.Text, "Your code is ••••••")
		}
	})

	t.Run("shade", func(t *testing.T) {
		p.Act(sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 10}, To: sdk.Point{X: 540, Y: 1200}})
		s := p.Screen()
		if !holds(s, code) {
			t.Fatal("shade: the code is not on the screen to begin with")
		}
		out, boxes := maskChecked(t, s, Options{})
		if holds(out, code) {
			t.Errorf("masked shade holds %s", code)
		}
		for _, e := range s.Elements {
			if strings.Contains(e.Text, code) && !covered(boxes, e.Bounds) {
				t.Errorf("boxes %v: element %d %q at %v not covered", boxes, e.ID, e.Text, e.Bounds)
			}
		}
		p.Key(sdk.KeyBack)
	})

	t.Run("code field", func(t *testing.T) {
		p.Tap("otp")
		p.Type(code)
		s := p.Screen()
		otp, ok := simtest.Find(s, "otp")
		if !ok || otp.Text != code {
			t.Fatalf("otp field: got %+v; want it to hold %s", otp, code)
		}
		out, boxes := maskChecked(t, s, Options{})
		if holds(out, code) {
			t.Errorf("masked code screen holds %s", code)
		}
		if !covered(boxes, otp.Bounds) {
			t.Errorf("boxes %v: code field %v not covered", boxes, otp.Bounds)
		}
		if e, _ := simtest.Find(out, "otp"); e.Text != "••••••" || e.Hint != "6-digit code" {
			t.Errorf("masked otp field: got text %q hint %q; want •••••• and the hint", e.Text, e.Hint)
		}
	})

	t.Run("notification list", func(t *testing.T) {
		ns, err := p.Driver.ListNotifications(ctx, android)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			if m := MaskNotification(n); strings.Contains(m.Title+m.Text, code) {
				t.Errorf("notification %s: got %+v after masking", n.ID, m)
			}
		}
	})
}

func TestMaskSimAuthenticator(t *testing.T) {
	p := simtest.NewPhone(t, android, simtest.Unlocked(android))
	p.Launch("com.google.android.apps.authenticator2")
	s := p.Screen()
	for _, opts := range []Options{{}, {AuthenticatorApp: true}} {
		out, boxes := maskChecked(t, s, opts)
		for _, c := range []string{"305 118", "771 042", "305118"} {
			if holds(out, c) {
				t.Errorf("opts %+v: masked authenticator holds %s", opts, c)
			}
		}
		if len(boxes) < 2 {
			t.Errorf("opts %+v: got %d boxes; want one per code at least", opts, len(boxes))
		}
	}
	// The same codes from an app not known as an authenticator and without
	// its "Authenticator" title: only the caller's option tells.
	other := clone(s)
	other.App.ID = "com.example.totp"
	for i, e := range other.Elements {
		if e.Text == "Authenticator" {
			other.Elements[i].Text = "Accounts"
		}
	}
	if out, _ := maskChecked(t, other, Options{}); !holds(out, "305 118") {
		t.Errorf("unknown app without the option: got the code masked; want it shown (no code word)")
	}
	if out, _ := maskChecked(t, other, Options{AuthenticatorApp: true}); holds(out, "305 118") {
		t.Errorf("unknown app with AuthenticatorApp: got the code shown; want it masked")
	}
}

func TestMaskScreenLeavesOrdinaryScreens(t *testing.T) {
	s := &sdk.Screen{Width: 1080, Height: 2400, Elements: []sdk.Element{
		{ID: 1, Text: "Order #1042 — Wireless Headphones", Bounds: sdk.Rect{Right: 100, Bottom: 100}},
		{ID: 2, Text: "Total: $59.99"},
		{ID: 3, Text: "Yes, 12:30 at Rosa's"},
		{ID: 4, Class: editText, Editable: true, Hint: "Promo code", Text: "SAVE10"},
	}}
	out, boxes := maskChecked(t, s, Options{})
	if diff := cmp.Diff(s, out); diff != "" {
		t.Errorf("ordinary screen changed (-want +got):\n%s", diff)
	}
	if len(boxes) != 0 {
		t.Errorf("boxes: got %v; want none", boxes)
	}
	if out, boxes := MaskScreen(nil, Options{}); out != nil || boxes != nil {
		t.Errorf("MaskScreen(nil): got %v, %v; want nil, nil", out, boxes)
	}
}

func TestMaskScreenContext(t *testing.T) {
	// An iOS keyboard suggestion shows the code alone; the screen's label
	// says what it is.
	s := &sdk.Screen{Elements: []sdk.Element{
		{ID: 1, Text: "Enter the code we sent you"},
		{ID: 2, Class: "XCUIElementTypeButton", Text: "From Messages", Value: "482913", Bounds: sdk.Rect{Left: 0, Top: 900, Right: 300, Bottom: 960}},
	}}
	out, boxes := maskChecked(t, s, Options{})
	if holds(out, code) {
		t.Errorf("masked screen holds %s: %+v", code, out.Elements)
	}
	if !covered(boxes, s.Elements[1].Bounds) {
		t.Errorf("boxes %v: suggestion not covered", boxes)
	}
}
