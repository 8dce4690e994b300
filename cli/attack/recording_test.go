package attack_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/cli/daemon"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/recording/fmp4"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"
)

// The one-time code of these attacks: the Bank's sign-in sends it in a
// notification, and the agent reads it masked ("Your code is ••••••").
const (
	otp     = "482913"
	otpText = "Your code is " + otp
	android = "sim-android-1"
)

// shadeSwipe pulls the notification shade down from the top edge.
var shadeSwipe = map[string]any{"from": map[string]any{"x": 540, "y": 10}, "to": map[string]any{"x": 540, "y": 1500}}

// TestRecordingKeepsNoCodeOfTheShade is the attack of issue 12, item 10:
// a one-time code waits in the notifications; the agent opens the shade
// (it reads the code masked), closes it, and goes on. Before the fix, the
// frames of the open shade came after the read that found the code (the
// video runs behind the screen), so the next read, of the closed shade,
// vouched for them, and the recording and its export showed the code in
// clear. Every frame of both is decoded and searched for the code's
// pixels.
func TestRecordingKeepsNoCodeOfTheShade(t *testing.T) {
	finder := newCodeFinder(t)
	e := e2e.New(t)
	e.Extra = []string{"PINKY_SIM_WORLD=" + writeWorld(t,
		`      - {app: messages, title: Ben, text: "Did you get the tickets?"}`,
		`      - {app: messages, title: Ben, text: "Did you get the tickets?"}`+"\n"+
			`      - {app: messages, title: Bank, text: "`+otpText+`"}`)}
	e.Daemon("--sim", "--console", "off")
	e.Unlock(android)
	h := e.StdioHost()
	h.Initialize()
	with := e2e.OnDevice(android)
	h.OK("phone_connect", with("task", "check my messages"), "Pixel Launcher")
	pause()
	shade := h.OK("phone_swipe", with("from", shadeSwipe["from"], "to", shadeSwipe["to"]), "Your code is ••••••")
	time.Sleep(400 * time.Millisecond) // the shade's frames come, and no read in between
	h.OK("phone_key", with("key", "back"), "")
	pause()
	h.OK("phone_observe", with("full", true), "Pixel Launcher")
	h.OK("phone_tap", with("text", "Notes"), "Notes")
	pause()
	h.OK("phone_key", with("key", "home"), "")
	pause()
	h.OK("phone_release", with(), "")
	if strings.Contains(h.Transcript(), otp) {
		t.Fatalf("the agent read the code: %q", shade)
	}
	checkTask(t, e, finder)
}

