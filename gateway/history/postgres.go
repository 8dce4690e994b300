package history

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The PostgreSQL schema: the same numbered migrations as SQLite's, with
// the same versions and meaning, in PostgreSQL's dialect.
//
//go:embed pgschema/migrations/*.sql
var pgMigrationFiles embed.FS

// Postgres is the Store kept in a PostgreSQL database, for a history that
// several machines reach. Screenshots and recordings stay files in the data
// folder, named by the same ids as with SQLite; only the rows move.
//
// Every write is one transaction that has committed when the method
// returns: with the server's synchronous_commit on (its default), a step
// reported to an agent survives a crash of the daemon and of the server.
// Writes and reads share a pool of connections; the server orders
// concurrent writes.
type Postgres struct {
	pool    *pgxpool.Pool
	name    string // the URL without its password, for messages and logs
	gateway string // the gateway this store writes for (OwnedBy)
	health  meter
}

// PostgresOption tunes OpenPostgres.
type PostgresOption func(*Postgres)

// OwnedBy names the gateway the store writes for: a daemon's id, the same
// across its restarts and unique among the gateways that share the
// database. Its sessions and tasks carry it, and CloseOpen and SettleSteps
// end only its own open tasks, sessions and running steps (and those
// written before gateways had ids), so a daemon that starts again never
// ends another live gateway's work. Without it the store is the only
// gateway's, and those end everything open.
func OwnedBy(gateway string) PostgresOption { return func(s *Postgres) { s.gateway = gateway } }

var _ Store = (*Postgres)(nil)

// pgMigrateLock is the advisory lock key that makes two daemons opening one
// new database apply each migration once.
const pgMigrateLock = 0x70696e6b79 // "pinky"

// IsPostgresURL reports whether s names a PostgreSQL database: a
// postgres:// or postgresql:// URL.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// RedactURL returns a database URL with its password, if any, replaced by
// xxxxx, for logs and messages. What is not a URL with a scheme (a
// key=value connection string may hold a password anywhere) comes back as
// "(not a URL)".
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" {
		return "(not a URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// OpenPostgres connects to the PostgreSQL database at the postgres:// or
// postgresql:// URL and brings its schema up to date. It fails with
// ErrSchemaTooNew for a database written by a newer Pinky. Its errors never
// hold the URL's password.
func OpenPostgres(ctx context.Context, dbURL string, opts ...PostgresOption) (*Postgres, error) {
	name := RedactURL(dbURL)
	if !IsPostgresURL(dbURL) {
		return nil, fmt.Errorf("history %s: not a postgres:// or postgresql:// URL", name)
	}
	sub, err := fs.Sub(pgMigrationFiles, "pgschema")
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	ms, err := loadMigrations(sub)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		// pgx's parse errors may quote the URL, password and all.
		return nil, fmt.Errorf("history %s: the URL does not parse", name)
	}
	// The durability promise: a commit returns once the server has it on
	// disk, whatever the server's default (a URL may still say otherwise).
	params := cfg.ConnConfig.RuntimeParams
	if _, set := params["synchronous_commit"]; !set {
		params["synchronous_commit"] = "on"
	}
	if _, set := params["application_name"]; !set {
		params["application_name"] = "pinky"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", name, err)
	}
	s := &Postgres{pool: pool, name: name}
	for _, o := range opts {
		o(s)
	}
	before, err := migratePostgres(ctx, pool, ms, "pinky_migrations", "history")
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("history %s: %w", name, err)
	}
	if before < len(ms) {
		slog.Info("history: schema migrated", "database", name, "from", before, "to", len(ms))
	}
	return s, nil
}

// MigratePostgres brings a schema of its own in the database to the last
// of the numbered migrations in files (migrations/0001_name.sql… as the
// history's), one transaction per migration, and returns the version it
// found. versions names the table that records the versions applied (a
// lowercase SQL name, one per schema: the history's is pinky_migrations),
// and what names the schema in messages. It refuses a database newer than
// files with ErrSchemaTooNew. Another part of Pinky that keeps tables in
// the history's database (the shared leases) migrates them with it.
func MigratePostgres(ctx context.Context, pool *pgxpool.Pool, files fs.FS, versions, what string) (before int, err error) {
	if strings.Trim(versions, "abcdefghijklmnopqrstuvwxyz_") != "" || versions == "" {
		return 0, fmt.Errorf("migrate %s: %q is not a lowercase SQL name", what, versions)
	}
	ms, err := loadMigrations(files)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return migratePostgres(ctx, pool, ms, versions, what)
}

