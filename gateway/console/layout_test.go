package console

import (
	"context"
	"math"
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
