package console

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// headerBox is where one element of the page's header is drawn.
type headerBox struct {
	ID                       string
	Left, Right, Top, Bottom float64
}

// headerBoxes measures every visible element of the header, the header
// itself included, once the page shows the approval badge.
func headerBoxes(ctx context.Context, t *testing.T) []headerBox {
	t.Helper()
	boxes, err := chromedp.Run(ctx, chromedp.Poll[[]headerBox](`(() => {
		if (document.getElementById('approval-count').hidden) return null;
		const top = document.getElementById('top');
		const out = [];
		for (const el of [top, ...top.querySelectorAll('*')]) {
			const r = el.getBoundingClientRect();
			if (r.width === 0 && r.height === 0) continue; // not drawn
			out.push({ID: el.id || el.tagName.toLowerCase(), Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom});
		}
		return out;
	})()`))
	if err != nil {
		t.Fatalf("the header never showed the approval badge: %v", err)
	}
	return boxes
}

// withApproval is a fake daemon with one pending approval, so that the
// header shows everything it can: the badge too.
func withApproval() *fakeDaemon {
	f := newFakeDaemon()
	f.approvals = []map[string]any{{
		"id": "ap1", "agent": "claude", "task": "Send the report", "device": "d1", "tool": "tap",
		"target": `[7] button "Send"`, "commit": "send", "status": "pending",
		"opened_at": time.Now(), "expires_at": time.Now().Add(time.Hour),
	}}
	return f
}

// TestBrowserHeaderOnAPhone: in a phone-sized window (390×844) every part
// of the header is inside the window, none covers another, and the page
// does not scroll sideways.
func TestBrowserHeaderOnAPhone(t *testing.T) {
	const width = 390
	ctx, _ := startBrowserConsole(t, withApproval(), newFakeScreen(red), Config{})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	boxes := headerBoxes(ctx, t)
	for _, b := range boxes {
		if b.Left < 0 || b.Right > width {
			t.Errorf("%s spans x %.0f to %.0f; want it within 0 to %d", b.ID, b.Left, b.Right, width)
		}
	}
	// The header's direct parts must not overlap: a cut-off label hides
	// under its neighbour.
	parts := map[string]bool{"h1": true, "nav-phones": true, "nav-history": true, "nav-settings": true, "approval-count": true, "conn": true, "stop-all": true}
	var seen []headerBox
	for _, b := range boxes {
		if !parts[b.ID] {
			continue
		}
		delete(parts, b.ID)
		if b.Right-b.Left < 1 || b.Bottom-b.Top < 1 {
			t.Errorf("%s is squeezed to %.1f × %.1f px", b.ID, b.Right-b.Left, b.Bottom-b.Top)
		}
		for _, o := range seen {
			if b.Left < o.Right && o.Left < b.Right && b.Top < o.Bottom && o.Top < b.Bottom {
				t.Errorf("%s (%.0f–%.0f × %.0f–%.0f) overlaps %s (%.0f–%.0f × %.0f–%.0f)", b.ID, b.Left, b.Right, b.Top, b.Bottom, o.ID, o.Left, o.Right, o.Top, o.Bottom)
			}
		}
		seen = append(seen, b)
	}
	for id := range parts {
		t.Errorf("%s is not drawn in the header", id)
	}
	sizes, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
	if err != nil {
		t.Fatal(err)
	}
	if sizes[0] > sizes[1] || sizes[1] != width {
		t.Errorf("the page is %d px wide in a window %d px wide; want it to fit %d px", sizes[0], sizes[1], width)
	}
}

// TestBrowserHeaderOnADesktop: in a wide window the header stays one row.
func TestBrowserHeaderOnADesktop(t *testing.T) {
	ctx, _ := startBrowserConsole(t, withApproval(), newFakeScreen(red), Config{})
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatal(err)
	}
	var h1 headerBox
	for _, b := range headerBoxes(ctx, t) {
		switch b.ID {
		case "h1":
			h1 = b
		case "nav-phones", "nav-history", "nav-settings", "approval-count", "conn", "stop-all":
			if mid, h1mid := (b.Top+b.Bottom)/2, (h1.Top+h1.Bottom)/2; math.Abs(mid-h1mid) > 1 {
				t.Errorf("%s is centred at y %.1f, the title at %.1f; want one row", b.ID, mid, h1mid)
			}
		}
	}
}

// approvalWithShot is a fake daemon with one pending approval whose card
// shows a phone-shaped screenshot (200×400) with the target outlined, and a
// Media that serves it.
func approvalWithShot(t *testing.T) (*fakeDaemon, Config) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), "shot.png")
	img := image.NewRGBA(image.Rect(0, 0, 200, 400))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{200, 200, 200, 255}}, image.Point{}, draw.Src)
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shot, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	f := withApproval()
	f.approvals[0]["screenshot"] = "m1"
	f.approvals[0]["summary"] = `Send "see you at 6" to Ben Okafor`
	f.approvals[0]["target_box"] = []int{50, 100, 100, 40}
	f.approvals[0]["screen_size"] = []int{200, 400}
	return f, Config{Media: func(context.Context, string) (string, error) { return shot, nil }}
}

// cardBoxes measures the approval card, its screenshot and the target box
// once the screenshot has loaded, and the page's width.
type cardBoxes struct {
	Card, Shot, Box, Body headerBox
	Overflow              []string // the card's parts that reach past the window's right edge
	PageWidth, Window     int
}

