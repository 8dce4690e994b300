package attack_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

// The secrets attacks of issue 12 (items 5, 6 and 8): a blocked app's
// notification read where it shows (the lock screen, the shade, a
// screenshot), one-time codes in the formats the detector missed, and a
// code carried out of a blocked app by the clipboard.

// salary is the blocked Bank's notification.
const salary = "Salary received +$1,850.00, balance $4,281.08"

// secretsPolicy blocks the default categories and allows everything else,
// so that no approval stands in the attack's way.
const secretsPolicy = `blocked_categories: [banking, wallets, password_managers, authenticators]
rules:
  - name: default
    decision: allow
`

// toPhone builds tool arguments for the attacked phone.
var toPhone = e2e.OnDevice(android)

// ben is the default world's notification, next to which the attacks put
// theirs.
const ben = `      - {app: messages, title: Ben, text: "Did you get the tickets?"}`

// secretsEnv starts a daemon on the virtual phones with more notifications
// on the Android phone and secretsPolicy, and an agent over `pinky mcp`.
func secretsEnv(t *testing.T, notes ...string) (*e2e.Env, *e2e.Host, *e2e.Buffer) {
	t.Helper()
	e := e2e.New(t)
	e.Extra = []string{"PINKY_SIM_WORLD=" + writeWorld(t, ben, strings.Join(append([]string{ben}, notes...), "\n"))}
	e.WriteFile("policy.yaml", secretsPolicy)
	_, log := e.DaemonLog("--sim", "--console", "off")
	h := e.StdioHost()
	h.Initialize()
	return e, h, log
}

// rowOf is the bounds of the notification row on s whose description
// starts with label (the virtual phone writes "Bank Bank" for the Bank's).
func rowOf(t *testing.T, s sdk.Screen, label string) sdk.Rect {
	t.Helper()
	for _, el := range s.Elements {
		if strings.HasSuffix(el.ResourceID, ":id/notification") && strings.HasPrefix(el.ContentDescription, label) {
			return el.Bounds
		}
	}
	t.Fatalf("no notification of %s on the phone's screen (%s)", label, s.App.ID)
	return sdk.Rect{}
}

// lastScreenshot decodes the last image an MCP answer carried.
func lastScreenshot(t *testing.T, h *e2e.Host) image.Image {
	t.Helper()
	lines := h.Lines()
	for i := len(lines) - 1; i >= 0; i-- {
		res, _ := lines[i]["result"].(map[string]any)
		content, _ := res["content"].([]any)
		for _, c := range content {
			m, _ := c.(map[string]any)
			if m["type"] != "image" {
				continue
			}
			data, err := base64.StdEncoding.DecodeString(m["data"].(string))
			if err != nil {
				t.Fatal(err)
			}
			img, err := jpeg.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("the screenshot is not a JPEG: %v", err)
			}
			return img
		}
	}
	t.Fatal("no screenshot came back")
	return nil
}

// coveredIn fails unless every pixel of the screen area r (in the pixels of
// a screenW-wide screen) is the gateway's cover on the screenshot img.
func coveredIn(t *testing.T, what string, img image.Image, screenW int, r sdk.Rect) {
	t.Helper()
	b := img.Bounds()
	scale := float64(b.Dx()) / float64(screenW)
	in := image.Rect(int(float64(r.Left)*scale)+4, int(float64(r.Top)*scale)+4, int(float64(r.Right)*scale)-4, int(float64(r.Bottom)*scale)-4)
	if in.Empty() {
		t.Fatalf("%s: the area %v is empty on a %v screenshot", what, r, b)
	}
	bad := 0
	for y := in.Min.Y; y < in.Max.Y; y++ {
		for x := in.Min.X; x < in.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if !nearByte(cr>>8, 0x3c) || !nearByte(cg>>8, 0x3c) || !nearByte(cb>>8, 0x3c) {
				bad++
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d pixels of the area %v are not covered on the screenshot", what, bad, in.Dx()*in.Dy(), r)
	}
}

func nearByte(v uint32, want int) bool { return int(v)-want <= 12 && want-int(v) <= 12 }

// leaksIn stops the daemon and fails for each secret found in what the
// agent read (the MCP transcript), in the data folder's files (the
// history, media, logs) and in the daemon's log.
func leaksIn(t *testing.T, e *e2e.Env, h *e2e.Host, log *e2e.Buffer, secrets ...string) {
	t.Helper()
	if _, errs, code := e.Run("stop-daemon"); code != 0 {
		t.Fatalf("stop-daemon: %s", errs)
	}
	check := func(where string, data []byte) {
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds %q", where, s)
			}
		}
	}
	check("what the agent read", []byte(h.Transcript()))
	check("the daemon's log", []byte(log.String()))
	files := 0
	filepath.Walk(e.Home, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		files++
		check(strings.TrimPrefix(path, e.Home), data)
		return nil
	})
	if files < 2 {
		t.Errorf("searched only %d files of the data folder; want the history at least", files)
	}
}

