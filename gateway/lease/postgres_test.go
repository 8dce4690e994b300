package lease_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/lease"
	"github.com/pinky-gateway/pinky/gateway/lease/leasetest"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

func TestPostgres(t *testing.T) {
	leasetest.Run(t, func(t *testing.T, cfg lease.Config) lease.Table {
		cfg.Logger = testkit.Logger(t)
		return openPostgres(t, pgtest.New(t), cfg)
	})
}

// openPostgres opens the table at dbURL and disconnects it when the test
// ends.
func openPostgres(t *testing.T, dbURL string, cfg lease.Config) *lease.Postgres {
	t.Helper()
	p, err := lease.OpenPostgres(context.Background(), dbURL, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Disconnect)
	return p
}

// clock is a test's time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// gateways opens n tables on one new database, as n gateways sharing it,
// all on clock c.
func gateways(t *testing.T, n int, c *clock) []*lease.Postgres {
	t.Helper()
	dbURL := pgtest.New(t)
	out := make([]*lease.Postgres, n)
	for i := range out {
		out[i] = openPostgres(t, dbURL, lease.Config{IdleTimeout: time.Hour, OfflineGrace: time.Minute, Now: c.Now, Logger: testkit.Logger(t)})
	}
	return out
}

// TestPostgresRace: two gateways on one database, and many agents on each
// racing for one phone at once: each round exactly one wins, and each
// round's fence is above the last.
func TestPostgresRace(t *testing.T) {
	c := newClock()
	gws := gateways(t, 2, c)
	const rounds, perGateway = 5, 8
	var last int64
	for round := range rounds {
		type win struct {
			gw int
			l  lease.Lease
		}
		var wg sync.WaitGroup
		wins := make(chan win, 2*perGateway)
		for g, gw := range gws {
			for i := range perGateway {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := lease.Holder{Session: fmt.Sprintf("r%d-g%d-s%d", round, g, i), Agent: "a"}
					l, err := gw.Take(lease.Lease{Device: "p1", Holder: h, TaskID: h.Session, Task: "race", Since: c.Now()})
					switch {
					case err == nil:
						wins <- win{g, l}
					case !errors.Is(err, lease.ErrHeld):
						t.Errorf("Take: %v; want ok or ErrHeld", err)
					}
				}()
			}
		}
		wg.Wait()
		close(wins)
		var got []win
		for w := range wins {
			got = append(got, w)
		}
		if len(got) != 1 {
			t.Fatalf("round %d: %d winners (%+v); want 1", round, len(got), got)
		}
		w := got[0]
		for g, gw := range gws {
			if l, ok := gw.Get("p1"); !ok || l.Holder != w.l.Holder {
				t.Errorf("round %d: gateway %d sees %+v, %v; want the winner %s", round, g, l, ok, w.l.Holder.Session)
			}
		}
		if w.l.Fence <= last {
			t.Errorf("round %d: fence %d; want one above %d", round, w.l.Fence, last)
		}
		last = w.l.Fence
		// The other gateway ends it: the table is one.
		if _, err := gws[1-w.gw].Release(w.l.Holder, "p1"); err != nil {
			t.Fatalf("round %d: release through the other gateway: %v", round, err)
		}
	}
}

