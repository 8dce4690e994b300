package cli_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/screen/marks"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

// markedResult is a tool result with its screenshot decoded.
type markedResult struct {
	text  string
	isErr bool
	marks int
	img   image.Image
}

// callMarked calls a tool through h and decodes the JPEG it carries.
func callMarked(t *testing.T, h *e2e.Host, name string, args map[string]any) markedResult {
	t.Helper()
	r := h.Response(h.Request("tools/call", map[string]any{"name": name, "arguments": args}), 30*time.Second)
	res, ok := r["result"].(map[string]any)
	if !ok {
		t.Fatalf("%s: no result: %v", name, r)
	}
	var out markedResult
	for _, c := range res["content"].([]any) {
		switch m := c.(map[string]any); m["type"] {
		case "text":
			out.text += m["text"].(string)
		case "image":
			data, err := base64.StdEncoding.DecodeString(m["data"].(string))
			if err != nil {
				t.Fatalf("%s: image: %v", name, err)
			}
			if out.img, err = jpeg.Decode(bytes.NewReader(data)); err != nil {
				t.Fatalf("%s: image: %v", name, err)
			}
		}
	}
	out.isErr, _ = res["isError"].(bool)
	if sc, ok := res["structuredContent"].(map[string]any); ok {
		n, _ := sc["marks"].(float64)
		out.marks = int(n)
	}
	return out
}

// colourBox is the bounding box of the pixels near rgb in img.
func colourBox(img image.Image, rgb [3]int) image.Rectangle {
	var box image.Rectangle
	b := img.Bounds()
	near := func(a uint32, want int) bool { d := int(a>>8) - want; return d > -24 && d < 24 }
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(r, rgb[0]) && near(g, rgb[1]) && near(bl, rgb[2]) {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}

// The virtual phones' sizes, for the grid the gateway lays over them.
var simScreens = map[string]struct{ w, h, dpi int }{
	"sim-android-1": {1080, 2400, 420},
	"sim-ios-1":     {1179, 2556, 460},
}

// markOver is the mark whose cell holds the centre of box, a box of the
// screenshot img of device, in the grid the gateway lays over it.
func markOver(t *testing.T, device string, img image.Image, box image.Rectangle) (int, marks.Grid) {
	t.Helper()
	s := simScreens[device]
	g := marks.New(sdk.Rect{Top: (24*s.dpi + 80) / 160, Right: s.w, Bottom: s.h}, s.w, s.h, s.dpi)
	f := float64(s.w) / float64(img.Bounds().Dx())
	c := (box.Min.Add(box.Max)).Div(2)
	pt := sdk.Point{X: int(float64(c.X) * f), Y: int(float64(c.Y) * f)}
	for n := 1; n <= g.Len(); n++ {
		if cell, _ := g.Cell(n); cell.Contains(pt) {
			return n, g
		}
	}
	t.Fatalf("%s: no mark over %v (%+v on the screen)", device, box, pt)
	return 0, g
}

var (
	startPurple = [3]int{0x7b, 0x1f, 0xa2}
	catchGreen  = [3]int{0x2e, 0x7d, 0x32}
)

// TestMarksOverStdio: through a real `pinky mcp` and daemon on both virtual
// phones, the Stars game (drawn without accessibility nodes) comes with the
// note and a screenshot of numbered marks; phone_tap mark=N on the drawn
// Start starts the game, and the history keeps the mark and the point.
// A mark with no grid shown, or past the grid, is invalid_argument.
func TestMarksOverStdio(t *testing.T) {
	e := newEnv(t)
	h := e.StdioHost("PINKY_SIM=1")
	h.Initialize()
	for _, dev := range []string{"sim-android-1", "sim-ios-1"} {
		with := e2e.OnDevice(dev)
		h.OK("phone_connect", with("task", "e2e: play Stars"), "LOCKED")
		e.Unlock(dev)
		h.OK("phone_launch", with("app", "Settings"), "Wi-Fi")
		// A screen with a tree shows no marks, so a mark names nothing yet.
		if text := h.Fails("phone_tap", with("mark", 3), "invalid_argument"); !strings.Contains(text, "marks=true") {
			t.Errorf("%s: a mark with no grid: %q; want how to get one", dev, text)
		}
		launched := callMarked(t, h, "phone_launch", with("app", "Stars"))
		if launched.isErr || !strings.Contains(launched.text, "almost no elements") || launched.img == nil || launched.marks == 0 {
			t.Fatalf("%s: launching the game: got %q (image %v, %d marks); want the note and marks", dev, launched.text, launched.img != nil, launched.marks)
		}
		obs := callMarked(t, h, "phone_observe", with())
		if obs.isErr || !strings.Contains(obs.text, "phone_tap mark=N") || obs.img == nil {
			t.Fatalf("%s: observe: got %q; want the note and a marked screenshot", dev, obs.text)
		}
		start := colourBox(obs.img, startPurple)
		if start.Empty() {
			t.Fatalf("%s: no Start button in the screenshot", dev)
		}
		n, g := markOver(t, dev, obs.img, start)
		if obs.marks != g.Len() || !strings.Contains(obs.text, g.Note(true)) {
			t.Errorf("%s: got %d marks and %q; want %d and %q", dev, obs.marks, obs.text, g.Len(), g.Note(true))
		}
		h.Fails("phone_tap", with("mark", g.Len()+1), "invalid_argument")
		tapped := callMarked(t, h, "phone_tap", with("mark", n))
		if tapped.isErr || tapped.img == nil {
			t.Fatalf("%s: tap mark %d: got %q; want the new screen with marks", dev, n, tapped.text)
		}
		if !colourBox(tapped.img, startPurple).Empty() || colourBox(tapped.img, catchGreen).Empty() {
			t.Errorf("%s: after tapping mark %d on Start: want the game's level screen (its green button), not the title", dev, n)
		}
		h.OK("phone_release", with(), "")

		task := e.lastTask(t)
		var detail api.TaskDetail
		e.JSON(&detail, "history", "show", task.ID)
		centre, _ := g.Center(n)
		found := false
		for _, st := range detail.StepList {
			var args map[string]any
			_ = json.Unmarshal(st.Args, &args)
			if st.Tool == "phone_tap" && st.Outcome == "ok" {
				found = args["mark"] == float64(n) && args["x"] == float64(centre.X) && args["y"] == float64(centre.Y)
				if !found {
					t.Errorf("%s: the tap's step: got args %s; want mark %d at %d,%d", dev, st.Args, n, centre.X, centre.Y)
				}
			}
		}
		if !found {
			t.Errorf("%s: no phone_tap step in the history", dev)
		}
	}
}