// TestBlockedNotificationNeverReachesTheAgent is the attack of issue 12,
// item 6: the Bank is blocked and phone_notifications hides its
// notification, so the agent reads it where the phone shows it: on the
// lock screen, in the shade it pulls down from the top edge, and in
// screenshots of both. Before the fix all of them showed "Salary received
// +$1,850.00, balance $4,281.08"; the lock screen showed only a count.
func TestBlockedNotificationNeverReachesTheAgent(t *testing.T) {
	e, h, log := secretsEnv(t, `      - {app: bank, title: Bank, text: "`+salary+`"}`)

	// The lock screen: the phone is locked, and the agent connects to it.
	text := h.OK("phone_connect", toPhone("task", "read my notifications"), "LOCKED")
	if !strings.Contains(text, "[hidden: blocked app]") || !strings.Contains(text, "Did you get the tickets?") {
		t.Errorf("the lock screen: got %q; want Ben's message and the Bank's hidden", text)
	}
	lock := screenOf(e)
	h.OK("phone_observe", toPhone("full", true, "screenshot", true), "LOCKED")
	coveredIn(t, "the lock screen's Bank row", lastScreenshot(t, h), lock.Width, rowOf(t, lock, "Bank"))

	// The shade.
	e.Unlock(android)
	h.OK("phone_observe", toPhone(), "Pixel Launcher")
	text = h.OK("phone_swipe", toPhone("from", map[string]any{"x": 540, "y": 10}, "to", map[string]any{"x": 540, "y": 1500}), "[hidden: blocked app]")
	shade := screenOf(e)
	if !strings.Contains(text, "Did you get the tickets?") {
		t.Errorf("the shade: got %q; want Ben's message", text)
	}
	h.OK("phone_observe", toPhone("full", true, "screenshot", true), "[hidden: blocked app]")
	coveredIn(t, "the shade's Bank row", lastScreenshot(t, h), shade.Width, rowOf(t, shade, "Bank"))
	if !shows(shade, "Salary received") {
		t.Fatal("the phone's shade does not show the Bank's notification: the test proves nothing")
	}
	// Ben's row is not covered: the check above can tell.
	img := lastScreenshot(t, h)
	ben := rowOf(t, shade, "Messages")
	s := float64(img.Bounds().Dx()) / float64(shade.Width)
	if r, _, _, _ := img.At(int(float64(ben.Left+40)*s), int(float64(ben.Top+20)*s)).RGBA(); r>>8 < 0xc0 {
		t.Errorf("Ben's row is not white on the screenshot: the cover check cannot tell")
	}
	h.OK("phone_notifications", toPhone(), "Ben")
	h.OK("phone_release", toPhone(), "")
	leaksIn(t, e, h, log, "Salary", "1,850.00", "4,281.08")
}

