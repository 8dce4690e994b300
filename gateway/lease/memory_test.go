package lease_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/lease"
	"github.com/pinky-gateway/pinky/gateway/lease/leasetest"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestMemory(t *testing.T) {
	leasetest.Run(t, func(t *testing.T, cfg lease.Config) lease.Table {
		cfg.Logger = testkit.Logger(t)
		return lease.NewMemory(cfg)
	})
}

// TestMemoryLogsResume: the daemon's log says when a lease moves to a new
// session of its agent, and from which.
func TestMemoryLogsResume(t *testing.T) {
	var log testkit.Buffer
	m := lease.NewMemory(lease.Config{Logger: log.Logger()})
	a := lease.Holder{Session: "s_old", Agent: "remote", Version: "1", ResumeKey: "k"}
	b := lease.Holder{Session: "s_new", Agent: "remote", Version: "1", ResumeKey: "k"}
	if _, err := m.Take(lease.Lease{Device: "p1", Holder: a, TaskID: "t_1", Task: "t", Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Use(b, "p1"); err != nil {
		t.Fatal(err)
	}
	got := log.String()
	for _, want := range []string{"lease resumed by a new session of its agent", "device=p1", "task=t_1", "agent=remote", "from=s_old", "session=s_new"} {
		if !strings.Contains(got, want) {
			t.Errorf("log %q; want it to contain %q", got, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	c := lease.Config{}.WithDefaults()
	if c.IdleTimeout != 10*time.Minute || c.OfflineGrace != 60*time.Second || c.Now == nil || c.Logger == nil {
		t.Errorf("defaults: got %+v; want 10 min idle, 60 s grace, a clock and a logger", c)
	}
	c = lease.Config{IdleTimeout: time.Second, OfflineGrace: 2 * time.Second}.WithDefaults()
	if c.IdleTimeout != time.Second || c.OfflineGrace != 2*time.Second {
		t.Errorf("set durations: got %+v; want them kept", c)
	}
}