// TestPostgresGatewayStopped: one gateway takes phones and is never
// heard of again; the other's Sweep ends each lease when it is due (its
// phone offline past the grace, parked past its grace, idle for the
// timeout), not before, and the phones are then leased again with higher
// fences.
func TestPostgresGatewayStopped(t *testing.T) {
	c := newClock()
	gws := gateways(t, 2, c)
	a, b := gws[0], gws[1]
	start := c.Now()
	a1 := lease.Holder{Session: "a1", Agent: "a"}
	a2 := lease.Holder{Session: "a2", Agent: "a", ResumeKey: "k"}
	fences := map[string]int64{}
	for device, h := range map[string]lease.Holder{"idle": a1, "offline": a1, "parked": a2} {
		l, err := a.Take(lease.Lease{Device: device, Holder: h, TaskID: "t-" + device, Task: "task", Since: start})
		if err != nil {
			t.Fatal(err)
		}
		fences[device] = l.Fence
	}
	if n := a.Park(a2, 2*time.Minute); n != 1 {
		t.Fatalf("Park: got %d; want 1", n)
	}
	a.SetOnline("offline", false, start)
	a.Disconnect() // gateway a stops, holding its leases

	bee := lease.Holder{Session: "b1", Agent: "b"}
	if _, err := b.Take(lease.Lease{Device: "idle", Holder: bee, TaskID: "b", Task: "task", Since: start}); !errors.Is(err, lease.ErrHeld) {
		t.Fatalf("b takes a phone a holds: %v; want ErrHeld", err)
	}
	tests := []struct {
		after time.Duration // since a took the phones
		want  map[string]lease.Outcome
	}{
		{time.Minute - time.Second, map[string]lease.Outcome{}},
		{time.Minute, map[string]lease.Outcome{"offline": lease.Offline}},
		{2*time.Minute - time.Second, map[string]lease.Outcome{}},
		{2 * time.Minute, map[string]lease.Outcome{"parked": lease.SessionClosed}},
		{time.Hour - time.Second, map[string]lease.Outcome{}},
		{time.Hour, map[string]lease.Outcome{"idle": lease.Expired}},
	}
	for _, tt := range tests {
		got := map[string]lease.Outcome{}
		for _, e := range b.Sweep(start.Add(tt.after)) {
			got[e.Device] = e.Outcome
			if e.TaskID != "t-"+e.Device {
				t.Errorf("ended %+v; want a's lease", e.Lease)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("b's sweep at +%s (-want +got):\n%s", tt.after, diff)
		}
	}
	b.SetOnline("offline", true, time.Time{})
	for device, before := range fences {
		l, err := b.Take(lease.Lease{Device: device, Holder: bee, TaskID: "b-" + device, Task: "task", Since: start.Add(time.Hour)})
		if err != nil {
			t.Fatalf("b takes %s: %v", device, err)
		}
		if l.Fence <= before {
			t.Errorf("b's fence on %s: %d; want one above a's %d", device, l.Fence, before)
		}
	}
}

// TestPostgresSharedState: what one gateway records, the other sees: a
// phone offline, a stop by the person, a use.
func TestPostgresSharedState(t *testing.T) {
	c := newClock()
	gws := gateways(t, 2, c)
	a, b := gws[0], gws[1]
	h := lease.Holder{Session: "s1", Agent: "a"}
	if _, err := a.Take(lease.Lease{Device: "p1", Holder: h, TaskID: "t1", Task: "task", Since: c.Now()}); err != nil {
		t.Fatal(err)
	}
	b.SetOnline("p1", false, c.Now())
	if _, err := a.Use(h, "p1"); !errors.Is(err, lease.ErrOffline) {
		t.Errorf("use through a of a phone b saw go offline: %v; want ErrOffline", err)
	}
	b.SetOnline("p1", true, time.Time{})
	if _, err := a.Use(h, "p1"); err != nil {
		t.Errorf("use once b saw it online: %v", err)
	}
	if _, err := b.Stop("p1"); err != nil {
		t.Fatal(err)
	}
	_, err := a.Take(lease.Lease{Device: "p1", Holder: h, TaskID: "t2", Task: "task", Since: c.Now()})
	if !errors.Is(err, lease.ErrStopped) {
		t.Errorf("take through a after b's stop: %v; want ErrStopped", err)
	}
}

// TestPostgresFencesOutliveRestarts: a phone's fences keep growing when
// every gateway closes and opens the table again.
func TestPostgresFencesOutliveRestarts(t *testing.T) {
	dbURL := pgtest.New(t)
	h := lease.Holder{Session: "s1", Agent: "a"}
	var last int64
	for i := range 3 {
		p, err := lease.OpenPostgres(context.Background(), dbURL, lease.Config{Logger: testkit.Logger(t)})
		if err != nil {
			t.Fatal(err)
		}
		l, err := p.Take(lease.Lease{Device: "p1", Holder: h, TaskID: fmt.Sprint(i), Task: fmt.Sprint(i), Since: time.Now()})
		if err == nil {
			_, err = p.Release(h, "p1")
		}
		p.Disconnect()
		if err != nil {
			t.Fatal(err)
		}
		if l.Fence <= last {
			t.Errorf("open %d: fence %d; want one above %d", i, l.Fence, last)
		}
		last = l.Fence
	}
	if !lease.Shared(openPostgres(t, dbURL, lease.Config{})) || lease.Shared(lease.NewMemory(lease.Config{})) {
		t.Error("Shared: want true for Postgres only")
	}
}

func TestOpenPostgresRefuses(t *testing.T) {
	tests := []struct{ name, url, want string }{
		{"not postgres", "sqlite:///tmp/x", "not a postgres://"},
		{"no server", "postgres://u:secret@127.0.0.1:1/db?connect_timeout=1", "127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := lease.OpenPostgres(context.Background(), tt.url, lease.Config{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "secret") {
				t.Errorf("got %v; want an error naming %q without the password", err, tt.want)
			}
		})
	}
}