// migratePostgres applies ms, recording them in the table versions, and
// returns the version before; versions is a name the code chose.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool, ms []migration, versions, what string) (int, error) {
	before, err := pgSchemaVersion(ctx, pool, versions)
	if err != nil {
		return 0, err
	}
	for {
		done, err := pgMigrateOne(ctx, pool, ms, versions, what)
		if err != nil {
			return 0, err
		}
		if done {
			return before, nil
		}
	}
}

// pgVersionSQL reads the schema version: the last migration recorded in
// the versions table (%s), which the first migration's transaction
// creates.
const pgVersionSQL = `SELECT coalesce(max(version), 0) FROM %s`

func pgSchemaVersion(ctx context.Context, pool *pgxpool.Pool, versions string) (int, error) {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, versions).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := pool.QueryRow(ctx, fmt.Sprintf(pgVersionSQL, versions)).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// pgMigrateOne applies the next migration, if any, and reports whether the
// schema is now current. The version is the number of rows in the
// versions table rather than SQLite's user_version.
func pgMigrateOne(ctx context.Context, pool *pgxpool.Pool, ms []migration, versions, what string) (done bool, err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.Background())
	// The lock lasts until the transaction ends: a second daemon waits
	// here, then finds the migration applied.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(pgMigrateLock)); err != nil {
		return false, fmt.Errorf("lock the schema: %w", err)
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+versions+` (
		version    INTEGER PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return false, fmt.Errorf("schema versions: %w", err)
	}
	var v int
	if err := tx.QueryRow(ctx, fmt.Sprintf(pgVersionSQL, versions)).Scan(&v); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	if v > len(ms) {
		return false, fmt.Errorf("%w: version %d, this pinky knows up to %d; "+
			"run a newer pinky, or use a new database to start a new %s",
			ErrSchemaTooNew, v, len(ms), what)
	}
	if v == len(ms) {
		return true, tx.Commit(ctx)
	}
	m := ms[v]
	// No arguments: pgx sends it with the simple protocol, which runs a
	// file of several statements.
	if _, err := tx.Exec(ctx, m.sql); err != nil {
		return false, fmt.Errorf("migration %s: %w", m.name, err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO `+versions+` (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
		return false, fmt.Errorf("migration %s: set version: %w", m.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("migration %s: commit: %w", m.name, err)
	}
	return m.version == len(ms), nil
}

// Name is the database's URL without its password.
func (s *Postgres) Name() string { return s.name }

// Close closes the pool's connections.
func (s *Postgres) Close() error {
	s.pool.Close()
	return nil
}

// UpsertDevice implements Store.
func (s *Postgres) UpsertDevice(ctx context.Context, d Device) (err error) {
	defer s.track(&err, true)
	if err := checkID("device", d.ID); err != nil {
		return err
	}
	if d.FirstSeen.IsZero() {
		d.FirstSeen = d.LastSeen
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO devices (id, driver, name, model, platform, first_seen, last_seen)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (id) DO UPDATE SET
			driver = excluded.driver, name = excluded.name, model = excluded.model,
			platform = excluded.platform,
			first_seen = coalesce(devices.first_seen, excluded.first_seen),
			last_seen = excluded.last_seen`,
		d.ID, d.Driver, d.Name, d.Model, d.Platform, millis(d.FirstSeen), millis(d.LastSeen))
	return pgErr(err, "device %q", d.ID)
}

// Device implements Store.
func (s *Postgres) Device(ctx context.Context, id string) (Device, error) {
	d := Device{ID: id}
	var first, last *int64
	err := s.pool.QueryRow(ctx, `
		SELECT driver, name, model, platform, first_seen, last_seen
		FROM devices WHERE id = $1`, id).
		Scan(&d.Driver, &d.Name, &d.Model, &d.Platform, &first, &last)
	if err != nil {
		return Device{}, pgErr(err, "device %q", id)
	}
	d.FirstSeen, d.LastSeen = pgTime(first), pgTime(last)
	return d, nil
}

