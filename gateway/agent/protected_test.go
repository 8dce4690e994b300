package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// protectedShots is a driver whose screenshots fail with SCREEN_PROTECTED,
// as a driver that can give no picture of a secure window answers.
type protectedShots struct{ sdk.Driver }

func (protectedShots) Screenshot(context.Context, sdk.ScreenshotRequest) (*sdk.Image, error) {
	return nil, sdk.ErrScreenProtected
}

// A screenshot of a secure app (the world's Films: Android's FLAG_SECURE)
// is not passed off as the screen: the observation says screen_protected
// in its first line, carries no picture and still reads the elements, and
// the history's step keeps the line. A driver that answers
// SCREEN_PROTECTED gives the same result instead of an error.
func TestObserveSecureScreen(t *testing.T) {
	for _, tt := range []struct {
		name    string
		wrap    func(sdk.Driver) sdk.Driver
		app     string
		protect bool
	}{
		{"a blanked picture", nil, "com.pinky.sim.films", true},
		{"SCREEN_PROTECTED", func(d sdk.Driver) sdk.Driver { return protectedShots{d} }, "com.android.settings", true},
		{"an app that allows screenshots", nil, "com.android.settings", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			f.drv.wrap = tt.wrap
			s := f.connected(t)
			ctx := context.Background()
			if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: tt.app}, nil); err != nil {
				t.Fatal(err)
			}
			obs, err := s.Observe(ctx, "sim-android-1", true, true)
			if err != nil {
				t.Fatalf("observe with a screenshot: %v", err)
			}
			first, _, _ := strings.Cut(obs.Text, "\n")
			if got := strings.HasPrefix(first, NoteScreenProtected+": "); got != tt.protect || obs.Protected != tt.protect {
				t.Errorf("first line %q, Protected %v; want the note and Protected %v", first, obs.Protected, tt.protect)
			}
			if got := len(obs.Screenshot) > 0; got == tt.protect {
				t.Errorf("screenshot attached: %v; want %v", got, !tt.protect)
			}
			if tt.app == "com.pinky.sim.films" && !strings.Contains(obs.Text, `"The Long Voyage"`) {
				t.Errorf("the secure app's elements are not read: %q", obs.Text)
			}
			tasks, err := f.store.Tasks(ctx, history.TaskFilter{})
			if err != nil || len(tasks) != 1 {
				t.Fatalf("tasks: %v, %+v", err, tasks)
			}
			_, steps, err := f.store.Task(ctx, tasks[0].ID)
			if err != nil || len(steps) == 0 {
				t.Fatalf("steps: %v, %d", err, len(steps))
			}
			last := steps[len(steps)-1]
			if got := strings.Contains(last.Diff, NoteScreenProtected+":"); got != tt.protect {
				t.Errorf("the observe step's text notes it: %v; want %v (%q)", got, tt.protect, last.Diff)
			}
		})
	}
}

// Marks asked for on a secure screen are not drawn on its black picture:
// the result says screen_protected, carries no picture and keeps no grid,
// so a tap by mark is refused instead of aimed at nothing seen.
func TestMarksOnSecureScreen(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	ctx := context.Background()
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "com.pinky.sim.films"}, nil); err != nil {
		t.Fatal(err)
	}
	obs, err := s.ObserveWith(ctx, "sim-android-1", ObserveOptions{Marks: true})
	if err != nil {
		t.Fatalf("observe with marks: %v", err)
	}
	if !obs.Protected || obs.Marks != 0 || len(obs.Screenshot) != 0 || !strings.HasPrefix(obs.Text, NoteScreenProtected+": ") {
		t.Errorf("marks on a secure screen: Protected %v, %d marks, %d bytes of picture, text %.80q; want the note, no marks, no picture",
			obs.Protected, obs.Marks, len(obs.Screenshot), obs.Text)
	}
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Mark: 1}}, nil); err == nil || !strings.Contains(err.Error(), "no marks are shown") {
		t.Errorf("a tap by mark after marks on a black picture: %v; want refused, no marks shown", err)
	}
}
