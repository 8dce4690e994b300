package lease

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pinky-gateway/pinky/gateway/history"
)

// The shared table's schema, numbered and versioned as the history's
// (history.MigratePostgres), with its own versions table.
//
//go:embed pgschema/migrations/*.sql
var pgMigrationFiles embed.FS

// pgVersions is the table that records the lease schema's versions.
const pgVersions = "pinky_lease_migrations"

// pgTimeout bounds one method's transaction: the Table's methods take no
// context, and a server that stopped answering must not hold an agent's
// call for ever.
const pgTimeout = 10 * time.Second

// Postgres is the lease table kept in a PostgreSQL database, shared by the
// gateways that use that database: two gateways never lease one phone
// twice, the fences of a phone grow across all of them and across their
// restarts, and any gateway's Sweep ends the leases that another one
// (stopped, paused, cut off) left due. The rules are Memory's, on the
// clock of Config.Now of the gateway that makes the change, so the
// gateways' clocks must agree (NTP).
//
// Every method is one transaction. Each change to a phone's lease first
// locks the phone's row in lease_phones (SELECT … FOR UPDATE; several
// phones in device order, so two transactions never wait on each other in
// a circle), which makes the changes to one phone happen one after the
// other whichever gateway makes them.
//
// A method that returns an error returns the database's failure as a
// plain error (not an *Error); the others log it and do nothing.
type Postgres struct {
	cfg  Config
	pool *pgxpool.Pool
}

// OpenPostgres connects to the PostgreSQL database at the postgres:// or
// postgresql:// URL (the history's, pinky daemon --history: the lease
// tables live beside the history's) and brings the lease schema up to
// date. Its errors never hold the URL's password. Disconnect closes it.
func OpenPostgres(ctx context.Context, url string, cfg Config) (*Postgres, error) {
	name := history.RedactURL(url)
	if !history.IsPostgresURL(url) {
		return nil, fmt.Errorf("leases %s: not a postgres:// or postgresql:// URL", name)
	}
	files, err := fs.Sub(pgMigrationFiles, "pgschema")
	if err != nil {
		return nil, fmt.Errorf("leases: %w", err)
	}
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's parse errors may quote the URL, password and all.
		return nil, fmt.Errorf("leases %s: the URL does not parse", name)
	}
	if _, set := pcfg.ConnConfig.RuntimeParams["application_name"]; !set {
		pcfg.ConnConfig.RuntimeParams["application_name"] = "pinky"
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("leases %s: %w", name, err)
	}
	if _, err := history.MigratePostgres(ctx, pool, files, pgVersions, "lease table"); err != nil {
		pool.Close()
		return nil, fmt.Errorf("leases %s: %w", name, err)
	}
	return &Postgres{cfg: cfg.WithDefaults(), pool: pool}, nil
}

// Disconnect closes the pool's connections; the table is not to be used
// after it. (Close is the Table's: it ends a session's leases.) The leases
// stay in the database: another gateway, or this one started again, finds
// them.
func (p *Postgres) Disconnect() { p.pool.Close() }

