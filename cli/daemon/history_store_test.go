package daemon

import (
	"context"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// TestMain stops the PostgreSQL test server after the tests.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m).Run()) }

// TestHistoryRefused checks that a --history that is not a PostgreSQL URL
// stops the daemon before it starts, with an error that says what it wants
// and keeps the password out.
func TestHistoryRefused(t *testing.T) {
	for _, v := range []string{"mysql://pinky:s3cret@db/history", "/var/lib/pinky/history.db", "host=db password=s3cret"} {
		_, err := New(Config{Dirs: home.Dirs{Home: t.TempDir()}, History: v})
		if err == nil || !strings.Contains(err.Error(), "postgres://") || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("New with --history %q: got %v; want a refusal that names postgres:// and not the password", v, err)
		}
	}
}

// TestOpenHistory checks which store a Config opens, and the name status
// shows for it: the SQLite file by default, the PostgreSQL database at a
// postgres:// or postgresql:// URL, named without its password.
func TestOpenHistory(t *testing.T) {
	ctx := context.Background()
	dirs := home.Dirs{Home: t.TempDir()}
	s, name, err := openHistory(Config{Dirs: dirs}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*history.SQLite); !ok || name != dirs.Database() {
		t.Errorf("default: got %T named %q; want *history.SQLite named %q", s, name, dirs.Database())
	}
	s.Close()

	u, err := url.Parse(pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret") // the test server trusts any password
	for _, scheme := range []string{"postgres", "postgresql"} {
		u.Scheme = scheme
		s, name, err := openHistory(Config{Dirs: dirs, History: u.String()}, "gw-test")
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		if _, ok := s.(*history.Postgres); !ok || strings.Contains(name, "s3cret") || !strings.HasPrefix(name, scheme+"://") {
			t.Errorf("%s: got %T named %q; want *history.Postgres named by its URL without the password", scheme, s, name)
		}
		if err := s.UpsertDevice(ctx, history.Device{ID: "d1", LastSeen: time.Now()}); err != nil {
			t.Errorf("%s: write: %v", scheme, err)
		}
		s.Close()
	}
}

// TestDaemonHistoryPostgres runs a daemon with its history in PostgreSQL:
// the schema is made there and not in the data folder, status names the
// database without its password, and no log line holds the password.
func TestDaemonHistoryPostgres(t *testing.T) {
	u, err := url.Parse(pgtest.New(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "s3cret") // the test server trusts any password
	// A short folder: a socket's path is limited.
	run, err := os.MkdirTemp("", "pk")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(run)
	dirs := home.Dirs{Home: t.TempDir(), Runtime: run}
	var logs testkit.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(logs.Logger()) // the store logs its migrations there
	g, err := New(Config{Dirs: dirs, Logger: logs.Logger(), ConsoleAddr: "off", History: u.String()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	var st api.Status
	testkit.WaitUntil(t, "the daemon answers", func() bool {
		c, err := api.Dial(ctx, dirs.Socket())
		if err != nil {
			return false
		}
		defer c.Close()
		return c.Call(ctx, api.MethodStatus, nil, &st) == nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}

	want := history.RedactURL(u.String())
	if st.History.Path != want || !st.History.Writable {
		t.Errorf("status history: got %+v; want %q, writable", st.History, want)
	}
	if strings.Contains(logs.String(), "s3cret") || !strings.Contains(logs.String(), "schema migrated") {
		t.Errorf("logs: want the migration logged, and no password in\n%s", logs.String())
	}
	if _, err := os.Stat(dirs.Database()); !os.IsNotExist(err) {
		t.Errorf("%s: got %v; want no SQLite file", dirs.Database(), err)
	}
	s, err := history.OpenPostgres(context.Background(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Tasks(context.Background(), history.TaskFilter{}); err != nil {
		t.Errorf("the daemon's database: %v", err)
	}
}
