package agent

import (
	"context"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
	"github.com/pinky-gateway/pinky/gateway/screen/marks"
)

// Screens without a tree (a game, a canvas, a web view) get a screenshot
// with a grid of numbered marks (package marks): a read that finds the
// screen bare (screen.View.Bare) says so in one sentence and carries the
// marked screenshot, and so does phone_observe with marks on any screen.
// The grid is kept with the task's last read, so that phone_tap with a
// mark taps that cell's centre on the screen the agent saw; a read that
// shows no marks forgets it.

// shotSide and shotQuality are the screenshot's longest side and JPEG
// quality, for a marked screenshot as for phone_observe's.
const (
	shotSide    = 1280
	shotQuality = 75
)

// ObserveOptions say what a phone_observe call asks for.
type ObserveOptions struct {
	Full       bool // the whole screen, not what changed
	Screenshot bool // a JPEG screenshot
	Marks      bool // a screenshot with the grid of marks, on any screen
}

// ObserveWith is Observe with marks: a screenshot with the numbered grid
// that phone_tap's mark names, whatever the screen.
func (s *Session) ObserveWith(ctx context.Context, device string, o ObserveOptions) (*Observation, error) {
	args := map[string]any{"device": device, "full": o.Full, "screenshot": o.Screenshot}
	if o.Marks {
		args["marks"] = true
	}
	return s.observeAt(ctx, device, ToolObserve, args, o)
}

// mark adds the marks to obs when view is bare or the agent asked for
// them: the note first in its text, the screenshot with the grid drawn on
// it, and the grid kept with the task's last read. Any other read forgets
// the grid. It reports whether it took the screenshot.
func (s *Session) mark(ctx context.Context, c *call, view *screen.View, obs *Observation, asked bool) (bool, error) {
	bare := view.Bare()
	if !asked && !bare {
		s.setGrid(c.task, nil)
		return false, nil
	}
	area := view.ContentArea()
	if area.Height() <= 0 {
		s.setGrid(c.task, nil)
		return false, nil
	}
	g := marks.New(area, view.Width, view.Height, view.DensityDPI)
	img, err := s.m.still(ctx, c.p, c.drv, sdk.ScreenshotRequest{DeviceID: c.device, DisplayID: c.display(), Format: sdk.FormatJPEG, MaxSide: shotSide, Quality: shotQuality})
	if blankedShot(img, err) {
		// Marks on a black picture would point at nothing the agent can
		// see: say that the app blocks screenshots instead (protected.go).
		s.setGrid(c.task, nil)
		protect(obs)
		return true, nil
	}
	if err != nil {
		s.setGrid(c.task, nil)
		return false, fromDriver(c.device, err, false)
	}
	data, err := s.cover(c.p, img)
	if err == nil {
		data, err = marks.Draw(data, g, shotQuality)
	}
	if err != nil {
		s.setGrid(c.task, nil)
		return false, err
	}
	obs.Screenshot, obs.Marks = data, g.Len()
	obs.Text = g.Note(bare) + "\n" + obs.Text
	s.setGrid(c.task, &g)
	return true, nil
}

// setGrid keeps g as the grid of the task's last read (nil: none shown).
func (s *Session) setGrid(tk *task, g *marks.Grid) {
	s.m.mu.Lock()
	tk.grid = g
	s.m.mu.Unlock()
}

// markTarget turns a mark into the point it names on the screen the agent
// saw: the centre of its cell in the grid of the task's last read. view is
// the screen now, which must have the grid's size.
func (s *Session) markTarget(tk *task, view *screen.View, t Target) (Target, error) {
	s.m.mu.Lock()
	g := tk.grid
	s.m.mu.Unlock()
	if g == nil {
		return t, Errorf(CodeInvalidArgument, "mark %d: no marks are shown; read the screen with phone_observe marks=true, then tap a mark of its screenshot", t.Mark)
	}
	pt, ok := g.Center(t.Mark)
	if !ok {
		return t, Errorf(CodeInvalidArgument, "mark %d: the grid shown has marks 1 to %d; pick one of its screenshot", t.Mark, g.Len())
	}
	if view != nil && view.Width > 0 && (view.Width != g.Width || view.Height != g.Height) {
		return t, Errorf(CodeInvalidArgument, "mark %d: the screen is %dx%d now, not %dx%d as when the marks were shown; read it again with phone_observe marks=true",
			t.Mark, view.Width, view.Height, g.Width, g.Height)
	}
	t.X, t.Y, t.HasPoint = pt.X, pt.Y, true
	return t, nil
}
