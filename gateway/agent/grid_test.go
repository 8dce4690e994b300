package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/screen/marks"
)

// lastGrid is the grid of the session's task on the Android phone.
func lastGrid(t *testing.T, s *Session) *marks.Grid {
	t.Helper()
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	for _, tk := range s.m.tasks {
		if tk.device == "sim-android-1" {
			return tk.grid
		}
	}
	t.Fatal("no task on sim-android-1")
	return nil
}

// A tap by mark goes through the same gate as a tap at its point: a mark
// over the Messages' Send button, on a screenshot the agent asked marks
// for, asks the person.
func TestMarkOverSendAsks(t *testing.T) {
	f, book := approvalFixture(t, 100*time.Millisecond)
	s := f.session(t, "agent")
	inThread(t, f, s)
	ctx := context.Background()
	obs, err := s.ObserveWith(ctx, "sim-android-1", ObserveOptions{Marks: true})
	if err != nil {
		t.Fatal(err)
	}
	g := lastGrid(t, s)
	if g == nil || obs.Marks != g.Len() || len(obs.Screenshot) == 0 || !strings.HasPrefix(obs.Text, "The screenshot carries a grid of") {
		t.Fatalf("observe with marks: got %d marks, %d bytes, %q; want the grid, its screenshot and its note", obs.Marks, len(obs.Screenshot), obs.Text)
	}
	full, err := s.Observe(ctx, "sim-android-1", true, false)
	if err != nil || strings.Contains(full.Text, "numbered marks") {
		t.Fatalf("a screen with a tree: got %v %q; want no marks", err, full.Text)
	}
	// The read without marks forgot the grid: ask for it again.
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Mark: 1}}, nil); err == nil {
		t.Fatal("a mark after a read without marks: got no error")
	} else {
		wantCode(t, "a mark after a read without marks", err, CodeInvalidArgument)
	}
	if _, err := s.ObserveWith(ctx, "sim-android-1", ObserveOptions{Marks: true}); err != nil {
		t.Fatal(err)
	}
	g = lastGrid(t, s)
	var sendMark int
	s.m.mu.Lock()
	for _, tk := range s.m.tasks {
		if n, err := tk.last.ByText("Send", 1); err == nil {
			for m := 1; m <= g.Len() && sendMark == 0; m++ {
				if c, _ := g.Center(m); n.Bounds.Contains(c) {
					sendMark = m
				}
			}
		}
	}
	s.m.mu.Unlock()
	if sendMark == 0 {
		t.Fatal("no mark's centre on Send")
	}
	_, err = s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Mark: sendMark}}, nil)
	wantCode(t, "a mark over Send", err, CodeApprovalPending)
	if cards := book.List(true); len(cards) != 1 || !strings.Contains(cards[0].Target, `"Send"`) {
		t.Errorf("the card: got %+v; want one for Send", cards)
	}
}

func TestMarkErrors(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	ctx := context.Background()
	if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "Stars"}, nil); err != nil {
		t.Fatal(err)
	}
	obs, err := s.Observe(ctx, "sim-android-1", false, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs.Text, "almost no elements") || obs.Marks == 0 || len(obs.Screenshot) == 0 {
		t.Fatalf("the game: got %q with %d marks; want the note and a marked screenshot", obs.Text, obs.Marks)
	}
	_, err = s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Mark: obs.Marks + 1}}, nil)
	if e := wantCode(t, "a mark past the grid", err, CodeInvalidArgument); !strings.Contains(e.Message, "marks 1 to") {
		t.Errorf("got %q; want the grid's range", e.Message)
	}
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Mark: 1}}, nil); err != nil {
		t.Errorf("a mark of the grid: %v", err)
	}
}