// EndGateway ends the leases this gateway (Config.Gateway) holds, and
// returns them. The daemon calls it when it starts, before any agent
// connects: its last run's agents went with that run (as with a table in
// memory, whose leases end with the daemon), while another live gateway's
// leases stay. Without a Gateway it ends nothing.
func (p *Postgres) EndGateway() ([]Lease, error) {
	if p.cfg.Gateway == "" {
		return nil, nil
	}
	var out []Lease
	err := p.do(func(ctx context.Context, tx pgx.Tx) error {
		devices, err := lockDevices(ctx, tx, `SELECT device FROM leases WHERE gateway = $1`, p.cfg.Gateway)
		if err != nil || len(devices) == 0 {
			return err
		}
		rows, err := tx.Query(ctx, `DELETE FROM leases WHERE device = ANY($1) AND gateway = $2 RETURNING `+leaseCols, devices, p.cfg.Gateway)
		if err != nil {
			return err
		}
		out, err = collectLeases(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("ending the leases of this gateway's last run: %w", err)
	}
	return out, nil
}

// Shared reports that the table is shared by several gateways: its fences
// go to the phones' hosts.
func (p *Postgres) Shared() bool { return true }

// Take implements Table.
func (p *Postgres) Take(l Lease) (Lease, error) {
	l = l.clone()
	l.LastUsed, l.ParkKey, l.ParkedUntil = l.Since, "", time.Time{}
	var out Lease
	err := p.do(func(ctx context.Context, tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO lease_phones (device) VALUES ($1) ON CONFLICT DO NOTHING`, l.Device); err != nil {
			return err
		}
		ph, err := lockPhone(ctx, tx, l.Device)
		if err != nil {
			return err
		}
		if ph.stoppedSession == l.Holder.Session && ph.stoppedTask == l.Task && ph.stopped {
			return &Error{Reason: ErrStopped, Device: l.Device, StoppedTask: ph.stoppedTask}
		}
		held, ok, err := getLease(ctx, tx, l.Device)
		if err != nil {
			return err
		}
		if ok {
			yours := held.Holder.Session == l.Holder.Session
			if !yours {
				if yours, err = p.takeOver(ctx, tx, l.Holder, &held); err != nil {
					return err
				}
			}
			if yours {
				return &Error{Reason: ErrYours, Device: l.Device, Lease: held}
			}
			return &Error{Reason: ErrHeld, Device: l.Device, Lease: held}
		}
		if l.Fence, err = nextFence(ctx, tx, l.Device); err != nil {
			return err
		}
		out = l.clone()
		return insertLease(ctx, tx, l, p.cfg.Gateway)
	})
	if err != nil {
		return Lease{}, err
	}
	return out, nil
}

// Use implements Table.
func (p *Postgres) Use(h Holder, device string) (Lease, error) {
	var out Lease
	err := p.do(func(ctx context.Context, tx pgx.Tx) error {
		l, ph, err := p.held(ctx, tx, h, device)
		if err != nil {
			return err
		}
		l.LastUsed = p.cfg.Now()
		if _, err := tx.Exec(ctx, `UPDATE leases SET last_used = $2 WHERE device = $1`, device, nanos(l.LastUsed)); err != nil {
			return err
		}
		if ph.offline != nil {
			since := fromNanos(ph.offline)
			return &Error{Reason: ErrOffline, Device: device, Lease: l, Since: since, Until: since.Add(p.cfg.OfflineGrace)}
		}
		out = l
		return nil
	})
	if err != nil {
		return Lease{}, err
	}
	return out, nil
}

// Touch implements Table.
func (p *Postgres) Touch(taskID string) {
	p.logged("touch", p.do(func(ctx context.Context, tx pgx.Tx) error {
		devices, err := lockDevices(ctx, tx, `SELECT device FROM leases WHERE task_id = $1`, taskID)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE leases SET last_used = $3 WHERE device = ANY($1) AND task_id = $2`,
			devices, taskID, nanos(p.cfg.Now()))
		return err
	}))
}

// Release implements Table.
func (p *Postgres) Release(h Holder, device string) (Lease, error) {
	var out Lease
	err := p.do(func(ctx context.Context, tx pgx.Tx) error {
		l, _, err := p.held(ctx, tx, h, device)
		if err != nil {
			return err
		}
		out = l
		_, err = tx.Exec(ctx, `DELETE FROM leases WHERE device = $1`, device)
		return err
	})
	if err != nil {
		return Lease{}, err
	}
	return out, nil
}

// Stop implements Table.
func (p *Postgres) Stop(device string) (Lease, error) {
	var out Lease
	err := p.do(func(ctx context.Context, tx pgx.Tx) error {
		_, err := lockPhone(ctx, tx, device)
		if errors.Is(err, pgx.ErrNoRows) {
			return &Error{Reason: ErrNotHeld, Device: device}
		}
		if err != nil {
			return err
		}
		l, ok, err := getLease(ctx, tx, device)
		if err != nil {
			return err
		}
		if !ok {
			return &Error{Reason: ErrNotHeld, Device: device}
		}
		out = l
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE device = $1`, device); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE lease_phones SET stopped_session = $2, stopped_task = $3 WHERE device = $1`,
			device, l.Holder.Session, l.Task)
		return err
	})
	if err != nil {
		return Lease{}, err
	}
	return out, nil
}