// UpsertAgent implements Store.
func (s *Postgres) UpsertAgent(ctx context.Context, a Agent) (err error) {
	defer s.track(&err, true)
	if err := checkID("agent", a.ID); err != nil {
		return err
	}
	if a.FirstSeen.IsZero() {
		a.FirstSeen = a.LastSeen
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO agents (id, name, version, first_seen, last_seen)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO UPDATE SET
			name = excluded.name, version = excluded.version,
			first_seen = coalesce(agents.first_seen, excluded.first_seen),
			last_seen = excluded.last_seen`,
		a.ID, a.Name, a.Version, millis(a.FirstSeen), millis(a.LastSeen))
	return pgErr(err, "agent %q", a.ID)
}

// Agent implements Store.
func (s *Postgres) Agent(ctx context.Context, id string) (Agent, error) {
	a := Agent{ID: id}
	var first, last *int64
	err := s.pool.QueryRow(ctx, `
		SELECT name, version, first_seen, last_seen FROM agents WHERE id = $1`, id).
		Scan(&a.Name, &a.Version, &first, &last)
	if err != nil {
		return Agent{}, pgErr(err, "agent %q", id)
	}
	a.FirstSeen, a.LastSeen = pgTime(first), pgTime(last)
	return a, nil
}

// StartSession implements Store.
func (s *Postgres) StartSession(ctx context.Context, ss Session) (err error) {
	defer s.track(&err, true)
	if err := checkID("session", ss.ID); err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO sessions (id, agent_id, transport, started_at, gateway) VALUES ($1, $2, $3, $4, $5)`,
		ss.ID, null(ss.AgentID), ss.Transport, millis(ss.StartedAt), s.gateway)
	return pgErr(err, "session %q", ss.ID)
}

// EndSession implements Store.
func (s *Postgres) EndSession(ctx context.Context, id string, at time.Time) (err error) {
	defer s.track(&err, true)
	if err := checkAt("session", id, at); err != nil {
		return err
	}
	return s.end(ctx, "session", `
		UPDATE sessions SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL`,
		`SELECT 1 FROM sessions WHERE id = $1`, id, millis(at), id)
}

