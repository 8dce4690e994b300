package wda

import (
	"context"
	"fmt"
	"time"
)

// swipePause is the pause between a swipe's touch down and its move: the
// touch begins before it moves, and stays far below the half second after
// which iOS sees a long press.
const swipePause = 25 * time.Millisecond

// Swipe moves one finger from (x1, y1) to (x2, y2), in points, over d (POST
// /actions): down, a short pause, the move, up. A fast swipe flings a list;
// a slow one scrolls it by the distance.
func (c *Client) Swipe(ctx context.Context, x1, y1, x2, y2 float64, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("wda: swipe: negative duration %v", d)
	}
	return c.actions(ctx, swipePause+d, touchPath(x1, y1, x2, y2, swipePause, d))
}

// Drag presses at (x1, y1), holds for hold so that iOS picks the item up,
// then moves to (x2, y2) over d and lets go (POST /actions). Coordinates
// are in points.
func (c *Client) Drag(ctx context.Context, x1, y1, x2, y2 float64, hold, d time.Duration) error {
	if d < 0 || hold < 0 {
		return fmt.Errorf("wda: drag: negative duration (hold %v, move %v)", hold, d)
	}
	return c.actions(ctx, hold+d, touchPath(x1, y1, x2, y2, hold, d))
}

// Pinch puts two fingers down at from[0] and from[1], pauses briefly, moves
// them together over d to to[0] and to[1], and lifts them (POST /actions
// with two touch pointers, which WebDriverAgent plays at the same time).
// Points are {x, y} in points. Unlike /wda/element/:uuid/pinch it works at
// any point, not only around an element's centre.
func (c *Client) Pinch(ctx context.Context, from, to [2][2]float64, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("wda: pinch: negative duration %v", d)
	}
	var fingers []pointerActions
	for i := range 2 {
		f := touchPath(from[i][0], from[i][1], to[i][0], to[i][1], swipePause, d)
		f.ID = fmt.Sprintf("finger%d", i+1)
		fingers = append(fingers, f)
	}
	return c.actions(ctx, swipePause+d, fingers...)
}

func (c *Client) actions(ctx context.Context, d time.Duration, a ...pointerActions) error {
	body := struct {
		Actions []pointerActions `json:"actions"`
	}{a}
	return c.post(ctx, request{path: "/actions", session: true, body: body, extra: d})
}

// pointerActions is one W3C input source: a touch pointer and its steps.
type pointerActions struct {
	Type       string `json:"type"` // "pointer"
	ID         string `json:"id"`
	Parameters struct {
		PointerType string `json:"pointerType"` // "touch"
	} `json:"parameters"`
	Actions []step `json:"actions"`
}

// step is one W3C pointer action. Durations are in milliseconds.
type step struct {
	Type     string   `json:"type"`
	Duration *int64   `json:"duration,omitempty"`
	X        *float64 `json:"x,omitempty"`
	Y        *float64 `json:"y,omitempty"`
	Button   *int     `json:"button,omitempty"`
}

// touchPath is one finger put down at (x1, y1), paused for pause, moved to
// (x2, y2) over move, and lifted.
func touchPath(x1, y1, x2, y2 float64, pause, move time.Duration) pointerActions {
	ms := func(d time.Duration) *int64 { v := d.Milliseconds(); return &v }
	left := 0
	a := pointerActions{Type: "pointer", ID: "finger1"}
	a.Parameters.PointerType = "touch"
	a.Actions = []step{
		{Type: "pointerMove", Duration: ms(0), X: &x1, Y: &y1},
		{Type: "pointerDown", Button: &left},
		{Type: "pause", Duration: ms(pause)},
		{Type: "pointerMove", Duration: ms(move), X: &x2, Y: &y2},
		{Type: "pointerUp", Button: &left},
	}
	return a
}