// Drop implements Table.
func (p *Postgres) Drop(taskID string) bool {
	var n int64
	p.logged("drop", p.do(func(ctx context.Context, tx pgx.Tx) error {
		devices, err := lockDevices(ctx, tx, `SELECT device FROM leases WHERE task_id = $1`, taskID)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM leases WHERE device = ANY($1) AND task_id = $2`, devices, taskID)
		n = tag.RowsAffected()
		return err
	}))
	return n > 0
}

// Close implements Table.
func (p *Postgres) Close(session string) []Lease {
	var out []Lease
	p.logged("close", p.do(func(ctx context.Context, tx pgx.Tx) error {
		const parkedNot = `session = $1 AND parked_until IS NULL`
		devices, err := lockDevices(ctx, tx, `SELECT device FROM leases WHERE `+parkedNot, session)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `DELETE FROM leases WHERE device = ANY($2) AND `+parkedNot+` RETURNING `+leaseCols, session, devices)
		if err != nil {
			return err
		}
		out, err = collectLeases(rows)
		return err
	}))
	return out
}

// Park implements Table.
func (p *Postgres) Park(h Holder, grace time.Duration) int {
	if h.ResumeKey == "" || grace <= 0 {
		return 0
	}
	var n int64
	p.logged("park", p.do(func(ctx context.Context, tx pgx.Tx) error {
		devices, err := lockDevices(ctx, tx, `SELECT device FROM leases WHERE session = $1`, h.Session)
		if err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `UPDATE leases SET park_key = $3, parked_until = $4 WHERE device = ANY($1) AND session = $2`,
			devices, h.Session, h.ResumeKey, nanos(p.cfg.Now().Add(grace)))
		n = tag.RowsAffected()
		return err
	}))
	return int(n)
}

// Resume implements Table.
func (p *Postgres) Resume(h Holder) int {
	n := 0
	p.logged("resume", p.do(func(ctx context.Context, tx pgx.Tx) error {
		devices, err := lockDevices(ctx, tx, `SELECT device FROM leases WHERE parked_until IS NOT NULL AND park_key = $1`, h.ResumeKey)
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT `+leaseCols+` FROM leases WHERE device = ANY($1) ORDER BY device`, devices)
		if err != nil {
			return err
		}
		ls, err := collectLeases(rows)
		if err != nil {
			return err
		}
		for i := range ls {
			if !ls[i].Parked() {
				continue
			}
			ok, err := p.takeOver(ctx, tx, h, &ls[i])
			if err != nil {
				return err
			}
			if ok {
				n++
			}
		}
		return nil
	}))
	return n
}

