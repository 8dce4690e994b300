package android

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// The log is cut into lines whatever the writes' sizes, stdout and stderr
// apart; tail gives the last lines for errors.
func TestServerLogLines(t *testing.T) {
	var l serverLog
	out, errw := l.writer(false), l.writer(true)
	io.WriteString(out, "[server] INFO: Device: [Google] google Pixel 8 (Android 15)\r\n[server] INFO: New disp")
	io.WriteString(errw, "[server] WARN: Unknown server option: x\n")
	io.WriteString(out, "lay: 1080x1920/420 (id=7)\n[server] INFO: unfinished")
	out.Close()
	errw.Close()
	want := []string{"[server] INFO: Device: [Google] google Pixel 8 (Android 15)", "[server] WARN: Unknown server option: x", "[server] INFO: New display: 1080x1920/420 (id=7)", "[server] INFO: unfinished"}
	if diff := cmp.Diff(want, l.tail(10, false)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"[server] WARN: Unknown server option: x"}, l.tail(10, true)); diff != "" {
		t.Errorf("stderr lines (-want +got):\n%s", diff)
	}
	if got := l.tail(1, false); len(got) != 1 || got[0] != want[3] {
		t.Errorf("tail(1): got %q; want the last line", got)
	}
	m := newDisplayLine.FindStringSubmatch(want[2])
	if diff := cmp.Diff([]string{want[2], "1080", "1920", "420", "7"}, m); diff != "" {
		t.Errorf("the new display line (-want +got):\n%s", diff)
	}
	for i := range maxLogLines + 10 {
		l.add(false, fmt.Sprint(i))
	}
	if n := len(l.tail(1000, false)); n != maxLogLines {
		t.Errorf("kept %d lines; want the last %d", n, maxLogLines)
	}
}

// wait finds a line printed after the mark, waits for one to come, and
// gives up when the server ends or the context does.
func TestServerLogWait(t *testing.T) {
	var l serverLog
	ended := make(chan struct{})
	ctx := testkit.Context(t)
	l.add(true, `[server] WARN: No app found for package "a"`)
	mark := l.mark()
	is := func(text string) func(logLine) bool {
		return func(ln logLine) bool { return strings.Contains(ln.text, text) }
	}
	got := make(chan error, 1)
	go func() {
		ln, err := l.wait(ctx, mark, ended, is("No app found"))
		if err == nil && !strings.Contains(ln.text, `"b"`) {
			err = fmt.Errorf("got line %q; want the one after the mark", ln.text)
		}
		got <- err
	}()
	l.add(false, "[server] INFO: Video capture reset")
	l.add(true, `[server] WARN: No app found for package "b"`)
	if err := <-got; err != nil {
		t.Errorf("wait: %v", err)
	}
	// A line printed just before the end still counts.
	l.add(false, "last words")
	close(ended)
	if _, err := l.wait(ctx, 0, ended, is("last words")); err != nil {
		t.Errorf("wait for a line printed before the end: %v", err)
	}
	if _, err := l.wait(ctx, 0, ended, is("never")); !errors.Is(err, errLogEnded) {
		t.Errorf("wait after the end: %v; want errLogEnded", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := l.wait(cctx, 0, make(chan struct{}), is("never")); !errors.Is(err, context.Canceled) {
		t.Errorf("wait with a canceled context: %v; want context.Canceled", err)
	}
}