// TestRecordingKeepsNoCodeThatCameBetweenReads: the code arrives while
// the agent waits with the shade open, and the agent clears the shade
// without reading again. Both of the agent's reads around the code found
// no secret (the shade without it, then the home screen): the recorder
// must see the code by a read of its own, since before the fix the read
// after the shade closed vouched for every frame before it (the recorder
// read the screen itself only after packets had waited 3 s).
func TestRecordingKeepsNoCodeThatCameBetweenReads(t *testing.T) {
	finders := []*finder{newCodeFinder(t), bankScreenFinder(t, "Sign in to Bank"), bankScreenFinder(t, "Enter the code we sent you")}
	e := e2e.New(t)
	e.Extra = []string{"PINKY_SIM_WORLD=" + writeWorld(t, bankSignIn...)}
	e.WriteFile("policy.yaml", `blocked_categories: [wallets, password_managers]
unblocked_apps: [com.pinky.sim.bank]
rules:
  - name: default
    decision: allow
`)
	e.Daemon("--sim", "--console", "off")
	e.Unlock(android)
	h := e.StdioHost()
	h.Initialize()
	with := e2e.OnDevice(android)
	h.OK("phone_connect", with("task", "sign in to the bank"), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Bank"), "Sign in")
	signedIn := time.Now()
	h.OK("phone_tap", with("text", "Sign in"), "Enter the code")
	h.OK("phone_key", with("key", "home"), "Pixel Launcher")
	pause()
	shade := h.OK("phone_swipe", with("from", shadeSwipe["from"], "to", shadeSwipe["to"]), "Notifications")
	if strings.Contains(shade, "Your code") || time.Since(signedIn) > 2*time.Second {
		t.Fatalf("the shade opened %v after the sign-in, with %q; the attack needs it open before the code comes", time.Since(signedIn), shade)
	}
	// The agent waits; the code comes and shows in the open shade (the
	// person's own tool sees it: no agent reads).
	time.Sleep(time.Until(signedIn.Add(3 * time.Second)))
	if out, errs, code := e.Run("driver", "screen", android); code != 0 || !strings.Contains(out, otpText) {
		t.Fatalf("the code is not in the open shade 3 s after the sign-in: %s%s", out, errs)
	}
	time.Sleep(300 * time.Millisecond)
	h.OK("phone_tap", with("text", "Clear all"), "")
	pause()
	if obs := h.OK("phone_observe", with("full", true), "Pixel Launcher"); strings.Contains(obs, "Your code") {
		t.Fatalf("the code is still on screen after Clear all: %s", obs)
	}
	pause()
	h.OK("phone_release", with(), "")
	checkTask(t, e, finders...)
}

// bankSignIn edits the default world so that the Bank, unblocked for the
// test, has a password already saved in its sign-in form (typing one is
// the person's job), and sends its code 2.5 s after the sign-in.
var bankSignIn = []string{
	`vars: {username: "", password: "", otp: "", balance: "$2,431.08"}`,
	`vars: {username: "ana", password: "hunter2-Secret!", otp: "", balance: "$2,431.08"}`,
	`text: "Your code is 482913", after: 400ms`,
	`text: "Your code is 482913", after: 2500ms`,
}

// pause is the agent thinking between calls. It is longer than the time
// the recording needs to resume after a private screen (the video's lag,
// a key frame and a read), so that the recording has frames to look at.
func pause() { time.Sleep(900 * time.Millisecond) }

// writeWorldBytes is the default world with each old string (which must be
// there) replaced by the new one that follows it.
func writeWorldBytes(t *testing.T, oldNew ...string) []byte {
	t.Helper()
	world := defaultWorld(t)
	for i := 0; i < len(oldNew); i += 2 {
		if !bytes.Contains(world, []byte(oldNew[i])) {
			t.Fatalf("the default world no longer has %q; update the test", oldNew[i])
		}
		world = bytes.Replace(world, []byte(oldNew[i]), []byte(oldNew[i+1]), 1)
	}
	return world
}

// writeWorld writes the default world with each old string (which must be
// there) replaced by the new one that follows it, and returns its path.
func writeWorld(t *testing.T, oldNew ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "world.yaml")
	if err := os.WriteFile(path, writeWorldBytes(t, oldNew...), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func defaultWorld(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2e.Root(), "drivers", "sim", "worlds", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkTask decodes every frame of the last task's recording, and of the
// export of the task, and fails if any frame shows what one of the finders
// looks for.
func checkTask(t *testing.T, e *e2e.Env, finders ...*finder) {
	t.Helper()
	var tasks []api.Task
	e.Eventually("the task's recording is complete", func() bool {
		e.JSON(&tasks, "history")
		if len(tasks) == 0 || !tasks[0].Recording {
			return false
		}
		var d api.TaskDetail
		e.JSON(&d, "history", "show", tasks[0].ID)
		return !d.EndedAt.IsZero() && d.RecordingMS > 0
	})
	task := tasks[0].ID
	// The recording is closed in the background once the task ended:
	// stopping the daemon waits for it.
	if _, errs, code := e.Run("stop-daemon"); code != 0 {
		t.Fatalf("stop-daemon: %s", errs)
	}
	e.Daemon("--sim", "--console", "off")
	dir := filepath.Join(t.TempDir(), "report")
	if out, errs, code := e.Run("export", task, dir); code != 0 {
		t.Fatalf("pinky export: exit %d\n%s%s", code, out, errs)
	}
	for _, path := range []string{filepath.Join(e.Home, "recordings", task+".mp4"), filepath.Join(dir, task+".mp4")} {
		frames := decodeGray(t, path)
		// The recording goes on after the secret: the rule does not just
		// drop everything.
		if len(frames) < 3 {
			t.Errorf("%s: %d frames; want the task's screens (at least 3)", path, len(frames))
		}
		for _, f := range finders {
			var shown []int
			for i, fr := range frames {
				if at, ok := f.find(fr); ok {
					if len(shown) == 0 {
						t.Errorf("%s: frame %d of %d shows %s at %v", filepath.Base(path), i, len(frames), f.what, at)
					}
					shown = append(shown, i)
				}
			}
			if len(shown) > 0 {
				t.Errorf("%s: frames %v of %d show %s", filepath.Base(path), shown, len(frames), f.what)
			}
		}
	}
}

// gray is a decoded frame's luma.
type gray struct {
	w, h int
	pix  []byte
}

// decodeGray decodes every frame of a video file with ffmpeg.
func decodeGray(t *testing.T, path string) []gray {
	t.Helper()
	ffmpeg := testdep.Need(t, "ffmpeg")
	ffprobe := testdep.Need(t, "ffprobe")
	out, err := exec.Command(ffprobe, "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v\n%s", path, err, out)
	}
	ws, hs, _ := strings.Cut(strings.TrimSpace(string(out)), ",")
	w, _ := strconv.Atoi(ws)
	h, _ := strconv.Atoi(hs)
	if w <= 0 || h <= 0 {
		t.Fatalf("ffprobe %s: size %q", path, out)
	}
	out, err = exec.Command(ffprobe, "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe %s: %v\n%s", path, err, out)
	}
	want, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("ffprobe %s: frames %q", path, out)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(ffmpeg, "-v", "error", "-i", path, "-fps_mode", "passthrough", "-enc_time_base", "1/90000", "-f", "rawvideo", "-pix_fmt", "gray", "-")
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil || len(raw) != want*w*h {
		t.Fatalf("ffmpeg %s: %v: %d bytes for %d frames of %dx%d: %s", path, err, len(raw), want, w, h, stderr.Bytes())
	}
	var frames []gray
	for n := w * h; len(raw) >= n; raw = raw[n:] {
		frames = append(frames, gray{w: w, h: h, pix: raw[:n]})
	}
	return frames
}

// finder finds a text in a decoded frame, wherever it is: its templates
// are the text as the virtual phone draws it, cut from the phone's own
// video decoded by ffmpeg, so they are the very pixels a recording would
// hold.
type finder struct {
	what  string
	tmpls []template
}

// template is a patch of luma and the order to compare its pixels in: the
// most telling first (the darkest ink and the plain background), so that
// most places are ruled out after a pixel or two.
type template struct {
	w, h  int
	pix   []byte
	order []int
}

// Thresholds: a place matches when its pixels differ from the template's
// by less than maxMean on average; it is ruled out as soon as one of the
// first quick pixels differs by more than maxQuick.
const (
	maxMean  = 12
	maxQuick = 96
	quick    = 8
)

// newCodeFinder makes the templates from virtual phones of the same world,
// run in this process: one with the shade full of the code's notification,
// one with the same notifications without the digits. The digits are
// where their decoded frames differ, in each row: where a row falls
// changes how the edges of its text are drawn, so the rows give more than
// one template. The finder is then shown to find the code in every row of
// the first frame and in the heads-up banner of a code that just came, and
// nothing in the frame without it.
func newCodeFinder(t *testing.T) *finder {
	t.Helper()
	const rows = 8 // every row the shade has room for
	var codes, blanks strings.Builder
	for range rows {
		fmt.Fprintf(&codes, "      - {app: messages, title: Bank, text: %q}\n", otpText)
		fmt.Fprintf(&blanks, "      - {app: messages, title: Bank, text: %q}\n", strings.TrimSuffix(otpText, otp))
	}
	const ben = `      - {app: messages, title: Ben, text: "Did you get the tickets?"}` + "\n"
	openShade := func(ctx context.Context, d *sim.Driver) error {
		_, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 10}, To: sdk.Point{X: 540, Y: 1500}})
		return err
	}
	withCode, withCodeScreen := phoneFrame(t, bytes.Replace(defaultWorld(t), []byte(ben), []byte(codes.String()), 1), openShade)
	without, _ := phoneFrame(t, bytes.Replace(defaultWorld(t), []byte(ben), []byte(blanks.String()), 1), openShade)

	f := &finder{what: "the one-time code"}
	rowsSeen := 0
	for _, r := range textRects(withCodeScreen, withCode, otpText) {
		rowsSeen++
		digits := image.Rectangle{}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				i := y*withCode.w + x
				if d := int(withCode.pix[i]) - int(without.pix[i]); d > 24 || d < -24 {
					digits = digits.Union(image.Rect(x, y, x+1, y+1))
				}
			}
		}
		if digits.Dx() < 20 || digits.Dy() < 6 {
			t.Fatalf("the code's digits in the row at %v: %v; want six digits' worth of pixels", r, digits)
		}
		tm := cut(withCode, digits.Inset(-1))
		if !slices.ContainsFunc(f.tmpls, func(o template) bool { return o.w == tm.w && o.h == tm.h && bytes.Equal(o.pix, tm.pix) }) {
			f.tmpls = append(f.tmpls, tm)
		}
	}
	if rowsSeen != rows {
		t.Fatalf("%d rows of the shade show the code; want %d", rowsSeen, rows)
	}
	// The proof that the check can fail: it finds the code in every row of
	// the frames that show it, and nothing in the frame without it.
	for _, r := range textRects(withCodeScreen, withCode, otpText) {
		if !f.findIn(withCode, r.Inset(-2)) {
			t.Fatalf("the finder misses the code in the shade's row at %v", r)
		}
	}
	headsUp, headsUpScreen := phoneFrame(t, writeWorldBytes(t, bankSignIn[:2]...), func(ctx context.Context, d *sim.Driver) error {
		if _, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.bank"}); err != nil {
			return err
		}
		if err := tapText(ctx, d, "Sign in"); err != nil {
			return err
		}
		time.Sleep(700 * time.Millisecond) // the code comes after 400 ms
		return nil
	})
	banner := textRects(headsUpScreen, headsUp, otpText)
	if len(banner) != 1 || !f.findIn(headsUp, banner[0].Inset(-2)) {
		t.Fatalf("the finder misses the code in the heads-up banner (%d rows show it)", len(banner))
	}
	if at, ok := f.find(without); ok {
		t.Fatalf("the finder sees the code at %v in a frame without it", at)
	}
	return f
}