// Update implements Table.
func (p *Postgres) Update(h Holder) {
	p.logged("update", p.do(func(ctx context.Context, tx pgx.Tx) error {
		devices, err := lockDevices(ctx, tx, `SELECT device FROM leases WHERE session = $1`, h.Session)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE leases SET agent = $3, version = $4, resume_key = $5 WHERE device = ANY($1) AND session = $2`,
			devices, h.Session, h.Agent, h.Version, h.ResumeKey)
		return err
	}))
}

// SetOnline implements Table.
func (p *Postgres) SetOnline(device string, online bool, at time.Time) {
	p.logged("set online", p.do(func(ctx context.Context, tx pgx.Tx) error {
		if online {
			_, err := tx.Exec(ctx, `UPDATE lease_phones SET offline_since = NULL WHERE device = $1`, device)
			return err
		}
		if at.IsZero() {
			at = p.cfg.Now()
		}
		// One statement, which locks the row: the first "since" stays.
		_, err := tx.Exec(ctx, `
			INSERT INTO lease_phones (device, offline_since) VALUES ($1, $2)
			ON CONFLICT (device) DO UPDATE SET offline_since = coalesce(lease_phones.offline_since, excluded.offline_since)`,
			device, nanos(at))
		return err
	}))
}

// Sweep implements Table.
func (p *Postgres) Sweep(now time.Time) []Ended {
	var out []Ended
	p.logged("sweep", p.do(func(ctx context.Context, tx pgx.Tx) error {
		out = nil
		// Find the leases due without locks, lock their phones, then judge
		// them again under the locks: another gateway may have used one
		// meanwhile.
		due, err := p.due(ctx, tx, now, nil, false)
		if err != nil || len(due) == 0 {
			return err
		}
		devices := make([]string, len(due))
		for i, e := range due {
			devices[i] = e.Device
		}
		if err := lockPhones(ctx, tx, devices); err != nil {
			return err
		}
		if due, err = p.due(ctx, tx, now, devices, true); err != nil {
			return err
		}
		ended := make([]string, len(due))
		for i, e := range due {
			ended[i] = e.Device
		}
		if _, err := tx.Exec(ctx, `DELETE FROM leases WHERE device = ANY($1)`, ended); err != nil {
			return err
		}
		out = due
		return nil
	}))
	return out
}

// due returns the leases due at now, among devices when only is set.
func (p *Postgres) due(ctx context.Context, tx pgx.Tx, now time.Time, devices []string, only bool) ([]Ended, error) {
	q := `SELECT ` + leaseColsOf("l") + `, ph.offline_since FROM leases l JOIN lease_phones ph USING (device)`
	var args []any
	if only {
		q += ` WHERE l.device = ANY($1)`
		args = append(args, devices)
	}
	rows, err := tx.Query(ctx, q+` ORDER BY l.device`, args...)
	if err != nil {
		return nil, err
	}
	var out []Ended
	var l Lease
	var offline *int64
	dest, finish := leaseDest(&l)
	_, err = pgx.ForEachRow(rows, append(dest, &offline), func() error {
		finish()
		if outcome, due := p.cfg.Due(l, fromNanos(offline), now); due {
			out = append(out, Ended{Lease: l.clone(), Outcome: outcome})
		}
		return nil
	})
	return out, err
}

// Get implements Table.
func (p *Postgres) Get(device string) (Lease, bool) {
	var l Lease
	var ok bool
	p.logged("get", p.do(func(ctx context.Context, tx pgx.Tx) error {
		var err error
		l, ok, err = getLease(ctx, tx, device)
		return err
	}))
	return l, ok
}

// List implements Table.
func (p *Postgres) List() []Lease {
	out := []Lease{}
	p.logged("list", p.do(func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+leaseCols+` FROM leases`)
		if err != nil {
			return err
		}
		ls, err := collectLeases(rows)
		if ls != nil {
			out = ls
		}
		return err
	}))
	return out
}

// do runs fn in one transaction and commits it, also when fn returns an
// *Error: a refusal may come after a change that stands (a lease taken
// over). Any other error rolls it back.
func (p *Postgres) do(fn func(ctx context.Context, tx pgx.Tx) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), pgTimeout)
	defer cancel()
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("leases: %w", err)
	}
	defer tx.Rollback(context.Background())
	ferr := fn(ctx, tx)
	if _, refused := AsError(ferr); ferr != nil && !refused {
		return fmt.Errorf("leases: %w", ferr)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("leases: commit: %w", err)
	}
	return ferr
}

// logged logs the failure of a method that cannot return one.
func (p *Postgres) logged(what string, err error) {
	if err != nil {
		p.cfg.Logger.Error("lease table: "+what+" failed", "err", err)
	}
}

// held returns h's lease on device, taking it over when h may resume it,
// or why h holds none, with the phone's row, which it locks.
func (p *Postgres) held(ctx context.Context, tx pgx.Tx, h Holder, device string) (Lease, phone, error) {
	ph, err := lockPhone(ctx, tx, device)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, phone{}, &Error{Reason: ErrNotHeld, Device: device}
	}
	if err != nil {
		return Lease{}, phone{}, err
	}
	l, ok, err := getLease(ctx, tx, device)
	if err != nil {
		return Lease{}, phone{}, err
	}
	if ok {
		mine := l.Holder.Session == h.Session
		if !mine {
			if mine, err = p.takeOver(ctx, tx, h, &l); err != nil {
				return Lease{}, phone{}, err
			}
		}
		if mine {
			return l, ph, nil
		}
		return Lease{}, phone{}, &Error{Reason: ErrHeld, Device: device, Lease: l}
	}
	if ph.stopped && ph.stoppedSession == h.Session {
		return Lease{}, phone{}, &Error{Reason: ErrStopped, Device: device, StoppedTask: ph.stoppedTask}
	}
	return Lease{}, phone{}, &Error{Reason: ErrNotHeld, Device: device}
}

// takeOver moves l to h when h may resume it, with a new fence, and
// reports whether l is now h's. The phone's row is locked.
func (p *Postgres) takeOver(ctx context.Context, tx pgx.Tx, h Holder, l *Lease) (bool, error) {
	if !MayResume(h, *l, p.cfg.Now()) {
		return false, nil
	}
	fence, err := nextFence(ctx, tx, l.Device)
	if err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `
		UPDATE leases SET session = $2, agent = $3, version = $4, resume_key = $5,
			park_key = '', parked_until = NULL, fence = $6, gateway = $7
		WHERE device = $1`, l.Device, h.Session, h.Agent, h.Version, h.ResumeKey, fence, p.cfg.Gateway); err != nil {
		return false, err
	}
	p.cfg.Logger.Info("lease resumed by a new session of its agent", "device", l.Device, "task", l.TaskID,
		"agent", h.Agent, "from", l.Holder.Session, "session", h.Session)
	l.Holder, l.ParkKey, l.ParkedUntil, l.Fence = h, "", time.Time{}, fence
	return true, nil
}

// phone is a phone's row in lease_phones.
type phone struct {
	offline                     *int64 // offline since, nil while online
	stopped                     bool   // the person stopped someone there
	stoppedSession, stoppedTask string
}

// lockPhone locks device's row and returns it; pgx.ErrNoRows when the
// table never heard of the phone.
func lockPhone(ctx context.Context, tx pgx.Tx, device string) (phone, error) {
	var ph phone
	var session, task *string
	err := tx.QueryRow(ctx, `SELECT offline_since, stopped_session, stopped_task FROM lease_phones WHERE device = $1 FOR UPDATE`, device).
		Scan(&ph.offline, &session, &task)
	if session != nil {
		ph.stopped, ph.stoppedSession = true, *session
	}
	if task != nil {
		ph.stoppedTask = *task
	}
	return ph, err
}

// lockPhones locks the rows of devices, in device order.
func lockPhones(ctx context.Context, tx pgx.Tx, devices []string) error {
	if len(devices) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `SELECT device FROM lease_phones WHERE device = ANY($1) ORDER BY device FOR UPDATE`, devices)
	if err != nil {
		return err
	}
	rows.Close()
	return rows.Err()
}

// lockDevices finds the devices that query (one column, unlocked) names,
// locks their rows, and returns them. The caller then changes their leases
// with the same condition, which only rows it locked can meet.
func lockDevices(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	devices, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	slices.Sort(devices)
	return devices, lockPhones(ctx, tx, devices)
}

// nextFence gives device a new fence, above every one it had, and returns
// it. The phone's row exists and is locked.
func nextFence(ctx context.Context, tx pgx.Tx, device string) (int64, error) {
	var fence int64
	err := tx.QueryRow(ctx, `UPDATE lease_phones SET fence = fence + 1 WHERE device = $1 RETURNING fence`, device).Scan(&fence)
	return fence, err
}

// leaseCols are the columns a Lease is read from, in scanLease's order.
const leaseCols = `device, session, agent, version, resume_key, task_id, task, apps, since, last_used, park_key, parked_until, fence`

// leaseColsOf is leaseCols qualified by a table's alias.
func leaseColsOf(alias string) string {
	return alias + `.device, ` + alias + `.session, ` + alias + `.agent, ` + alias + `.version, ` + alias + `.resume_key, ` +
		alias + `.task_id, ` + alias + `.task, ` + alias + `.apps, ` + alias + `.since, ` + alias + `.last_used, ` +
		alias + `.park_key, ` + alias + `.parked_until, ` + alias + `.fence`
}

// leaseDest returns the scan destinations of leaseCols into l, and a
// function that finishes l once scanned.
func leaseDest(l *Lease) ([]any, func()) {
	var since, lastUsed, parkedUntil *int64
	dest := []any{&l.Device, &l.Holder.Session, &l.Holder.Agent, &l.Holder.Version, &l.Holder.ResumeKey,
		&l.TaskID, &l.Task, &l.Apps, &since, &lastUsed, &l.ParkKey, &parkedUntil, &l.Fence}
	return dest, func() {
		l.Since, l.LastUsed, l.ParkedUntil = fromNanos(since), fromNanos(lastUsed), fromNanos(parkedUntil)
		if len(l.Apps) == 0 {
			l.Apps = nil // as Memory keeps a lease without apps
		}
	}
}

// getLease reads the lease on device.
func getLease(ctx context.Context, tx pgx.Tx, device string) (Lease, bool, error) {
	var l Lease
	dest, finish := leaseDest(&l)
	err := tx.QueryRow(ctx, `SELECT `+leaseCols+` FROM leases WHERE device = $1`, device).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return Lease{}, false, nil
	}
	if err != nil {
		return Lease{}, false, err
	}
	finish()
	return l, true, nil
}

// collectLeases reads rows of leaseCols.
func collectLeases(rows pgx.Rows) ([]Lease, error) {
	var out []Lease
	var l Lease
	dest, finish := leaseDest(&l)
	_, err := pgx.ForEachRow(rows, dest, func() error {
		finish()
		out = append(out, l.clone())
		return nil
	})
	return out, err
}

// insertLease writes l, held by gateway, for a phone with no lease.
func insertLease(ctx context.Context, tx pgx.Tx, l Lease, gateway string) error {
	apps := l.Apps
	if apps == nil {
		apps = []string{}
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO leases (`+leaseCols+`, gateway)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		l.Device, l.Holder.Session, l.Holder.Agent, l.Holder.Version, l.Holder.ResumeKey,
		l.TaskID, l.Task, apps, nanos(l.Since), nanos(l.LastUsed), l.ParkKey, nanos(l.ParkedUntil), l.Fence, gateway)
	return err
}

// nanos is t as stored: unix nanoseconds, nil for the zero time.
func nanos(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	n := t.UnixNano()
	return &n
}

// fromNanos is a stored time, in the local zone as time.Now gives it; nil
// is the zero time.
func fromNanos(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.Unix(0, *n)
}

// Interface guards.
var _ Table = (*Postgres)(nil)
