package driverhost

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
)

// tailLines is how many stderr lines a driver's status keeps.
const tailLines = 20

// maxLine cuts a line that never ends, so a driver cannot grow the buffer.
const maxLine = 64 << 10

// maxChecks bounds the check lines kept beside the tail (SPEC.md §1.9: a
// line with a "check" attribute says how one of the driver's checks stands).
const maxChecks = 32

// stderrLog receives a driver's stderr (go-plugin writes it in pieces, from
// two goroutines: the pipe before the handshake and the stdio stream after),
// logs it line by line and keeps the last lines. It outlives the processes
// of one driver, so a failed driver still shows why. It also keeps each
// check's newest line (at most maxChecks checks): a driver logs a check when
// it changes, and a problem it found must not scroll out of sight behind
// ordinary lines.
type stderrLog struct {
	log *slog.Logger

	mu     sync.Mutex
	buf    []byte
	ring   [tailLines]string
	n      int // lines ever kept
	checks []checkLine
}

// checkLine is a check's newest line and its number among the lines kept.
type checkLine struct {
	name, line string
	at         int
}

func (s *stderrLog) Write(p []byte) (int, error) {
	var lines []string
	s.mu.Lock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			if len(s.buf) >= maxLine {
				i = len(s.buf)
			} else {
				break
			}
		}
		line := strings.TrimRight(string(s.buf[:i]), "\r")
		s.buf = s.buf[min(i+1, len(s.buf)):]
		if line == "" {
			continue
		}
		s.ring[s.n%tailLines] = line
		s.keepCheck(line)
		s.n++
		lines = append(lines, line)
	}
	if len(s.buf) == 0 {
		s.buf = nil // drop the backing array of a long line
	}
	s.mu.Unlock()
	// Logged outside the lock: a slow log handler must not stall Drivers().
	for _, l := range lines {
		logLine(s.log, l)
	}
	return len(p), nil
}

// tail returns the kept lines, oldest first.
func (s *stderrLog) tail() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := min(s.n, tailLines)
	out := make([]string, 0, k+len(s.checks))
	for _, c := range s.checks { // the checks whose newest line left the ring
		if c.at < s.n-k {
			out = append(out, c.line)
		}
	}
	for i := s.n - k; i < s.n; i++ {
		out = append(out, s.ring[i%tailLines])
	}
	return out
}

// keepCheck remembers line as its check's newest, when it is a check line.
func (s *stderrLog) keepCheck(line string) {
	if !strings.HasPrefix(line, "{") || !strings.Contains(line, `"check"`) {
		return
	}
	var m struct {
		Check string `json:"check"`
	}
	if json.Unmarshal([]byte(line), &m) != nil || m.Check == "" {
		return
	}
	for i := range s.checks {
		if s.checks[i].name == m.Check {
			s.checks[i].line, s.checks[i].at = line, s.n
			return
		}
	}
	if len(s.checks) < maxChecks {
		s.checks = append(s.checks, checkLine{name: m.Check, line: line, at: s.n})
	}
}

// logLine logs one stderr line. JSON lines keep their level, message and
// fields: slog's JSON ("level", "msg", as sdk.Logger writes) and hclog's
// ("@level", "@message", as go-plugin writes); their time is dropped, the
// host stamps its own. Other lines are logged at Info, or at Error when they
// start a panic.
func logLine(log *slog.Logger, line string) {
	level := slog.LevelInfo
	msg := line
	var attrs []any
	if strings.HasPrefix(line, "{") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			for _, keys := range [][3]string{{"@message", "@level", "@timestamp"}, {"msg", "level", "time"}} {
				s, ok := m[keys[0]].(string)
				if !ok {
					continue
				}
				msg, level = s, hclogLevel(m[keys[1]])
				for k, v := range m {
					if k != keys[0] && k != keys[1] && k != keys[2] && !strings.HasPrefix(k, "@") {
						attrs = append(attrs, k, v)
					}
				}
				break
			}
		}
	} else {
		for _, p := range []struct {
			prefix string
			level  slog.Level
		}{
			{"panic:", slog.LevelError}, {"fatal error:", slog.LevelError},
			{"[ERROR]", slog.LevelError}, {"[WARN]", slog.LevelWarn},
			{"[DEBUG]", slog.LevelDebug}, {"[TRACE]", slog.LevelDebug},
		} {
			if strings.HasPrefix(line, p.prefix) {
				level = p.level
				break
			}
		}
	}
	log.Log(context.Background(), level, msg, attrs...)
}

func hclogLevel(v any) slog.Level {
	s, _ := v.(string)
	switch strings.ToLower(s) {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}