// bankScreenFinder finds the title of one of the Bank's sign-in screens
// (the one with the password field, the one with the code field): screens
// the gateway calls private, as it calls every screen with such a field.
func bankScreenFinder(t *testing.T, title string) *finder {
	t.Helper()
	fr, sc := phoneFrame(t, writeWorldBytes(t, bankSignIn[:2]...), func(ctx context.Context, d *sim.Driver) error {
		if _, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.bank"}); err != nil {
			return err
		}
		if title == "Sign in to Bank" {
			return nil
		}
		return tapText(ctx, d, "Sign in")
	})
	rects := textRects(sc, fr, title)
	if len(rects) != 1 {
		t.Fatalf("%d elements read %q on the Bank's screen; want 1", len(rects), title)
	}
	r := rects[0]
	// The title's ink: the pixels far from the most common shade of its
	// element (the background).
	var counts [256]int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			counts[fr.pix[y*fr.w+x]]++
		}
	}
	bg := 0
	for v := range counts {
		if counts[v] > counts[bg] {
			bg = v
		}
	}
	ink := image.Rectangle{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if d := int(fr.pix[y*fr.w+x]) - bg; d > 48 || d < -48 {
				ink = ink.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	if ink.Dx() < 40 || ink.Dy() < 6 {
		t.Fatalf("the ink of %q at %v: %v; want a line of text", title, r, ink)
	}
	f := &finder{what: fmt.Sprintf("the Bank's screen %q", title), tmpls: []template{cut(fr, ink.Inset(-1))}}
	if !f.findIn(fr, r.Inset(-2)) {
		t.Fatalf("the finder misses %q in the frame that shows it", title)
	}
	home, _ := phoneFrame(t, defaultWorld(t), func(context.Context, *sim.Driver) error { return nil })
	if at, ok := f.find(home); ok {
		t.Fatalf("the finder sees %q at %v on the home screen", title, at)
	}
	return f
}

// tapText taps the middle of the clickable element with the text.
func tapText(ctx context.Context, d *sim.Driver, text string) error {
	sc, err := d.Screen(ctx, android, 0)
	if err != nil {
		return err
	}
	for _, el := range sc.Elements {
		if el.Text == text && el.Clickable {
			c := sdk.Point{X: (el.Bounds.Left + el.Bounds.Right) / 2, Y: (el.Bounds.Top + el.Bounds.Bottom) / 2}
			_, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActTap, Point: c})
			return err
		}
	}
	return fmt.Errorf("no %q to tap", text)
}