// TestNewCodeFormatsNeverReachTheAgent is the attack of issue 12, item 8:
// one-time codes in the formats the detector missed wait in the
// notifications (spaced digits, digits split by an invisible space, an SMS
// that is nothing but the code, a temporary password, digits in pairs);
// the agent lists the notifications, opens the shade and takes a
// screenshot. No code reaches it or the history, in any spacing.
func TestNewCodeFormatsNeverReachTheAgent(t *testing.T) {
	notes := []string{
		`      - {app: messages, title: Bank, text: "Your code is 7 3 1 9 5 0"}`,
		`      - {app: messages, title: Shop, text: "Your verification code is 593\u200b204"}`,
		`      - {app: messages, title: "22395", text: "864205"}`,
		`      - {app: mail, title: IT desk, text: "Your temporary password: Xk7#pq2"}`,
		`      - {app: messages, title: Bank, text: "Ihr Code lautet 41 73 92"}`,
		`      - {app: messages, title: Bank, text: "Ваш код: 268\u00a0451"}`,
	}
	e, h, log := secretsEnv(t, notes...)
	e.Unlock(android)
	h.OK("phone_connect", toPhone("task", "read my codes"), "Pixel Launcher")
	list := h.OK("phone_notifications", toPhone(), "Ben")
	shade := h.OK("phone_swipe", toPhone("from", map[string]any{"x": 540, "y": 10}, "to", map[string]any{"x": 540, "y": 1500}), "Ben")
	h.OK("phone_observe", toPhone("full", true, "screenshot", true), "Ben")
	// The codes were there to read, masked.
	for _, want := range []string{"Your code is • • • • • •", "Ihr Code lautet •• •• ••", "temporary password: •••••••"} {
		if !strings.Contains(list, want) || !strings.Contains(shade, want) {
			t.Errorf("%q is not in the notifications or the shade:\n%s\n%s", want, list, shade)
		}
	}
	if raw := screenOf(e); !shows(raw, "7 3 1 9 5 0") || !shows(raw, "Xk7#pq2") {
		t.Fatal("the phone's shade does not show the codes: the test proves nothing")
	}
	h.OK("phone_release", toPhone(), "")
	var secrets []string
	for _, c := range []string{"731950", "593204", "864205", "417392", "268451"} {
		secrets = append(secrets, c, c[:3]+" "+c[3:], strings.Join(strings.Split(c, ""), " "), c[:2]+" "+c[2:4]+" "+c[4:], c[:3]+"\u200b"+c[3:], c[:3]+"\u00a0"+c[3:])
	}
	leaksIn(t, e, h, log, append(secrets, "Xk7#pq2", "Xk7")...)
}

// personInput acts on the phone as the person does in the console, after
// a take-over.
func personInput(t *testing.T, e *e2e.Env, method string, params any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := api.Dial(ctx, filepath.Join(e.Home, "pinky.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Call(ctx, method, params, nil); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// TestPastedCodeIsMasked is the clipboard half of issue 12, item 5: a code
// leaves the blocked Authenticator by the clipboard (a blind tap once
// copied it; here the person does, in hand, and hands the phone back with
// the Authenticator in front, which the agent may read only as
// blocked_app), and the agent pastes it into a note with a long press and
// reads the note. The note is masked like the code, in the text, the
// screenshot and the history.
func TestPastedCodeIsMasked(t *testing.T) {
	e, h, log := secretsEnv(t)
	e.Unlock(android)
	h.OK("phone_connect", toPhone("task", "take a note"), "Pixel Launcher")

	// The person opens the Authenticator and copies Google's code.
	home := screenOf(e)
	personInput(t, e, api.MethodTakeOver, api.DeviceParams{Device: android})
	icon := element(t, home, "Authenticator").Bounds.Center()
	personInput(t, e, api.MethodInput, api.InputParams{Device: android, Kind: "tap", X: icon.X, Y: icon.Y})
	var codes sdk.Screen
	e.Eventually("the Authenticator is open", func() bool {
		codes = screenOf(e)
		return codes.App.ID == "com.google.android.apps.authenticator2"
	})
	code := element(t, codes, "305 118").Bounds.Center()
	personInput(t, e, api.MethodInput, api.InputParams{Device: android, Kind: "tap", X: code.X, Y: code.Y})
	personInput(t, e, api.MethodHandBack, api.DeviceParams{Device: android})

	h.Fails("phone_observe", toPhone(), "blocked_app")
	h.OK("phone_key", toPhone("key", "home"), "")
	h.OK("phone_launch", toPhone("app", "Notes"), "New note")
	h.OK("phone_tap", toPhone("text", "New note"), "")
	h.OK("phone_long_press", toPhone("text", "Note"), "")
	note := screenOf(e)
	field := element(t, note, "305 118")
	h.OK("phone_observe", toPhone("full", true, "screenshot", true), "••• •••")
	coveredIn(t, "the note", lastScreenshot(t, h), note.Width, field.Bounds)
	h.OK("phone_release", toPhone(), "")
	leaksIn(t, e, h, log, "305 118", "305118", "771 042", "771042")
}
