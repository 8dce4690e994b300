package driverhost

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Config says where drivers are found and how they are supervised. The zero
// value searches nowhere; DefaultConfig fills in the usual places.
type Config struct {
	// ExeDir is the folder of the running pinky binary. Empty skips it.
	ExeDir string
	// Home is the data folder ($PINKY_HOME); drivers are looked for in
	// Home/drivers. Empty skips it.
	Home string
	// Path is a PATH-style list of folders to search. Empty skips it.
	Path string
	// Pins maps a driver name to the executable to use for it, bypassing the search.
	Pins map[string]string
	// Disabled names drivers that are not started even when found or pinned.
	Disabled map[string]bool
	// Env maps a driver name to extra KEY=VALUE entries for its environment.
	Env map[string][]string
	// Args maps a driver name to extra command-line arguments.
	Args map[string][]string

	// StartTimeout bounds one driver's handshake, Info call and first device
	// listing. Zero means 10 s.
	StartTimeout time.Duration
	// Backoff paces restarts. Zero fields take the defaults of DefaultBackoff.
	Backoff Backoff
	// Deadlines bound the calls through a driver's handle and say when a
	// driver that misses them is restarted. Zero fields take the defaults
	// of DefaultDeadlines.
	Deadlines Deadlines
	// SocketDir is the folder under which each driver start gets a folder
	// of its own (mode 0700) for its Unix socket, given to the driver as
	// PLUGIN_UNIX_SOCKET_DIR and removed when the process ends. Empty means
	// $XDG_RUNTIME_DIR/pinky-sock, or pinky-sock-<uid> in the temporary
	// folder. It is kept short: a socket's path is limited to about 104 bytes.
	SocketDir string
	// Logger receives the host's logs and each driver's stderr, line by
	// line, with the attribute driver=<name>. Nil means slog.Default().
	Logger *slog.Logger

	// envErr is a bad PINKY_DRIVER_DEADLINES that DefaultConfig ignored;
	// New logs it.
	envErr error
}

// Backoff paces the restarts of a driver that exits or fails to start.
type Backoff struct {
	// Initial is the wait before the first restart; each failure doubles it.
	Initial time.Duration
	// Max caps the wait.
	Max time.Duration
	// Stable is how long a driver must run for its backoff and failure
	// count to reset; it is also the window in which failures are counted.
	Stable time.Duration
	// MaxFailures failures (exits or failed starts) within Stable mark the driver failed.
	MaxFailures int
	// FailedRetry is the wait between attempts to start a failed driver.
	FailedRetry time.Duration
}

// DefaultBackoff is used for the zero fields of Config.Backoff.
var DefaultBackoff = Backoff{
	Initial:     100 * time.Millisecond,
	Max:         30 * time.Second,
	Stable:      60 * time.Second,
	MaxFailures: 5,
	FailedRetry: 60 * time.Second,
}

const defaultStartTimeout = 10 * time.Second

// DefaultConfig searches the folder of the running executable, home/drivers
// and $PATH. home is the data folder; empty means $PINKY_HOME when set.
// $PINKY_DISABLE_DRIVERS, a comma-separated list of names, keeps those
// drivers from starting (the demo runs without the Android driver, which
// would start an adb server). $PINKY_DRIVER_DEADLINES changes the call
// deadlines (ParseDeadlines), e.g. "read=60s,act=60s" for slow phones.
func DefaultConfig(home string) Config {
	cfg := Config{Home: home, Path: os.Getenv("PATH")}
	if v := os.Getenv(DeadlinesEnv); v != "" {
		d, err := ParseDeadlines(Deadlines{}, v)
		if err != nil {
			cfg.envErr = fmt.Errorf("%s: %w; using the default deadlines", DeadlinesEnv, err)
		} else {
			cfg.Deadlines = d
		}
	}
	for _, name := range strings.Split(os.Getenv("PINKY_DISABLE_DRIVERS"), ",") {
		if name = strings.TrimSpace(name); name != "" {
			if cfg.Disabled == nil {
				cfg.Disabled = map[string]bool{}
			}
			cfg.Disabled[name] = true
		}
	}
	if cfg.Home == "" {
		cfg.Home = os.Getenv("PINKY_HOME")
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		cfg.ExeDir = filepath.Dir(exe)
	}
	return cfg
}

func (c Config) withDefaults() Config {
	if c.StartTimeout <= 0 {
		c.StartTimeout = defaultStartTimeout
	}
	b, d := &c.Backoff, DefaultBackoff
	if b.Initial <= 0 {
		b.Initial = d.Initial
	}
	if b.Max <= 0 {
		b.Max = d.Max
	}
	if b.Stable <= 0 {
		b.Stable = d.Stable
	}
	if b.MaxFailures <= 0 {
		b.MaxFailures = d.MaxFailures
	}
	if b.FailedRetry <= 0 {
		b.FailedRetry = d.FailedRetry
	}
	c.Deadlines = c.Deadlines.withDefaults()
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