// end runs an UPDATE that ends an open record and, when it changed nothing,
// tells an unknown id from an ended one.
func (s *Postgres) end(ctx context.Context, what, update, exists, id string, args ...any) error {
	tag, err := s.pool.Exec(ctx, update, args...)
	if err != nil {
		return pgErr(err, what+" %q", id)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var one int
	if err := s.pool.QueryRow(ctx, exists, id).Scan(&one); err != nil {
		return pgErr(err, what+" %q", id)
	}
	return fmt.Errorf("%s %q: %w", what, id, ErrEnded)
}

// Session implements Store.
func (s *Postgres) Session(ctx context.Context, id string) (Session, error) {
	ss := Session{ID: id}
	var agent *string
	var started, ended *int64
	err := s.pool.QueryRow(ctx, `
		SELECT agent_id, transport, started_at, ended_at FROM sessions WHERE id = $1`, id).
		Scan(&agent, &ss.Transport, &started, &ended)
	if err != nil {
		return Session{}, pgErr(err, "session %q", id)
	}
	if agent != nil {
		ss.AgentID = *agent
	}
	ss.StartedAt, ss.EndedAt = pgTime(started), pgTime(ended)
	return ss, nil
}

// StartTask implements Store.
func (s *Postgres) StartTask(ctx context.Context, t Task) (err error) {
	defer s.track(&err, true)
	if err := checkID("task", t.ID); err != nil {
		return err
	}
	apps, err := appsJSON(t.Apps)
	if err != nil {
		return fmt.Errorf("task %q: %w", t.ID, err)
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO tasks (id, session_id, agent_id, device_id, text, apps, started_at, gateway)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		t.ID, null(t.SessionID), null(t.AgentID), null(t.DeviceID), t.Text, apps,
		millis(t.StartedAt), s.gateway)
	return pgErr(err, "task %q", t.ID)
}

// EndTask implements Store.
func (s *Postgres) EndTask(ctx context.Context, id string, at time.Time, outcome string) (err error) {
	defer s.track(&err, true)
	if err := checkAt("task", id, at); err != nil {
		return err
	}
	if err := checkOutcome("task", id, outcome); err != nil {
		return err
	}
	return s.end(ctx, "task", `
		UPDATE tasks SET ended_at = $1, outcome = $2 WHERE id = $3 AND ended_at IS NULL`,
		`SELECT 1 FROM tasks WHERE id = $1`, id, millis(at), outcome, id)
}

// Tasks implements Store.
func (s *Postgres) Tasks(ctx context.Context, f TaskFilter) ([]TaskSummary, error) {
	rows, err := s.pool.Query(ctx, summarySQL+`
		WHERE ($1::text = '' OR t.device_id = $1)
		AND ($2::text = '' OR t.agent_id = $2)
		AND ($3::bigint IS NULL OR t.started_at < $3)
		ORDER BY t.started_at DESC, t.id DESC
		LIMIT $4`, f.Device, f.Agent, millis(f.Before), f.limit())
	if err != nil {
		return nil, pgErr(err, "tasks")
	}
	defer rows.Close()
	var out []TaskSummary
	for rows.Next() {
		ts, err := scanSummary(rows)
		if err != nil {
			return nil, pgErr(err, "tasks")
		}
		out = append(out, ts)
	}
	return out, pgErr(rows.Err(), "tasks")
}

// readTx begins a read-only transaction that sees one snapshot.
func (s *Postgres) readTx(ctx context.Context) (pgx.Tx, error) {
	return s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
}

// Task implements Store.
func (s *Postgres) Task(ctx context.Context, id string) (TaskSummary, []Step, error) {
	// One snapshot, so that the summary's step count and the steps agree.
	tx, err := s.readTx(ctx)
	if err != nil {
		return TaskSummary{}, nil, pgErr(err, "task %q", id)
	}
	defer tx.Rollback(context.Background())
	ts, err := scanSummary(tx.QueryRow(ctx, summarySQL+` WHERE t.id = $1`, id))
	if err != nil {
		return TaskSummary{}, nil, pgErr(err, "task %q", id)
	}
	var rec *Recording
	var recStart, recMS int64
	err = tx.QueryRow(ctx, `
		SELECT started_at, duration_ms FROM recordings WHERE task_id = $1 AND bytes > 0`, id).Scan(&recStart, &recMS)
	switch {
	case err == nil:
		rec = &Recording{StartedAt: time.UnixMilli(recStart).UTC(), Duration: time.Duration(recMS) * time.Millisecond}
	case !errors.Is(err, pgx.ErrNoRows):
		return TaskSummary{}, nil, pgErr(err, "task %q: recording", id)
	}
	rows, err := tx.Query(ctx, stepSQL+` WHERE task_id = $1 ORDER BY seq`, id)
	if err != nil {
		return TaskSummary{}, nil, pgErr(err, "task %q: steps", id)
	}
	defer rows.Close()
	var steps []Step
	for rows.Next() {
		st, err := scanStep(rows)
		if err != nil {
			return TaskSummary{}, nil, pgErr(err, "task %q: steps", id)
		}
		st.VideoAt = videoAt(st.StartedAt, rec)
		steps = append(steps, st)
	}
	if err := rows.Err(); err != nil {
		return TaskSummary{}, nil, pgErr(err, "task %q: steps", id)
	}
	return ts, steps, nil
}

// OpenTasks implements Store.
func (s *Postgres) OpenTasks(ctx context.Context) ([]Task, error) {
	rows, err := s.pool.Query(ctx, taskSQL+` WHERE ended_at IS NULL ORDER BY started_at, id`)
	if err != nil {
		return nil, pgErr(err, "open tasks")
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, pgErr(err, "open tasks")
		}
		out = append(out, t)
	}
	return out, pgErr(rows.Err(), "open tasks")
}

// CloseOpen implements Store.
func (s *Postgres) CloseOpen(ctx context.Context, at time.Time, outcome string) (_ int, err error) {
	changed := false
	defer func() { s.track(&err, changed) }()
	if err := checkAt("open tasks", "*", at); err != nil {
		return 0, err
	}
	if err := checkOutcome("open tasks", "*", outcome); err != nil {
		return 0, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return 0, pgErr(err, "close open")
	}
	defer tx.Rollback(context.Background())
	// Only this gateway's own, and those from before gateways had ids
	// (OwnedBy); a store of no gateway ends everything open.
	tag, err := tx.Exec(ctx,
		`UPDATE tasks SET ended_at = $1, outcome = $2 WHERE ended_at IS NULL AND ($3 = '' OR gateway IN ($3, ''))`,
		millis(at), outcome, s.gateway)
	if err != nil {
		return 0, pgErr(err, "close open tasks")
	}
	if _, err := tx.Exec(ctx,
		`UPDATE sessions SET ended_at = $1 WHERE ended_at IS NULL AND ($2 = '' OR gateway IN ($2, ''))`,
		millis(at), s.gateway); err != nil {
		return 0, pgErr(err, "close open sessions")
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, pgErr(err, "close open")
	}
	n := tag.RowsAffected()
	changed = n > 0 // the sessions alone do not tell: most ended already
	return int(n), nil
}