// TestPostgresBesideHistory: the lease tables live in the history's
// database, each schema with its own versions, and a lease schema newer
// than the binary is refused.
func TestPostgresBesideHistory(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.New(t)
	hs, err := history.OpenPostgres(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	p := openPostgres(t, dbURL, lease.Config{Logger: testkit.Logger(t)})
	if _, err := p.Take(lease.Lease{Device: "p1", Holder: lease.Holder{Session: "s1"}, TaskID: "t1", Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	again, err := history.OpenPostgres(ctx, dbURL) // the lease schema changes nothing of the history's
	if err != nil {
		t.Fatalf("the history opened again beside the leases: %v", err)
	}
	again.Close()

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO pinky_lease_migrations (version, name) VALUES (99, 'from_the_future.sql')`); err != nil {
		t.Fatal(err)
	}
	if _, err := lease.OpenPostgres(ctx, dbURL, lease.Config{}); !errors.Is(err, history.ErrSchemaTooNew) {
		t.Errorf("a lease schema from the future: got %v; want ErrSchemaTooNew", err)
	}
}

// TestPostgresEndGateway: a gateway that starts again ends the leases its
// last run held, and leaves another live gateway's.
func TestPostgresEndGateway(t *testing.T) {
	dbURL := pgtest.New(t)
	open := func(gw string) *lease.Postgres {
		return openPostgres(t, dbURL, lease.Config{Gateway: gw, Logger: testkit.Logger(t)})
	}
	a, b := open("gw-a"), open("gw-b")
	take := func(p *lease.Postgres, device string) lease.Lease {
		t.Helper()
		l, err := p.Take(lease.Lease{Device: device, Holder: lease.Holder{Session: "s-" + device}, TaskID: "t-" + device, Task: "task", Since: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	take(a, "a1")
	take(a, "a2")
	take(b, "b1")
	again := open("gw-a") // gw-a's daemon, started again
	ended, err := again.EndGateway()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range ended {
		got = append(got, l.Device)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a1", "a2"}) {
		t.Fatalf("EndGateway ended %v; want gw-a's a1 and a2", got)
	}
	if _, ok := b.Get("b1"); !ok {
		t.Fatal("gw-b's lease ended when gw-a started again")
	}
	if _, ok := b.Get("a1"); ok {
		t.Fatal("gw-a's lease outlived its restart")
	}
	// The phone is free again, with a higher fence than before.
	if l := take(b, "a1"); l.Fence < 2 {
		t.Fatalf("a1 taken after gw-a's restart: fence %d; want above the first", l.Fence)
	}
	if ended, err := open("").EndGateway(); err != nil || len(ended) != 0 {
		t.Fatalf("a table of no gateway ended %v, %v; want nothing", ended, err)
	}
}
