package ios

import (
	"context"

	"github.com/pinky-gateway/pinky/drivers/ios/wda"
)

// WebDriverAgent's settings, as the driver sets them in every session (see
// the package doc and README.md, "WebDriverAgent's settings", for what each
// costs and buys).
const (
	// baseDepth is the snapshotMaxDepth a session starts with: above WDA's
	// 50, which cuts apps with deep view trees (React Native, web views),
	// with a margin of ten levels; a read that reaches it is read again at
	// deepDepth.
	baseDepth = 60
	// deepDepth is the depth a read that reached baseDepth is made again
	// with, and the most the driver asks: WDA calls depths up to 100
	// acceptable, and a tree deeper than 120 is a pathological one whose
	// snapshot takes seconds.
	deepDepth = 120
)

// excludedAttributes are the page source's attributes the driver never
// reads (drivers/dump reads type, name, label, value, placeholderValue,
// rect, enabled, visible, focused and selected): WDA computes none of those
// it leaves out. visible stays although it is the costly one: without it a
// hidden element would be reported as shown.
var excludedAttributes = []string{"frame", "nativeFrame", "accessible", "nativeAccessibilityElement", "traits", "minValue", "maxValue"}

// sessionSettings are the settings of every WDA session the driver makes.
//
// waitForIdleTimeout 0: XCTest would otherwise wait up to 10 s before each
// event for an app that keeps animating; the gateway settles after the
// action itself. animationCoolOffTimeout 0: WDA would otherwise run an
// idle check (0.5–0.8 s on an idle app) after every W3C gesture, a swipe or
// a scroll, and before an XML source; the gateway's settle reads until the
// screen is still, which that check cannot make unnecessary.
func sessionSettings(depth int) map[string]any {
	return map[string]any{
		"snapshotMaxDepth":        depth,
		"waitForIdleTimeout":      0,
		"animationCoolOffTimeout": 0,
	}
}

// wdaOptions are the WDA client's options for the settings: none when the
// driver leaves WebDriverAgent's defaults (Config.StockWDA).
func (d *Driver) wdaOptions() []wda.Option {
	if d.cfg.StockWDA {
		return nil
	}
	return []wda.Option{wda.WithSettings(sessionSettings(baseDepth)), wda.WithExcludedAttributes(excludedAttributes...)}
}

// treeDepth is the depth of the deepest element of a JSON page source: 0
// for the application alone. Each element is a JSON object and its rect is
// one more inside it, so the deepest element lies two object levels above
// the deepest object. The scan skips strings; it reads no values.
func treeDepth(src []byte) int {
	level, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range src {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{':
			level++
			deepest = max(deepest, level)
		case c == '}':
			level--
		}
	}
	return max(deepest-2, 0)
}

// source reads the page source with a snapshot deep enough for it. A tree
// that reaches the session's snapshotMaxDepth may have been cut there (WDA
// says nothing of what it left out), so it is read again at deepDepth; a
// later tree well within baseDepth brings the depth back down, so that a
// pathological app does not keep every later read deep.
func (p *phone) source(ctx context.Context, stock bool) ([]byte, error) {
	src, err := p.wda.Source(ctx)
	if err != nil || stock {
		return src, err
	}
	depth := treeDepth(src)
	p.mu.Lock()
	limit := p.depth
	if limit == 0 {
		limit = baseDepth
	}
	p.mu.Unlock()
	switch {
	case depth >= limit && limit < deepDepth:
		if err := p.setDepth(ctx, deepDepth); err != nil {
			return src, nil // the cut tree is the best there is
		}
		if deep, err := p.wda.Source(ctx); err == nil {
			return deep, nil
		}
	case depth < baseDepth-10 && limit > baseDepth:
		p.setDepth(ctx, baseDepth) // best effort: a deep limit only costs time
	}
	return src, nil
}

// setDepth sets snapshotMaxDepth in the session and for later sessions.
func (p *phone) setDepth(ctx context.Context, depth int) error {
	if _, err := p.wda.UpdateSettings(ctx, map[string]any{"snapshotMaxDepth": depth}); err != nil {
		return err
	}
	p.mu.Lock()
	p.depth = depth
	p.mu.Unlock()
	return nil
}