// textRects returns where the elements of sc with the text are in a frame
// of it, scaled as the phone draws its video.
func textRects(sc *sdk.Screen, fr gray, text string) []image.Rectangle {
	scale := min(float64(fr.w)/float64(sc.Width), float64(fr.h)/float64(sc.Height))
	var out []image.Rectangle
	for _, el := range sc.Elements {
		if el.Text == text {
			b := el.Bounds
			out = append(out, image.Rect(int(float64(b.Left)*scale), int(float64(b.Top)*scale), int(float64(b.Right)*scale), int(float64(b.Bottom)*scale)).
				Intersect(image.Rect(0, 0, fr.w, fr.h)))
		}
	}
	return out
}

// findIn reports whether the code shows within r of fr.
func (f *finder) findIn(fr gray, r image.Rectangle) bool {
	r = r.Intersect(image.Rect(0, 0, fr.w, fr.h))
	sub := gray{w: r.Dx(), h: r.Dy()}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		sub.pix = append(sub.pix, fr.pix[y*fr.w+r.Min.X:y*fr.w+r.Max.X]...)
	}
	_, ok := f.find(sub)
	return ok
}

// find reports the first place in fr that shows the code.
func (f *finder) find(fr gray) (image.Point, bool) {
	for _, tm := range f.tmpls {
		if at, ok := tm.match(fr, true); ok {
			return at[0], true
		}
	}
	return image.Point{}, false
}

