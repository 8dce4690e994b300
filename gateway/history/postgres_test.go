package history_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/history/historytest"
	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

func TestPostgres(t *testing.T) {
	historytest.Run(t, func(t *testing.T) history.Store {
		return openPostgres(t, pgtest.New(t))
	})
}

// openPostgres opens the store at dbURL; the caller closes it.
func openPostgres(t testing.TB, dbURL string) *history.Postgres {
	t.Helper()
	s, err := history.OpenPostgres(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pgExec runs statements on the database at dbURL, from outside the store.
func pgExec(t testing.TB, dbURL, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

var roles atomic.Int64

// TestPostgresFaults runs the suite of a store that cannot be written on a
// real server: the store connects as a role of its own, which owns the
// database, and the server's superuser revokes that role's right to write
// Pinky's tables, so that every write fails with insufficient_privilege as
// it does when a database administrator locks the history, until the
// grant is back.
func TestPostgresFaults(t *testing.T) {
	historytest.RunFaults(t, func(t *testing.T) historytest.Faulty {
		admin := pgtest.New(t)
		u, err := url.Parse(admin)
		if err != nil {
			t.Fatal(err)
		}
		db := strings.TrimPrefix(u.Path, "/")
		role := fmt.Sprintf("pinky_writer_%d", roles.Add(1))
		// Roles belong to the server, which goes away with the tests.
		pgExec(t, admin, fmt.Sprintf(`CREATE ROLE %s LOGIN; ALTER DATABASE %s OWNER TO %s`, role, db, role))
		u.User = url.User(role)
		s := openPostgres(t, u.String())
		return historytest.Faulty{Store: s, Break: func(t *testing.T) func() {
			pgExec(t, admin, `REVOKE INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public FROM `+role)
			return func() {
				pgExec(t, admin, `GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO `+role)
			}
		}}
	})
}

// TestPostgresMigrates checks the schema's versions: a new database gets
// every migration, numbered and named as SQLite's; reopening applies
// nothing and keeps the data; a database written by a newer Pinky is
// refused.
func TestPostgresMigrates(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.New(t)
	s := openPostgres(t, dbURL)
	if err := s.UpsertDevice(ctx, history.Device{ID: "d1", Name: "kept", LastSeen: time.UnixMilli(1)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	for i := range 2 {
		s := openPostgres(t, dbURL)
		d, err := s.Device(ctx, "d1")
		if err != nil || d.Name != "kept" {
			t.Errorf("reopen %d: got %+v, %v; want the device kept", i, d, err)
		}
		s.Close()
	}

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT version, name FROM pinky_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%d %s", v, name))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	files, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		want = append(want, fmt.Sprintf("%d %s", i+1, f.Name()))
	}
	if len(want) != history.SchemaVersion() {
		t.Fatalf("SQLite has %d migrations; SchemaVersion is %d", len(want), history.SchemaVersion())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PostgreSQL's migrations, as SQLite's (-want +got):\n%s", diff)
	}

	if _, err := conn.Exec(ctx, `INSERT INTO pinky_migrations (version, name) VALUES ($1, 'from_the_future.sql')`,
		history.SchemaVersion()+1); err != nil {
		t.Fatal(err)
	}
	if s, err := history.OpenPostgres(ctx, dbURL); !errors.Is(err, history.ErrSchemaTooNew) {
		if err == nil {
			s.Close()
		}
		t.Errorf("OpenPostgres of a newer schema: got %v; want ErrSchemaTooNew", err)
	}
}

// TestPostgresCommitsDurably checks that the store's commits wait for the
// server's disk even on a server (here, a database) whose default does not.
func TestPostgresCommitsDurably(t *testing.T) {
	dbURL := pgtest.New(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	db := strings.TrimPrefix(u.Path, "/")
	pgExec(t, dbURL, `ALTER DATABASE `+db+` SET synchronous_commit = off`)
	s := openPostgres(t, dbURL)
	defer s.Close()
	if got, err := history.PostgresSetting(s, "synchronous_commit"); got != "on" || err != nil {
		t.Errorf("synchronous_commit: got %q, %v; want on", got, err)
	}
}

// TestPostgresConcurrentOpen opens one new database from several stores at
// once: each migration is applied once, and every store works.
func TestPostgresConcurrentOpen(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.New(t)
	const n = 4
	errs := make(chan error, n)
	stores := make(chan *history.Postgres, n)
	for range n {
		go func() {
			s, err := history.OpenPostgres(ctx, dbURL)
			errs <- err
			stores <- s
		}()
	}
	for i := range n {
		if err := <-errs; err != nil {
			t.Errorf("open %d: %v", i, err)
		}
		if s := <-stores; s != nil {
			if err := s.UpsertAgent(ctx, history.Agent{ID: fmt.Sprint("a", i)}); err != nil {
				t.Errorf("store %d: %v", i, err)
			}
			s.Close()
		}
	}
}

// TestOpenPostgresHidesPassword checks that a URL's password is in no
// error, whether the URL is refused or its server is not there.
func TestOpenPostgresHidesPassword(t *testing.T) {
	for _, tt := range []struct{ name, url string }{
		{"unreachable", "postgres://pinky:s3cret@127.0.0.1:1/history?connect_timeout=5"},
		{"password parameter", "postgresql://pinky@127.0.0.1:1/history?password=s3cret&connect_timeout=5"},
		{"not a URL pgx reads", "postgres://pinky:s3cret@127.0.0.1:1/history?sslmode=nonsense"},
		{"not postgres", "mysql://pinky:s3cret@127.0.0.1/history"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := history.OpenPostgres(context.Background(), tt.url)
			if err == nil {
				s.Close()
				t.Fatal("OpenPostgres: got a store; want an error")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("got %q; want an error without the password", err)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"postgres://u:pw@db:5432/h", "postgres://u:xxxxx@db:5432/h"},
		{"postgres://u@db/h?sslmode=disable", "postgres://u@db/h?sslmode=disable"},
		{"postgresql://u@db/h?password=pw", "postgresql://u@db/h?password=xxxxx"},
		{"postgres://u:pw@db/h\x7f", "(not a URL)"},
		{"host=db password=pw", "(not a URL)"},
	} {
		if got := history.RedactURL(tt.in); got != tt.want {
			t.Errorf("RedactURL(%q): got %q; want %q", tt.in, got, tt.want)
		}
	}
}

// TestPostgresGatewaysEndTheirOwn: two gateways on one database. A
// gateway that starts again ends its own last run's open tasks, sessions
// and running steps, and those from before gateways had ids, never the
// other live gateway's.
func TestPostgresGatewaysEndTheirOwn(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.New(t)
	open := func(gw string) *history.Postgres {
		s, err := history.OpenPostgres(ctx, dbURL, history.OwnedBy(gw))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open("gw-a"), open("gw-b")
	old := openPostgres(t, dbURL) // a store of no gateway: rows as before ids
	defer old.Close()
	now := time.UnixMilli(time.Now().UnixMilli())
	for _, w := range []struct {
		s  *history.Postgres
		id string
	}{{a, "a"}, {b, "b"}, {old, "old"}} {
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(w.s.StartSession(ctx, history.Session{ID: "s-" + w.id, Transport: "stdio", StartedAt: now}))
		must(w.s.StartTask(ctx, history.Task{ID: "t-" + w.id, SessionID: "s-" + w.id, Text: "task of " + w.id, StartedAt: now}))
		must(w.s.AddStep(ctx, history.Step{ID: "p-" + w.id, TaskID: "t-" + w.id, Seq: 1, Tool: "phone_tap", Outcome: history.StepRunning, StartedAt: now}))
	}
	if n, err := b.SettleSteps(ctx, "uncertain", "the daemon stopped"); n != 2 || err != nil {
		t.Errorf("b settles: %d, %v; want its own step and the one from before ids", n, err)
	}
	if n, err := b.CloseOpen(ctx, now.Add(time.Second), "daemon_restarted"); n != 2 || err != nil {
		t.Errorf("b closes: %d, %v; want its own task and the one from before ids", n, err)
	}
	sum, steps, err := a.Task(ctx, "t-a")
	if err != nil || !sum.EndedAt.IsZero() || len(steps) != 1 || steps[0].Outcome != history.StepRunning {
		t.Fatalf("a's task after b started again: %+v %+v, %v; want it open, its step running", sum, steps, err)
	}
	if ss, err := a.Session(ctx, "s-a"); err != nil || !ss.EndedAt.IsZero() {
		t.Fatalf("a's session after b started again: %+v, %v; want it open", ss, err)
	}
	for _, id := range []string{"b", "old"} {
		sum, steps, err := a.Task(ctx, "t-"+id)
		if err != nil || sum.EndedAt.IsZero() || len(steps) != 1 || steps[0].Outcome != "uncertain" {
			t.Errorf("task %s after b started again: %+v %+v, %v; want it ended, its step uncertain", id, sum, steps, err)
		}
	}
	// a store of no gateway, the only one, ends everything open.
	if n, err := old.CloseOpen(ctx, now.Add(2*time.Second), "daemon_restarted"); n != 1 || err != nil {
		t.Errorf("a store of no gateway closes: %d, %v; want a's task", n, err)
	}
}
