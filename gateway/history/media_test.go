package history_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pinky-gateway/pinky/gateway/history"
)

func jpegBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, w, h)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// seedSteps records task k1 with steps p1…pn and returns the store.
func seedSteps(t *testing.T, n int) *history.SQLite {
	t.Helper()
	s := openTemp(t)
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	if err := s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if err := s.AddStep(ctx, history.Step{ID: stepID(i), TaskID: "k1", Seq: i, Tool: "tap"}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func stepID(i int) string { return fmt.Sprintf("p%d", i) }

func TestMediaWriter(t *testing.T) {
	s := seedSteps(t, 1)
	dir := filepath.Join(t.TempDir(), "media")
	w := history.NewMediaWriter(s, dir, history.MediaOptions{})
	before, after := jpegBytes(t, 40, 80), jpegBytes(t, 20, 10)
	start := time.Now().Add(-time.Millisecond)
	for _, shot := range []history.Shot{
		{TaskID: "k1", StepID: "p1", Kind: history.KindBefore, JPEG: before, Width: 40, Height: 80},
		{TaskID: "k1", StepID: "p1", Kind: history.KindAfter, JPEG: after, Width: 20, Height: 10},
	} {
		if !w.Save(shot) {
			t.Fatalf("Save(%s): got false; want queued", shot.Kind)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	tests := []struct {
		kind string
		data []byte
		want history.Media
	}{
		{history.KindBefore, before, history.Media{ID: "p1-before", TaskID: "k1", StepID: "p1",
			Kind: "before", Path: "k1/p1-before.jpg", Width: 40, Height: 80, Bytes: int64(len(before))}},
		{history.KindAfter, after, history.Media{ID: "p1-after", TaskID: "k1", StepID: "p1",
			Kind: "after", Path: "k1/p1-after.jpg", Width: 20, Height: 10, Bytes: int64(len(after))}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			got, err := s.Media(ctx, history.MediaID("p1", tt.kind))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(history.Media{}, "CreatedAt")); diff != "" {
				t.Errorf("Media (-want +got):\n%s", diff)
			}
			if got.CreatedAt.Before(start) || got.CreatedAt.After(time.Now()) {
				t.Errorf("CreatedAt: got %v; want about now", got.CreatedAt)
			}
			file := filepath.Join(dir, filepath.FromSlash(got.Path))
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, tt.data) {
				t.Errorf("%s: got %d bytes; want the %d given", file, len(data), len(tt.data))
			}
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode() != 0o600 {
				t.Errorf("%s: got mode %v; want 0600", file, fi.Mode())
			}
		})
	}
	for _, d := range []string{dir, filepath.Join(dir, "k1")} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o700|os.ModeDir {
			t.Errorf("%s: got mode %v; want 0700", d, fi.Mode())
		}
	}
	// No temporary file is left behind.
	entries, err := os.ReadDir(filepath.Join(dir, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"p1-after.jpg", "p1-before.jpg"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}

	_, steps, err := s.Task(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Before != "p1-before" || steps[0].After != "p1-after" {
		t.Errorf("step media: got %+v; want before p1-before, after p1-after", steps)
	}
	if w.Dropped() != 0 {
		t.Errorf("Dropped: got %d; want 0", w.Dropped())
	}
}

func TestMediaWriterCloseFlushes(t *testing.T) {
	const n = 8
	s := seedSteps(t, n)
	dir := t.TempDir()
	slow := func(history.Shot) { time.Sleep(10 * time.Millisecond) }
	w := history.NewMediaWriterHook(s, dir, history.MediaOptions{Queue: n, Workers: 1}, slow)
	img := jpegBytes(t, 8, 8)
	for i := 1; i <= n; i++ {
		if !w.Save(history.Shot{TaskID: "k1", StepID: stepID(i), Kind: history.KindAfter, JPEG: img}) {
			t.Fatalf("Save %d: got false; want queued", i)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 1; i <= n; i++ {
		if _, err := os.Stat(filepath.Join(dir, "k1", stepID(i)+"-after.jpg")); err != nil {
			t.Errorf("after Close: %v", err)
		}
		if _, err := s.Media(ctx, history.MediaID(stepID(i), history.KindAfter)); err != nil {
			t.Errorf("after Close: %v", err)
		}
	}
	if w.Save(history.Shot{TaskID: "k1", StepID: "p1", Kind: history.KindBefore, JPEG: img}) {
		t.Error("Save after Close: got true; want false")
	}
}

func TestMediaWriterDropsWhenFull(t *testing.T) {
	s := seedSteps(t, 3)
	dir := t.TempDir()
	started := make(chan struct{}, 3)
	release := make(chan struct{})
	stuck := func(history.Shot) { started <- struct{}{}; <-release }
	w := history.NewMediaWriterHook(s, dir, history.MediaOptions{Queue: 1, Workers: 1}, stuck)
	img := jpegBytes(t, 8, 8)
	shot := func(i int) history.Shot {
		return history.Shot{TaskID: "k1", StepID: stepID(i), Kind: history.KindBefore, JPEG: img}
	}

	if !w.Save(shot(1)) {
		t.Fatal("Save 1: got false; want queued")
	}
	<-started // the worker holds shot 1; the queue is empty
	if !w.Save(shot(2)) {
		t.Fatal("Save 2: got false; want queued")
	}
	// The queue is full: Save must drop at once, not wait for the disk.
	done := make(chan bool)
	go func() { done <- w.Save(shot(3)) }()
	select {
	case ok := <-done:
		if ok {
			t.Error("Save 3: got true; want dropped")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Save 3 blocked on a full queue")
	}
	if got := w.Dropped(); got != 1 {
		t.Errorf("Dropped: got %d; want 1", got)
	}
	close(release)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false} {
		_, err := os.Stat(filepath.Join(dir, "k1", stepID(i+1)+"-before.jpg"))
		if got := err == nil; got != want {
			t.Errorf("shot %d saved: got %v; want %v", i+1, got, want)
		}
	}
}

func TestMediaWriterRefusesBadShots(t *testing.T) {
	s := seedSteps(t, 1)
	dir := t.TempDir()
	w := history.NewMediaWriter(s, dir, history.MediaOptions{})
	img := jpegBytes(t, 8, 8)
	tests := []struct {
		name string
		shot history.Shot
	}{
		{"task escapes", history.Shot{TaskID: "..", StepID: "p1", Kind: history.KindBefore, JPEG: img}},
		{"task with separator", history.Shot{TaskID: "a/../../x", StepID: "p1", Kind: history.KindBefore, JPEG: img}},
		{"step with separator", history.Shot{TaskID: "k1", StepID: "../p1", Kind: history.KindBefore, JPEG: img}},
		{"empty step", history.Shot{TaskID: "k1", Kind: history.KindBefore, JPEG: img}},
		{"unknown kind", history.Shot{TaskID: "k1", StepID: "p1", Kind: "thumb", JPEG: img}},
		{"no image", history.Shot{TaskID: "k1", StepID: "p1", Kind: history.KindAfter}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if w.Save(tt.shot) {
				t.Error("Save: got true; want refused")
			}
		})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("media folder: got %d entries; want none", len(entries))
	}
}

// A shot of an unknown step leaves no file behind.
func TestMediaWriterUnknownStep(t *testing.T) {
	s := seedSteps(t, 1)
	dir := t.TempDir()
	w := history.NewMediaWriter(s, dir, history.MediaOptions{})
	w.Save(history.Shot{TaskID: "k1", StepID: "p9", Kind: history.KindAfter, JPEG: jpegBytes(t, 8, 8)})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("got %d files; want none", len(entries))
	}
}