// match slides tm over fr; first stops at the first match.
func (tm template) match(fr gray, first bool) ([]image.Point, bool) {
	var ats []image.Point
	budget := maxMean * len(tm.pix)
	for y := 0; y+tm.h <= fr.h; y++ {
	place:
		for x := 0; x+tm.w <= fr.w; x++ {
			sum := 0
			for k, p := range tm.order {
				d := int(fr.pix[(y+p/tm.w)*fr.w+x+p%tm.w]) - int(tm.pix[p])
				if d < 0 {
					d = -d
				}
				if k < quick && d > maxQuick {
					continue place
				}
				if sum += d; sum > budget {
					continue place
				}
			}
			ats = append(ats, image.Pt(x, y))
			if first {
				return ats, true
			}
		}
	}
	return ats, len(ats) > 0
}

// cut copies r of fr as a template.
func cut(fr gray, r image.Rectangle) template {
	r = r.Intersect(image.Rect(0, 0, fr.w, fr.h))
	tm := template{w: r.Dx(), h: r.Dy()}
	mean := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		tm.pix = append(tm.pix, fr.pix[y*fr.w+r.Min.X:y*fr.w+r.Max.X]...)
	}
	for _, v := range tm.pix {
		mean += int(v)
	}
	mean /= len(tm.pix)
	tm.order = make([]int, len(tm.pix))
	for i := range tm.order {
		tm.order[i] = i
	}
	far := func(i int) int { d := int(tm.pix[i]) - mean; return max(d, -d) }
	slices.SortStableFunc(tm.order, func(a, b int) int { return far(b) - far(a) })
	// Alternate dark and light among the first, so that a place of one
	// flat colour fails at once.
	var dark, light []int
	for _, i := range tm.order {
		if int(tm.pix[i]) < mean {
			dark = append(dark, i)
		} else {
			light = append(light, i)
		}
	}
	tm.order = tm.order[:0]
	for len(dark) > 0 || len(light) > 0 {
		if len(dark) > 0 {
			tm.order, dark = append(tm.order, dark[0]), dark[1:]
		}
		if len(light) > 0 {
			tm.order, light = append(tm.order, light[0]), light[1:]
		}
	}
	return tm
}

// phoneFrame runs a virtual phone of world in this process, unlocks it,
// runs setup, and returns the phone's own video picture of its screen (its
// H.264, put in an MP4 by the recorder's muxer and decoded by ffmpeg, like
// a recording), with the screen the phone reports.
func phoneFrame(t *testing.T, world []byte, setup func(context.Context, *sim.Driver) error) (gray, *sdk.Screen) {
	t.Helper()
	w, err := sim.Parse(world, filepath.Join(e2e.Root(), "drivers", "sim", "worlds"))
	if err != nil {
		t.Fatal(err)
	}
	d := sim.New(w)
	defer d.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.Unlock(ctx, android, "1234"); err != nil {
		t.Fatal(err)
	}
	if err := setup(ctx, d); err != nil {
		t.Fatal(err)
	}
	sc, err := d.Screen(ctx, android, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "shade.mp4")
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	mux := fmp4.NewWriter(file, fmp4.Options{})
	sctx, stop := context.WithCancel(ctx)
	errDone := errors.New("got a key frame")
	err = d.StreamVideo(sctx, sdk.VideoRequest{DeviceID: android, MaxSide: daemon.VideoMaxSide}, func(p sdk.VideoPacket) error {
		if err := mux.Write(p); err != nil {
			return err
		}
		if p.KeyFrame {
			return errDone
		}
		return nil
	})
	stop()
	if !errors.Is(err, errDone) {
		t.Fatalf("the phone's video: %v", err)
	}
	if err := errors.Join(mux.Close(), file.Close()); err != nil {
		t.Fatal(err)
	}
	frames := decodeGray(t, path)
	if len(frames) != 1 {
		t.Fatalf("the phone's picture: %d frames; want 1", len(frames))
	}
	return frames[0], sc
}