// checkTargetBox fails unless the target box is where approvalWithShot
// puts it: at 25% 25% of the picture, 50% by 10% of it.
func (c cardBoxes) checkTargetBox(t *testing.T) {
	t.Helper()
	sw, sh := c.Shot.Right-c.Shot.Left, c.Shot.Bottom-c.Shot.Top
	if math.Abs(c.Box.Left-(c.Shot.Left+sw/4)) > 2 || math.Abs(c.Box.Top-(c.Shot.Top+sh/4)) > 2 ||
		math.Abs(c.Box.Right-c.Box.Left-sw/2) > 2 || math.Abs(c.Box.Bottom-c.Box.Top-sh/10) > 2 {
		t.Errorf("the target box is at %+v on a picture at %+v; want it at 25%% 25%%, 50%% by 10%%", c.Box, c.Shot)
	}
}

func measureCard(ctx context.Context, t *testing.T) cardBoxes {
	t.Helper()
	got, err := chromedp.Run(ctx, chromedp.Poll[cardBoxes](`(() => {
		const img = document.getElementById('shot-ap1');
		if (!img || !img.complete || !img.naturalWidth) return null;
		const box = (el) => { const r = el.getBoundingClientRect(); return {ID: el.id, Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom}; };
		const card = document.getElementById('approval-ap1');
		const over = [];
		for (const el of card.querySelectorAll('*')) {
			const r = el.getBoundingClientRect();
			if (r.width > 0 && (r.right > window.innerWidth + 0.5 || r.left < -0.5)) over.push(el.id || el.className || el.tagName);
		}
		return {Card: box(card), Shot: box(img), Box: box(document.getElementById('box-ap1')), Body: box(card.querySelector('.approval-body')),
			Overflow: over, PageWidth: document.documentElement.scrollWidth, Window: window.innerWidth};
	})()`))
	if err != nil {
		t.Fatalf("the approval card's screenshot never loaded: %v", err)
	}
	return got
}

// TestBrowserApprovalOnAPhone: in a phone-sized window (390×844) the
// card's screenshot is large enough to read (at least 300 px wide), below
// the card's text, with the target box still on its place in it; nothing
// reaches past the window; a tap enlarges the screenshot and another puts
// it back.
func TestBrowserApprovalOnAPhone(t *testing.T) {
	const width = 390
	f, cfg := approvalWithShot(t)
	ctx, _ := startBrowserConsole(t, f, newFakeScreen(red), cfg)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 844, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	c := measureCard(ctx, t)
	if w := c.Shot.Right - c.Shot.Left; w < 300 {
		t.Errorf("the screenshot is %.0f px wide in a %d px window; want at least 300", w, width)
	}
	if c.Shot.Top < c.Body.Bottom-1 {
		t.Errorf("the screenshot starts at y %.0f, above the end of the card's text at %.0f; want it below", c.Shot.Top, c.Body.Bottom)
	}
	c.checkTargetBox(t)
	if len(c.Overflow) > 0 || c.PageWidth > c.Window || c.Window != width {
		t.Errorf("the page is %d px wide in a %d px window, and %q reach past it; want everything within %d px", c.PageWidth, c.Window, c.Overflow, width)
	}

	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("shotwrap-ap1"))); err != nil {
		t.Fatal(err)
	}
	big, err := chromedp.Run(ctx, chromedp.Poll[[]float64](`(() => {
		const w = document.getElementById('shotwrap-ap1'), r = document.getElementById('shot-ap1').getBoundingClientRect();
		const b = document.getElementById('box-ap1').getBoundingClientRect();
		return w.classList.contains('enlarged') ? [r.width, r.height, r.left, r.right, r.top, r.bottom, b.left, b.right, b.top, b.bottom] : null;
	})()`))
	if err != nil {
		t.Fatalf("a tap did not enlarge the screenshot: %v", err)
	}
	cardBoxes{Shot: headerBox{Left: big[2], Right: big[3], Top: big[4], Bottom: big[5]},
		Box: headerBox{Left: big[6], Right: big[7], Top: big[8], Bottom: big[9]}}.checkTargetBox(t)
	// 200×400 in 390×844 less the margins: as wide as the window allows.
	if big[0] < width-20 || big[1] < 2*big[0]-2 || big[2] < 0 || big[3] > width {
		t.Errorf("the enlarged screenshot is %.0f×%.0f px at x %.0f–%.0f; want it the window's width, twice as tall, within the window", big[0], big[1], big[2], big[3])
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("shotwrap-ap1"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById('shotwrap-ap1').classList.contains('enlarged')`)); err != nil {
		t.Errorf("a second tap left the screenshot enlarged: %v", err)
	}
}

// TestBrowserApprovalOnADesktop: in a wide window the card keeps its
// screenshot beside the text, as before.
func TestBrowserApprovalOnADesktop(t *testing.T) {
	f, cfg := approvalWithShot(t)
	ctx, _ := startBrowserConsole(t, f, newFakeScreen(red), cfg)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatal(err)
	}
	c := measureCard(ctx, t)
	if c.Shot.Right > c.Body.Left || c.Shot.Top > c.Body.Top+1 {
		t.Errorf("the screenshot is at %+v, the text at %+v; want the screenshot left of the text, at its top", c.Shot, c.Body)
	}
	c.checkTargetBox(t)
	if w := c.Shot.Right - c.Shot.Left; w < 150 || w > 400 {
		t.Errorf("the screenshot is %.0f px wide on a desktop; want a thumbnail of 150 to 400", w)
	}
}