// AddStep implements Store.
func (s *Postgres) AddStep(ctx context.Context, st Step) (err error) {
	defer s.track(&err, true)
	if err := checkStep(st); err != nil {
		return err
	}
	// One statement is one transaction: when Exec returns, the server has
	// committed it.
	_, err = s.pool.Exec(ctx, `
		INSERT INTO steps (id, task_id, seq, tool, args, outcome, message, diff,
			started_at, duration_ns, before_media, after_media)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		st.ID, st.TaskID, st.Seq, st.Tool, st.Args, st.Outcome, st.Message, st.Diff,
		millis(st.StartedAt), int64(st.Duration), st.Before, st.After)
	return pgErr(err, "step %q (task %q, seq %d)", st.ID, st.TaskID, st.Seq)
}

// FinishStep implements Store.
func (s *Postgres) FinishStep(ctx context.Context, st Step) (err error) {
	defer s.track(&err, true)
	if err := checkFinish(st); err != nil {
		return err
	}
	return s.end(ctx, "step", `
		UPDATE steps SET outcome = $1, message = $2, diff = $3, duration_ns = $4
		WHERE id = $5 AND outcome = $6`,
		`SELECT 1 FROM steps WHERE id = $1`, st.ID,
		st.Outcome, st.Message, st.Diff, int64(st.Duration), st.ID, StepRunning)
}

// SettleSteps implements Store.
func (s *Postgres) SettleSteps(ctx context.Context, outcome, message string) (_ int, err error) {
	changed := false
	defer func() { s.track(&err, changed) }()
	if outcome == StepRunning {
		return 0, fmt.Errorf("running steps: outcome %q does not end them: %w", outcome, ErrInvalid)
	}
	if err := checkOutcome("running steps", "*", outcome); err != nil {
		return 0, err
	}
	// The literal matches the steps_running index (0004).
	// Only the steps of this gateway's own tasks (see CloseOpen).
	tag, err := s.pool.Exec(ctx, `
		UPDATE steps SET outcome = $1, message = $2 WHERE outcome = 'running'
			AND ($3 = '' OR task_id IN (SELECT id FROM tasks WHERE gateway IN ($3, '')))`,
		outcome, message, s.gateway)
	if err != nil {
		return 0, pgErr(err, "settle running steps")
	}
	changed = tag.RowsAffected() > 0
	return int(tag.RowsAffected()), nil
}

// SetStepMedia implements Store.
func (s *Postgres) SetStepMedia(ctx context.Context, stepID, before, after string) (err error) {
	defer s.track(&err, true)
	tag, err := s.pool.Exec(ctx, `
		UPDATE steps SET
			before_media = CASE WHEN $1::text = '' THEN before_media ELSE $1 END,
			after_media = CASE WHEN $2::text = '' THEN after_media ELSE $2 END
		WHERE id = $3`, before, after, stepID)
	if err != nil {
		return pgErr(err, "step %q: media", stepID)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("step %q: %w", stepID, ErrNotFound)
	}
	return nil
}

// CountSteps implements Store.
func (s *Postgres) CountSteps(ctx context.Context, taskID string) (int, error) {
	var n int
	if taskID == "" {
		err := s.pool.QueryRow(ctx, `SELECT count(*) FROM steps`).Scan(&n)
		return n, pgErr(err, "count steps")
	}
	var ok bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1),
			(SELECT count(*) FROM steps WHERE task_id = $1)`, taskID).Scan(&ok, &n)
	if err != nil {
		return 0, pgErr(err, "task %q: count steps", taskID)
	}
	if !ok {
		return 0, fmt.Errorf("task %q: %w", taskID, ErrNotFound)
	}
	return n, nil
}

