package android

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
)

// maxLogLines is how many of a scrcpy server's last lines a session keeps.
const maxLogLines = 64

// logLine is one line a scrcpy server printed.
type logLine struct {
	n      int // its number: lines before it, since the server started
	stderr bool
	text   string
}

// serverLog is what a scrcpy server prints (Ln: "[server] INFO: …" on
// stdout, warnings and errors on stderr), line by line: its last lines for
// errors, and a feed that a caller waits on for a line it expects (the new
// display's id, what START_APP did).
type serverLog struct {
	mu    sync.Mutex
	lines []logLine     // the last maxLogLines lines
	n     int           // lines printed so far
	more  chan struct{} // closed, and replaced, when a line comes
}

// errLogEnded means the server exited before printing the line waited for.
var errLogEnded = errors.New("the scrcpy server ended")

func (l *serverLog) add(stderr bool, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, logLine{n: l.n, stderr: stderr, text: text})
	if len(l.lines) > maxLogLines {
		l.lines = l.lines[len(l.lines)-maxLogLines:]
	}
	l.n++
	if l.more != nil {
		close(l.more)
		l.more = nil
	}
}

// mark is the number of the next line: wait from there for what an action
// makes the server print.
func (l *serverLog) mark() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// tail is the last k lines, of stderr only when stderrOnly.
func (l *serverLog) tail(k int, stderrOnly bool) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, ln := range l.lines {
		if ln.stderr || !stderrOnly {
			out = append(out, ln.text)
		}
	}
	if len(out) > k {
		out = out[len(out)-k:]
	}
	return out
}

// wait returns the first line numbered since or later that match accepts.
// It fails with errLogEnded once ended is closed (the server exited) and no
// such line came, and with ctx's error when ctx ends first.
func (l *serverLog) wait(ctx context.Context, since int, ended <-chan struct{}, match func(logLine) bool) (logLine, error) {
	for {
		l.mu.Lock()
		for _, ln := range l.lines {
			if ln.n >= since && match(ln) {
				l.mu.Unlock()
				return ln, nil
			}
		}
		if len(l.lines) > 0 {
			since = max(since, l.lines[len(l.lines)-1].n+1)
		}
		if l.more == nil {
			l.more = make(chan struct{})
		}
		more := l.more
		l.mu.Unlock()
		select {
		case <-more:
		case <-ended:
			// The shell returned: every line it printed is in.
			l.mu.Lock()
			for _, ln := range l.lines {
				if ln.n >= since && match(ln) {
					l.mu.Unlock()
					return ln, nil
				}
			}
			l.mu.Unlock()
			return logLine{}, errLogEnded
		case <-ctx.Done():
			return logLine{}, ctx.Err()
		}
	}
}

// writer is an io.WriteCloser that adds what is written to the log, a line
// at a time; Close adds an unfinished last line.
func (l *serverLog) writer(stderr bool) io.WriteCloser {
	return &lineWriter{add: func(text string) { l.add(stderr, text) }}
}

type lineWriter struct {
	add     func(string)
	partial []byte
}

func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			w.partial = append(w.partial, b...)
			return n, nil
		}
		line := append(w.partial, b[:i]...)
		w.partial = nil
		w.add(strings.TrimRight(string(line), "\r"))
		b = b[i+1:]
	}
}

func (w *lineWriter) Close() error {
	if len(w.partial) > 0 {
		w.add(strings.TrimRight(string(w.partial), "\r"))
		w.partial = nil
	}
	return nil
}

// find returns the last kept line that contains sub.
func (l *serverLog) find(sub string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.lines) - 1; i >= 0; i-- {
		if strings.Contains(l.lines[i].text, sub) {
			return l.lines[i].text, true
		}
	}
	return "", false
}

// has reports whether a kept line is exactly line.
func (l *serverLog) has(line string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ll := range l.lines {
		if strings.TrimSpace(ll.text) == line {
			return true
		}
	}
	return false
}
