package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what a helper reports. Its Fatal
// ends the goroutine, as the real one does, so helpers run through run.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  bool
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.mu.Lock()
	r.fatal = true
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func (r *recorder) Log(args ...any) { r.Errorf("log: %s", fmt.Sprint(args...)) }

// run calls f with a recorder on a goroutine of its own and returns the
// recorder once f has returned or called Fatal.
func run(t *testing.T, f func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				fmt.Fprintf(&b, "%d.%d\n", i, j)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := strings.Count(b.String(), "\n"); got != 800 {
		t.Errorf("lines: got %d; want 800", got)
	}
	c := b.Bytes()
	c[0] = '!'
	if b.String()[0] == '!' {
		t.Errorf("Bytes returned the buffer itself, not a copy")
	}
	b.Logger().Debug("quiet", "k", "v")
	if got := b.String(); !strings.Contains(got, "level=DEBUG msg=quiet k=v") {
		t.Errorf("Logger: got %q; want a debug line", got[len(got)-min(len(got), 80):])
	}
}

func TestLogger(t *testing.T) {
	r := run(t, func(tb testing.TB) { Logger(tb).Debug("read", "device", "sim-android-1") })
	if len(r.errors) != 1 || !strings.HasSuffix(r.errors[0], "level=DEBUG msg=read device=sim-android-1") {
		t.Errorf("got %q; want one debug line without its newline", r.errors)
	}
}

func TestWait(t *testing.T) {
	for _, tt := range []struct {
		name      string
		limit     time.Duration
		holdAfter int // calls of cond before it holds; -1 never
		wantFatal string
	}{
		{"at once", time.Second, 0, ""},
		{"after a few polls", time.Second, 5, ""},
		{"never", 30 * time.Millisecond, -1, "the phone unlocked: not within 30ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			cond := func() bool { calls++; return tt.holdAfter >= 0 && calls > tt.holdAfter }
			r := run(t, func(tb testing.TB) { WaitWithin(tb, tt.limit, "the phone unlocked", cond) })
			got := strings.Join(r.errors, "; ")
			if got != tt.wantFatal || r.fatal != (tt.wantFatal != "") {
				t.Errorf("got %q (fatal %v); want %q", got, r.fatal, tt.wantFatal)
			}
			if tt.holdAfter >= 0 && calls != tt.holdAfter+1 {
				t.Errorf("cond called %d times; want %d", calls, tt.holdAfter+1)
			}
		})
	}
}

// TestWaitUntil: the default limit lets a condition that holds at the
// third call pass; Poll with no time left gives up after one call.
func TestWaitUntil(t *testing.T) {
	calls := 0
	WaitUntil(t, "the third call", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("WaitUntil: cond called %d times; want 3", calls)
	}
	calls = 0
	if Poll(0, func() bool { calls++; return false }) || calls != 1 {
		t.Errorf("Poll(0): got true or %d calls; want false after 1 call", calls)
	}
}

// TestPollEvery: a steady pace of 20 ms checks a condition about five
// times in 90 ms, where Poll's quick first checks would make it more.
func TestPollEvery(t *testing.T) {
	calls := 0
	if PollEvery(90*time.Millisecond, 20*time.Millisecond, func() bool { calls++; return false }) {
		t.Fatal("PollEvery: got true for a condition that never holds")
	}
	if calls < 3 || calls > 6 {
		t.Errorf("PollEvery(90ms, 20ms): %d checks; want about 5", calls)
	}
}

func TestGolden(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "view.golden")
	for _, tt := range []struct {
		name    string
		update  string
		file    string // written before the call; "" for none
		got     string
		want    []string // substrings of the failure; nil for none
		written string   // the file after the call
	}{
		{"missing", "", "", "a\n", []string{path, "UPDATE_GOLDEN=1"}, ""},
		{"equal", "", "a\nb\n", "a\nb\n", nil, "a\nb\n"},
		{"differs", "", "a\nb\n", "a\nc\n", []string{path, "(-want +got)", "UPDATE_GOLDEN=1"}, "a\nb\n"},
		{"a trailing newline differs", "", "a\n", "a", []string{path}, "a\n"},
		{"update writes", "1", "a\n", "new\n", nil, "new\n"},
		{"update creates", "1", "", "new\n", nil, "new\n"},
		{"another value does not update", "true", "a\n", "new\n", []string{path}, "a\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.RemoveAll(filepath.Dir(path))
			if tt.file != "" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("UPDATE_GOLDEN", tt.update)
			r := run(t, func(tb testing.TB) { Golden(tb, path, []byte(tt.got)) })
			got := strings.Join(r.errors, "; ")
			if (tt.want == nil) != (got == "") {
				t.Errorf("failure: got %q; want one holding %q", got, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("failure: got %q; want it to hold %q", got, w)
				}
			}
			b, _ := os.ReadFile(path)
			if string(b) != tt.written {
				t.Errorf("file after: got %q; want %q", b, tt.written)
			}
		})
	}
}