// AddMedia implements Store.
func (s *Postgres) AddMedia(ctx context.Context, m Media) (err error) {
	defer s.track(&err, true)
	if err := checkMedia(m); err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO media (id, task_id, step_id, kind, path, width, height, bytes, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		m.ID, m.TaskID, null(m.StepID), m.Kind, m.Path, m.Width, m.Height, m.Bytes,
		millis(m.CreatedAt))
	return pgErr(err, "media %q", m.ID)
}

// Media implements Store.
func (s *Postgres) Media(ctx context.Context, id string) (Media, error) {
	m := Media{ID: id}
	var step *string
	var created *int64
	err := s.pool.QueryRow(ctx, `
		SELECT task_id, step_id, kind, path, width, height, bytes, created_at
		FROM media WHERE id = $1`, id).
		Scan(&m.TaskID, &step, &m.Kind, &m.Path, &m.Width, &m.Height, &m.Bytes, &created)
	if err != nil {
		return Media{}, pgErr(err, "media %q", id)
	}
	if step != nil {
		m.StepID = *step
	}
	m.CreatedAt = pgTime(created)
	return m, nil
}

// UpsertApproval implements Store.
func (s *Postgres) UpsertApproval(ctx context.Context, a Approval) (err error) {
	defer s.track(&err, true)
	if err := checkApproval(a); err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO approvals (id, task_id, step_id, tool, args, commit_kind, rule, target, status,
			created_at, decided_at, decided_by, reason, for_task, summary, counterpart)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
		ON CONFLICT (id) DO UPDATE SET
			task_id = excluded.task_id, step_id = excluded.step_id, tool = excluded.tool,
			args = excluded.args, commit_kind = excluded.commit_kind, rule = excluded.rule,
			target = excluded.target, status = excluded.status,
			created_at = coalesce(approvals.created_at, excluded.created_at),
			decided_at = excluded.decided_at, decided_by = excluded.decided_by,
			reason = excluded.reason, for_task = excluded.for_task, summary = excluded.summary,
			counterpart = excluded.counterpart`,
		a.ID, a.TaskID, null(a.StepID), a.Tool, a.Args, a.Commit, a.Rule, a.Target, a.Status,
		millis(a.CreatedAt), millis(a.DecidedAt), a.DecidedBy, a.Reason, a.ForTask, a.Summary, a.Counterpart)
	return pgErr(err, "approval %q (task %q)", a.ID, a.TaskID)
}

// Approvals implements Store.
func (s *Postgres) Approvals(ctx context.Context, taskID string) ([]Approval, error) {
	// One snapshot, so that "no such task" and the list agree.
	tx, err := s.readTx(ctx)
	if err != nil {
		return nil, pgErr(err, "task %q: approvals", taskID)
	}
	defer tx.Rollback(context.Background())
	var one int
	if err := tx.QueryRow(ctx, `SELECT 1 FROM tasks WHERE id = $1`, taskID).Scan(&one); err != nil {
		return nil, pgErr(err, "task %q", taskID)
	}
	rows, err := tx.Query(ctx, `
		SELECT a.id, a.task_id, a.step_id, a.tool, a.args, a.commit_kind, a.rule, a.target, a.status,
			a.created_at, a.decided_at, a.decided_by, a.reason, a.for_task, a.summary, a.counterpart, coalesce(m.id, '')
		FROM approvals a LEFT JOIN media m ON m.id = 'approval-' || a.id
		WHERE a.task_id = $1 ORDER BY a.created_at, a.id`, taskID)
	if err != nil {
		return nil, pgErr(err, "task %q: approvals", taskID)
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		var a Approval
		var step *string
		var created, decided *int64
		if err := rows.Scan(&a.ID, &a.TaskID, &step, &a.Tool, &a.Args, &a.Commit, &a.Rule, &a.Target,
			&a.Status, &created, &decided, &a.DecidedBy, &a.Reason, &a.ForTask, &a.Summary, &a.Counterpart, &a.Screenshot); err != nil {
			return nil, pgErr(err, "task %q: approvals", taskID)
		}
		if step != nil {
			a.StepID = *step
		}
		a.CreatedAt, a.DecidedAt = pgTime(created), pgTime(decided)
		out = append(out, a)
	}
	return out, pgErr(rows.Err(), "task %q: approvals", taskID)
}

// PutRecording implements Store.
func (s *Postgres) PutRecording(ctx context.Context, r Recording) (err error) {
	defer s.track(&err, true)
	if err := checkRecording(r); err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `
		INSERT INTO recordings (task_id, path, codec, width, height, started_at, duration_ms,
			bytes, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (task_id) DO UPDATE SET
			path = excluded.path, codec = excluded.codec, width = excluded.width,
			height = excluded.height, started_at = excluded.started_at,
			duration_ms = excluded.duration_ms, bytes = excluded.bytes,
			updated_at = excluded.updated_at`,
		r.TaskID, r.Path, r.Codec, r.Width, r.Height, millis(r.StartedAt),
		r.Duration.Milliseconds(), r.Bytes, millis(r.UpdatedAt))
	return pgErr(err, "recording of task %q", r.TaskID)
}

// Recording implements Store.
func (s *Postgres) Recording(ctx context.Context, taskID string) (Recording, error) {
	r := Recording{TaskID: taskID}
	var started, updated *int64
	var dur int64
	err := s.pool.QueryRow(ctx, `
		SELECT path, codec, width, height, started_at, duration_ms, bytes, updated_at
		FROM recordings WHERE task_id = $1`, taskID).
		Scan(&r.Path, &r.Codec, &r.Width, &r.Height, &started, &dur, &r.Bytes, &updated)
	if err != nil {
		return Recording{}, pgErr(err, "recording of task %q", taskID)
	}
	r.StartedAt, r.UpdatedAt = pgTime(started), pgTime(updated)
	r.Duration = time.Duration(dur) * time.Millisecond
	return r, nil
}

// Prune implements Store.
func (s *Postgres) Prune(ctx context.Context, before time.Time) (_ Pruned, err error) {
	changed := false
	defer func() { s.track(&err, changed) }()
	if err := checkAt("prune", "*", before); err != nil {
		return Pruned{}, err
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return Pruned{}, pgErr(err, "prune")
	}
	defer tx.Rollback(context.Background())
	// The doomed tasks go into a temporary table first, so that every
	// statement below works on the same set; it goes with the transaction.
	beforeMS := before.UnixMilli()
	tag, err := tx.Exec(ctx, `
		CREATE TEMP TABLE prune_tasks ON COMMIT DROP AS
		SELECT id FROM tasks WHERE ended_at IS NOT NULL AND ended_at < $1`, beforeMS)
	if err != nil {
		return Pruned{}, pgErr(err, "prune: select tasks")
	}
	p := Pruned{Tasks: int(tag.RowsAffected())}
	if p.Files.Media, err = pgColumn(ctx, tx, `
		SELECT DISTINCT path FROM media
		WHERE task_id IN (SELECT id FROM prune_tasks) ORDER BY path`); err != nil {
		return Pruned{}, pgErr(err, "prune: media paths")
	}
	if p.Files.Recordings, err = pgColumn(ctx, tx, `
		SELECT DISTINCT path FROM recordings
		WHERE task_id IN (SELECT id FROM prune_tasks) ORDER BY path`); err != nil {
		return Pruned{}, pgErr(err, "prune: recording paths")
	}
	// Children first, as the foreign keys require; a row of a task that
	// stays but names a step of a pruned task loses that reference, as
	// with SQLite.
	for _, st := range []struct {
		sql   string
		args  []any
		count *int
	}{
		{`UPDATE approvals SET step_id = NULL
			WHERE task_id NOT IN (SELECT id FROM prune_tasks)
			AND step_id IN (SELECT s.id FROM steps s JOIN prune_tasks p ON s.task_id = p.id)`, nil, nil},
		{`UPDATE media SET step_id = NULL
			WHERE task_id NOT IN (SELECT id FROM prune_tasks)
			AND step_id IN (SELECT s.id FROM steps s JOIN prune_tasks p ON s.task_id = p.id)`, nil, nil},
		{`DELETE FROM approvals WHERE task_id IN (SELECT id FROM prune_tasks)`, nil, &p.Approvals},
		{`DELETE FROM media WHERE task_id IN (SELECT id FROM prune_tasks)`, nil, &p.Media},
		{`DELETE FROM recordings WHERE task_id IN (SELECT id FROM prune_tasks)`, nil, &p.Recordings},
		{`DELETE FROM steps WHERE task_id IN (SELECT id FROM prune_tasks)`, nil, &p.Steps},
		{`DELETE FROM tasks WHERE id IN (SELECT id FROM prune_tasks)`, nil, nil},
		{`DELETE FROM sessions WHERE ended_at IS NOT NULL AND ended_at < $1
			AND NOT EXISTS (SELECT 1 FROM tasks WHERE session_id = sessions.id)`,
			[]any{beforeMS}, &p.Sessions},
	} {
		tag, err := tx.Exec(ctx, st.sql, st.args...)
		if err != nil {
			return Pruned{}, pgErr(err, "prune")
		}
		if st.count != nil {
			*st.count = int(tag.RowsAffected())
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return Pruned{}, pgErr(err, "prune: commit")
	}
	changed = p.Tasks+p.Sessions > 0
	return p, nil
}

// NamedFiles implements Store.
func (s *Postgres) NamedFiles(ctx context.Context, f Files) (Files, error) {
	tx, err := s.readTx(ctx)
	if err != nil {
		return Files{}, pgErr(err, "named files")
	}
	defer tx.Rollback(context.Background())
	var out Files
	if len(f.Media) > 0 {
		if out.Media, err = pgColumn(ctx, tx, `SELECT DISTINCT path FROM media WHERE path = ANY($1) ORDER BY path`, f.Media); err != nil {
			return Files{}, pgErr(err, "named media files")
		}
	}
	if len(f.Recordings) > 0 {
		if out.Recordings, err = pgColumn(ctx, tx, `SELECT DISTINCT path FROM recordings WHERE path = ANY($1) ORDER BY path`, f.Recordings); err != nil {
			return Files{}, pgErr(err, "named recording files")
		}
	}
	return out, nil
}

// pgColumn returns the one text column of a query's rows.
func pgColumn(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if len(out) == 0 {
		out = nil
	}
	return out, err
}

// Health implements Store.
func (s *Postgres) Health() Health { return s.health.get() }

// track records a write's outcome in the store's Health, as SQLite's does:
// a write that failed for a reason other than what was written (the server
// refuses writes, is out of space, cannot be reached) becomes a
// *WriteError saying why.
func (s *Postgres) track(err *error, changed bool) {
	switch {
	case *err == nil:
		if changed {
			s.health.worked()
		}
	case neutral(*err):
	default:
		cause, fix := pgDiagnose(*err, s.name)
		s.health.failed(cause, fix, *err)
		*err = &WriteError{Cause: cause, Err: *err}
	}
}

// pgDiagnose says why PostgreSQL did not take a write (cause, for agents
// and people alike) and what the person does about it (fix, naming the
// database by its URL without the password).
func pgDiagnose(err error, name string) (cause, fix string) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "the database server cannot be reached",
			fmt.Sprintf("check that the PostgreSQL server of %s runs and that this computer reaches it; writes resume by themselves", name)
	}
	switch {
	case pe.Code == "53100":
		cause, fix = "the database server's disk is full", fmt.Sprintf("free space on the disk of the PostgreSQL server of %s; writes resume by themselves", name)
	case strings.HasPrefix(pe.Code, "53"):
		cause, fix = "the database server is out of resources", fmt.Sprintf("check the PostgreSQL server of %s (memory, connections); writes resume by themselves", name)
	case pe.Code == "25006":
		cause, fix = "the database is read-only", fmt.Sprintf("point the daemon at a writable PostgreSQL server (not a standby) for %s, or clear default_transaction_read_only", name)
	case pe.Code == "42501":
		cause, fix = "the database refuses this user's writes", fmt.Sprintf("grant the user of %s INSERT, UPDATE and DELETE on Pinky's tables; writes resume by themselves", name)
	case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"):
		cause, fix = "the database server is not available", fmt.Sprintf("check that the PostgreSQL server of %s runs; writes resume by themselves", name)
	default:
		cause, fix = "PostgreSQL refused the write: "+pe.Message, fmt.Sprintf("check the PostgreSQL server of %s and the daemon's log", name)
	}
	return cause + " (SQLSTATE " + pe.Code + ")", fix
}

// pgErr wraps err with context, mapping what PostgreSQL reports to the
// package's errors, as sqlErr does for SQLite. It returns nil for a nil
// err.
func pgErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505": // unique_violation
			return fmt.Errorf("%s: %w", what, ErrExists)
		case "23503": // foreign_key_violation
			return fmt.Errorf("%s: an id it refers to: %w", what, ErrNotFound)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

func pgTime(v *int64) time.Time {
	if v == nil {
		return time.Time{}
	}
	return time.UnixMilli(*v).UTC()
}
