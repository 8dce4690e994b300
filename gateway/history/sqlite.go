package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	_ "github.com/mattn/go-sqlite3" // the "sqlite3" database/sql driver
)

// SQLite is the Store kept in a SQLite database file.
//
// Writes go through a single connection, one after another, which is how
// SQLite works anyway: queuing in database/sql instead of retrying on
// SQLITE_BUSY keeps many agents' steps flowing without errors. Reads use a
// pool of their own; in WAL mode they never wait for the writer.
//
// The file is opened with SQLite's "unix-excl" VFS: the daemon's process
// holds it exclusively (one daemon per data folder holds a lock anyway),
// and the WAL index lives in the process's memory instead of a -shm file
// that every connection maps. A mapped -shm file that becomes unwritable
// (an immutable flag, a full disk under a sparse file) turns the next write
// into SIGBUS, which kills the daemon; memory cannot fail that way. Another
// process that opens the database while the daemon runs gets "database is
// locked" (after its busy timeout); `sqlite3 history.db` works once the
// daemon has stopped. Nothing in Pinky opens it meanwhile: the CLI, the
// console and the export read the history through the daemon.
type SQLite struct {
	path   string
	w      *sql.DB // one connection: every write, in order
	r      *sql.DB // read-only connections
	health meter
}

var _ Store = (*SQLite)(nil)

const (
	busyTimeout = 5 * time.Second // another process (a second reader) holding a lock
	readConns   = 4
	stmtCache   = 32 // prepared statements kept per connection
	// vfs keeps the WAL index in memory and the file to this process.
	vfs = "unix-excl"
)

// Open opens the history database at path, creating it (mode 0600, in a
// folder of mode 0700) if needed, checks it (PRAGMA quick_check) and brings
// its schema up to date. It fails with ErrSchemaTooNew for a database
// written by a newer Pinky, and with ErrDamaged, saying what to do, for a
// damaged one. A database it can read but not write opens: its writes fail
// with ErrUnwritable and Health says why.
func Open(path string) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	// SQLite would create the file with the umask's permissions; create it
	// first so that the history is the person's alone. The -wal file takes
	// the database file's permissions. An existing file is left to SQLite,
	// which opens a file it cannot write read-only.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}

	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	// A file: URI so that any character in the path is escaped; the
	// underscore parameters are the driver's and set per connection.
	uri := "file:" + (&url.URL{Path: abs}).EscapedPath()
	w, err := sql.Open("sqlite3", fmt.Sprintf("%s?vfs=%s&_journal_mode=WAL&_synchronous=NORMAL"+
		"&_foreign_keys=on&_busy_timeout=%d&_txlock=immediate&_stmt_cache_size=%d",
		uri, vfs, busyTimeout.Milliseconds(), stmtCache))
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	s := &SQLite{path: abs, w: w}

	ctx := context.Background()
	before, err := userVersion(ctx, w)
	if err == nil {
		err = quickCheck(ctx, w)
	}
	if err == nil {
		err = migrate(ctx, w, ms)
	}
	if err != nil {
		w.Close()
		if damaged(err) {
			return nil, damagedError(abs, err)
		}
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	if before < len(ms) {
		slog.Info("history: schema migrated", "path", abs, "from", before, "to", len(ms))
	}

	// The readers are opened after the writer has put the file in WAL mode,
	// which lasts; query_only makes a stray write through them fail.
	r, err := sql.Open("sqlite3", fmt.Sprintf("%s?vfs=%s&_foreign_keys=on&_busy_timeout=%d"+
		"&_query_only=on&_stmt_cache_size=%d", uri, vfs, busyTimeout.Milliseconds(), stmtCache))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("history %s: %w", path, err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	s.r = r
	return s, nil
}

// quickCheck runs PRAGMA quick_check, which reads every page of the file
// and finds most damage in a fraction of the time integrity_check takes.
func quickCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check(5)")
	if err != nil {
		return fmt.Errorf("quick_check: %w", err)
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("quick_check: %w", err)
		}
		if line != "ok" {
			problems = append(problems, strings.Join(strings.Fields(line), " "))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("quick_check: %w", err)
	}
	if len(problems) > 0 {
		return &damage{strings.Join(problems, "; ")}
	}
	return nil
}

// damage is what quick_check found wrong.
type damage struct{ problems string }

func (d *damage) Error() string { return "quick_check: " + d.problems }

// damaged reports whether err says the file is not a sound database.
func damaged(err error) bool {
	var d *damage
	if errors.As(err, &d) {
		return true
	}
	f, ok := sqliteFailureOf(err)
	return ok && (f.code == sqliteCorrupt || f.code == sqliteNotADB)
}

// damagedError is Open's answer for a damaged database: what is wrong, and
// what the person does about it.
func damagedError(path string, err error) error {
	return fmt.Errorf("history %s: %w (%v); %s", path, ErrDamaged, err, damagedFix(path))
}

// damagedFix says what to do with a damaged database, once the daemon has
// stopped.
func damagedFix(path string) string {
	return fmt.Sprintf("move the file away (mv %s %s.damaged; and %s-wal, if there is one, to %s.damaged-wal), "+
		"then start the daemon again: it starts a new history, and "+
		"`sqlite3 %s.damaged .recover` may save what the old one holds", path, path, path, path, path)
}

func userVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema version: %w", err)
	}
	return v, nil
}

// Path is the database file's absolute path.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// UpsertDevice implements Store.
func (s *SQLite) UpsertDevice(ctx context.Context, d Device) (err error) {
	defer s.track(&err, true)
	if err := checkID("device", d.ID); err != nil {
		return err
	}
	if d.FirstSeen.IsZero() {
		d.FirstSeen = d.LastSeen
	}
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO devices (id, driver, name, model, platform, first_seen, last_seen)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			driver = excluded.driver, name = excluded.name, model = excluded.model,
			platform = excluded.platform,
			first_seen = coalesce(first_seen, excluded.first_seen),
			last_seen = excluded.last_seen`,
		d.ID, d.Driver, d.Name, d.Model, d.Platform, millis(d.FirstSeen), millis(d.LastSeen))
	return sqlErr(err, "device %q", d.ID)
}

// Device implements Store.
func (s *SQLite) Device(ctx context.Context, id string) (Device, error) {
	d := Device{ID: id}
	var first, last sql.NullInt64
	err := s.r.QueryRowContext(ctx, `
		SELECT driver, name, model, platform, first_seen, last_seen
		FROM devices WHERE id = ?`, id).
		Scan(&d.Driver, &d.Name, &d.Model, &d.Platform, &first, &last)
	if err != nil {
		return Device{}, sqlErr(err, "device %q", id)
	}
	d.FirstSeen, d.LastSeen = fromMillis(first), fromMillis(last)
	return d, nil
}

// UpsertAgent implements Store.
func (s *SQLite) UpsertAgent(ctx context.Context, a Agent) (err error) {
	defer s.track(&err, true)
	if err := checkID("agent", a.ID); err != nil {
		return err
	}
	if a.FirstSeen.IsZero() {
		a.FirstSeen = a.LastSeen
	}
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO agents (id, name, version, first_seen, last_seen)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			name = excluded.name, version = excluded.version,
			first_seen = coalesce(first_seen, excluded.first_seen),
			last_seen = excluded.last_seen`,
		a.ID, a.Name, a.Version, millis(a.FirstSeen), millis(a.LastSeen))
	return sqlErr(err, "agent %q", a.ID)
}

// Agent implements Store.
func (s *SQLite) Agent(ctx context.Context, id string) (Agent, error) {
	a := Agent{ID: id}
	var first, last sql.NullInt64
	err := s.r.QueryRowContext(ctx, `
		SELECT name, version, first_seen, last_seen FROM agents WHERE id = ?`, id).
		Scan(&a.Name, &a.Version, &first, &last)
	if err != nil {
		return Agent{}, sqlErr(err, "agent %q", id)
	}
	a.FirstSeen, a.LastSeen = fromMillis(first), fromMillis(last)
	return a, nil
}

// StartSession implements Store.
func (s *SQLite) StartSession(ctx context.Context, ss Session) (err error) {
	defer s.track(&err, true)
	if err := checkID("session", ss.ID); err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO sessions (id, agent_id, transport, started_at) VALUES (?, ?, ?, ?)`,
		ss.ID, null(ss.AgentID), ss.Transport, millis(ss.StartedAt))
	return sqlErr(err, "session %q", ss.ID)
}

// EndSession implements Store.
func (s *SQLite) EndSession(ctx context.Context, id string, at time.Time) (err error) {
	defer s.track(&err, true)
	if err := checkAt("session", id, at); err != nil {
		return err
	}
	return s.end(ctx, "session", `
		UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL`,
		`SELECT 1 FROM sessions WHERE id = ?`, id, millis(at), id)
}

// end runs an UPDATE that ends an open record and, when it changed nothing,
// tells an unknown id from an ended one.
func (s *SQLite) end(ctx context.Context, what, update, exists, id string, args ...any) error {
	res, err := s.w.ExecContext(ctx, update, args...)
	if err != nil {
		return sqlErr(err, what+" %q", id)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var one int
	if err := s.w.QueryRowContext(ctx, exists, id).Scan(&one); err != nil {
		return sqlErr(err, what+" %q", id)
	}
	return fmt.Errorf("%s %q: %w", what, id, ErrEnded)
}

// Session implements Store.
func (s *SQLite) Session(ctx context.Context, id string) (Session, error) {
	ss := Session{ID: id}
	var agent sql.NullString
	var started, ended sql.NullInt64
	err := s.r.QueryRowContext(ctx, `
		SELECT agent_id, transport, started_at, ended_at FROM sessions WHERE id = ?`, id).
		Scan(&agent, &ss.Transport, &started, &ended)
	if err != nil {
		return Session{}, sqlErr(err, "session %q", id)
	}
	ss.AgentID = agent.String
	ss.StartedAt, ss.EndedAt = fromMillis(started), fromMillis(ended)
	return ss, nil
}

// StartTask implements Store.
func (s *SQLite) StartTask(ctx context.Context, t Task) (err error) {
	defer s.track(&err, true)
	if err := checkID("task", t.ID); err != nil {
		return err
	}
	apps, err := appsJSON(t.Apps)
	if err != nil {
		return fmt.Errorf("task %q: %w", t.ID, err)
	}
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO tasks (id, session_id, agent_id, device_id, text, apps, started_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.ID, null(t.SessionID), null(t.AgentID), null(t.DeviceID), t.Text, apps,
		millis(t.StartedAt))
	return sqlErr(err, "task %q", t.ID)
}

// EndTask implements Store.
func (s *SQLite) EndTask(ctx context.Context, id string, at time.Time, outcome string) (err error) {
	defer s.track(&err, true)
	if err := checkAt("task", id, at); err != nil {
		return err
	}
	if err := checkOutcome("task", id, outcome); err != nil {
		return err
	}
	return s.end(ctx, "task", `
		UPDATE tasks SET ended_at = ?, outcome = ? WHERE id = ? AND ended_at IS NULL`,
		`SELECT 1 FROM tasks WHERE id = ?`, id, millis(at), outcome, id)
}

// summarySQL selects what scanSummary reads; the caller adds WHERE, ORDER
// and LIMIT.
const summarySQL = `
	SELECT t.id, t.session_id, t.agent_id, t.device_id, t.text, t.apps,
		t.started_at, t.ended_at, t.outcome,
		coalesce(a.name, ''), coalesce(a.version, ''), coalesce(d.name, ''),
		(SELECT count(*) FROM steps WHERE task_id = t.id),
		coalesce((SELECT outcome FROM steps WHERE task_id = t.id ORDER BY seq DESC LIMIT 1), ''),
		EXISTS (SELECT 1 FROM recordings WHERE task_id = t.id AND bytes > 0)
	FROM tasks t
	LEFT JOIN agents a ON a.id = t.agent_id
	LEFT JOIN devices d ON d.id = t.device_id`

const taskSQL = `
	SELECT id, session_id, agent_id, device_id, text, apps, started_at, ended_at, outcome
	FROM tasks`

type scanner interface{ Scan(dest ...any) error }

func scanTask(sc scanner, extra ...any) (Task, error) {
	var t Task
	var session, agent, device sql.NullString
	var apps string
	var started, ended sql.NullInt64
	dest := append([]any{&t.ID, &session, &agent, &device, &t.Text, &apps,
		&started, &ended, &t.Outcome}, extra...)
	if err := sc.Scan(dest...); err != nil {
		return Task{}, err
	}
	t.SessionID, t.AgentID, t.DeviceID = session.String, agent.String, device.String
	t.StartedAt, t.EndedAt = fromMillis(started), fromMillis(ended)
	if err := json.Unmarshal([]byte(apps), &t.Apps); err != nil {
		return Task{}, fmt.Errorf("task %q: apps: %w", t.ID, err)
	}
	if len(t.Apps) == 0 {
		t.Apps = nil
	}
	return t, nil
}

func scanSummary(sc scanner) (TaskSummary, error) {
	var ts TaskSummary
	t, err := scanTask(sc, &ts.AgentName, &ts.AgentVersion, &ts.DeviceName, &ts.Steps, &ts.LastOutcome, &ts.Recording)
	ts.Task = t
	return ts, err
}

// Tasks implements Store.
func (s *SQLite) Tasks(ctx context.Context, f TaskFilter) ([]TaskSummary, error) {
	var before any
	if !f.Before.IsZero() {
		before = f.Before.UnixMilli()
	}
	rows, err := s.r.QueryContext(ctx, summarySQL+`
		WHERE (?1 = '' OR t.device_id = ?1)
		AND (?2 = '' OR t.agent_id = ?2)
		AND (?3 IS NULL OR t.started_at < ?3)
		ORDER BY t.started_at DESC, t.id DESC
		LIMIT ?4`, f.Device, f.Agent, before, f.limit())
	if err != nil {
		return nil, sqlErr(err, "tasks")
	}
	defer rows.Close()
	var out []TaskSummary
	for rows.Next() {
		ts, err := scanSummary(rows)
		if err != nil {
			return nil, sqlErr(err, "tasks")
		}
		out = append(out, ts)
	}
	return out, sqlErr(rows.Err(), "tasks")
}

// Task implements Store.
func (s *SQLite) Task(ctx context.Context, id string) (TaskSummary, []Step, error) {
	// One read transaction, so that the summary's step count and the steps
	// come from the same snapshot.
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return TaskSummary{}, nil, sqlErr(err, "task %q", id)
	}
	defer tx.Rollback()
	ts, err := scanSummary(tx.QueryRowContext(ctx, summarySQL+` WHERE t.id = ?`, id))
	if err != nil {
		return TaskSummary{}, nil, sqlErr(err, "task %q", id)
	}
	// The recording places the steps in the video.
	var rec *Recording
	var recStart, recMS int64
	err = tx.QueryRowContext(ctx, `
		SELECT started_at, duration_ms FROM recordings WHERE task_id = ? AND bytes > 0`, id).Scan(&recStart, &recMS)
	switch {
	case err == nil:
		rec = &Recording{StartedAt: time.UnixMilli(recStart).UTC(), Duration: time.Duration(recMS) * time.Millisecond}
	case !errors.Is(err, sql.ErrNoRows):
		return TaskSummary{}, nil, sqlErr(err, "task %q: recording", id)
	}
	rows, err := tx.QueryContext(ctx, stepSQL+` WHERE task_id = ? ORDER BY seq`, id)
	if err != nil {
		return TaskSummary{}, nil, sqlErr(err, "task %q: steps", id)
	}
	defer rows.Close()
	var steps []Step
	for rows.Next() {
		st, err := scanStep(rows)
		if err != nil {
			return TaskSummary{}, nil, sqlErr(err, "task %q: steps", id)
		}
		st.VideoAt = videoAt(st.StartedAt, rec)
		steps = append(steps, st)
	}
	if err := rows.Err(); err != nil {
		return TaskSummary{}, nil, sqlErr(err, "task %q: steps", id)
	}
	return ts, steps, nil
}

// OpenTasks implements Store.
func (s *SQLite) OpenTasks(ctx context.Context) ([]Task, error) {
	rows, err := s.r.QueryContext(ctx, taskSQL+` WHERE ended_at IS NULL ORDER BY started_at, id`)
	if err != nil {
		return nil, sqlErr(err, "open tasks")
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, sqlErr(err, "open tasks")
		}
		out = append(out, t)
	}
	return out, sqlErr(rows.Err(), "open tasks")
}

// CloseOpen implements Store.
func (s *SQLite) CloseOpen(ctx context.Context, at time.Time, outcome string) (_ int, err error) {
	changed := false
	defer func() { s.track(&err, changed) }()
	if err := checkAt("open tasks", "*", at); err != nil {
		return 0, err
	}
	if err := checkOutcome("open tasks", "*", outcome); err != nil {
		return 0, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, sqlErr(err, "close open")
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx,
		`UPDATE tasks SET ended_at = ?, outcome = ? WHERE ended_at IS NULL`, millis(at), outcome)
	if err != nil {
		return 0, sqlErr(err, "close open tasks")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, sqlErr(err, "close open tasks")
	}
	if _, err := tx.ExecContext(ctx,
		`UPDATE sessions SET ended_at = ? WHERE ended_at IS NULL`, millis(at)); err != nil {
		return 0, sqlErr(err, "close open sessions")
	}
	if err := tx.Commit(); err != nil {
		return 0, sqlErr(err, "close open")
	}
	changed = n > 0 // the sessions alone do not tell: most ended already
	return int(n), nil
}

const stepSQL = `
	SELECT id, task_id, seq, tool, args, outcome, message, diff, started_at, duration_ns,
		before_media, after_media
	FROM steps`

func scanStep(sc scanner) (Step, error) {
	var st Step
	var started sql.NullInt64
	var dur int64
	err := sc.Scan(&st.ID, &st.TaskID, &st.Seq, &st.Tool, &st.Args, &st.Outcome, &st.Message,
		&st.Diff, &started, &dur, &st.Before, &st.After)
	st.StartedAt, st.Duration = fromMillis(started), time.Duration(dur)
	return st, err
}

// AddStep implements Store.
func (s *SQLite) AddStep(ctx context.Context, st Step) (err error) {
	defer s.track(&err, true)
	if err := checkStep(st); err != nil {
		return err
	}
	// One statement is one transaction: when ExecContext returns, the step
	// is in the WAL and survives the process.
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO steps (id, task_id, seq, tool, args, outcome, message, diff,
			started_at, duration_ns, before_media, after_media)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		st.ID, st.TaskID, st.Seq, st.Tool, st.Args, st.Outcome, st.Message, st.Diff,
		millis(st.StartedAt), int64(st.Duration), st.Before, st.After)
	if err != nil {
		return sqlErr(err, "step %q (task %q, seq %d)", st.ID, st.TaskID, st.Seq)
	}
	return nil
}

// FinishStep implements Store.
func (s *SQLite) FinishStep(ctx context.Context, st Step) (err error) {
	defer s.track(&err, true)
	if err := checkFinish(st); err != nil {
		return err
	}
	return s.end(ctx, "step", `
		UPDATE steps SET outcome = ?, message = ?, diff = ?, duration_ns = ?
		WHERE id = ? AND outcome = ?`,
		`SELECT 1 FROM steps WHERE id = ?`, st.ID,
		st.Outcome, st.Message, st.Diff, int64(st.Duration), st.ID, StepRunning)
}

// SettleSteps implements Store.
func (s *SQLite) SettleSteps(ctx context.Context, outcome, message string) (_ int, err error) {
	changed := false
	defer func() { s.track(&err, changed) }()
	if outcome == StepRunning {
		return 0, fmt.Errorf("running steps: outcome %q does not end them: %w", outcome, ErrInvalid)
	}
	if err := checkOutcome("running steps", "*", outcome); err != nil {
		return 0, err
	}
	// The literal lets SQLite use the steps_running index (0004).
	res, err := s.w.ExecContext(ctx, `UPDATE steps SET outcome = ?, message = ? WHERE outcome = 'running'`,
		outcome, message)
	if err != nil {
		return 0, sqlErr(err, "settle running steps")
	}
	n, err := res.RowsAffected()
	changed = n > 0
	return int(n), sqlErr(err, "settle running steps")
}

// SetStepMedia implements Store.
func (s *SQLite) SetStepMedia(ctx context.Context, stepID, before, after string) (err error) {
	defer s.track(&err, true)
	res, err := s.w.ExecContext(ctx, `
		UPDATE steps SET
			before_media = CASE WHEN ? = '' THEN before_media ELSE ? END,
			after_media = CASE WHEN ? = '' THEN after_media ELSE ? END
		WHERE id = ?`, before, before, after, after, stepID)
	if err != nil {
		return sqlErr(err, "step %q: media", stepID)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = ErrNotFound
		}
		return fmt.Errorf("step %q: %w", stepID, err)
	}
	return nil
}

// CountSteps implements Store.
func (s *SQLite) CountSteps(ctx context.Context, taskID string) (int, error) {
	var n int
	if taskID == "" {
		err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM steps`).Scan(&n)
		return n, sqlErr(err, "count steps")
	}
	var ok bool
	err := s.r.QueryRowContext(ctx, `
		SELECT EXISTS (SELECT 1 FROM tasks WHERE id = ?),
			(SELECT count(*) FROM steps WHERE task_id = ?)`, taskID, taskID).Scan(&ok, &n)
	if err != nil {
		return 0, sqlErr(err, "task %q: count steps", taskID)
	}
	if !ok {
		return 0, fmt.Errorf("task %q: %w", taskID, ErrNotFound)
	}
	return n, nil
}

// AddMedia implements Store.
func (s *SQLite) AddMedia(ctx context.Context, m Media) (err error) {
	defer s.track(&err, true)
	if err := checkMedia(m); err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO media (id, task_id, step_id, kind, path, width, height, bytes, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		m.ID, m.TaskID, null(m.StepID), m.Kind, m.Path, m.Width, m.Height, m.Bytes,
		millis(m.CreatedAt))
	return sqlErr(err, "media %q", m.ID)
}

// Media implements Store.
func (s *SQLite) Media(ctx context.Context, id string) (Media, error) {
	m := Media{ID: id}
	var step sql.NullString
	var created sql.NullInt64
	err := s.r.QueryRowContext(ctx, `
		SELECT task_id, step_id, kind, path, width, height, bytes, created_at
		FROM media WHERE id = ?`, id).
		Scan(&m.TaskID, &step, &m.Kind, &m.Path, &m.Width, &m.Height, &m.Bytes, &created)
	if err != nil {
		return Media{}, sqlErr(err, "media %q", id)
	}
	m.StepID, m.CreatedAt = step.String, fromMillis(created)
	return m, nil
}

// UpsertApproval implements Store.
func (s *SQLite) UpsertApproval(ctx context.Context, a Approval) (err error) {
	defer s.track(&err, true)
	if err := checkApproval(a); err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO approvals (id, task_id, step_id, tool, args, commit_kind, rule, target, status,
			created_at, decided_at, decided_by, reason, for_task, summary, counterpart)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET
			task_id = excluded.task_id, step_id = excluded.step_id, tool = excluded.tool,
			args = excluded.args, commit_kind = excluded.commit_kind, rule = excluded.rule,
			target = excluded.target, status = excluded.status,
			created_at = coalesce(created_at, excluded.created_at),
			decided_at = excluded.decided_at, decided_by = excluded.decided_by,
			reason = excluded.reason, for_task = excluded.for_task, summary = excluded.summary,
			counterpart = excluded.counterpart`,
		a.ID, a.TaskID, null(a.StepID), a.Tool, a.Args, a.Commit, a.Rule, a.Target, a.Status,
		millis(a.CreatedAt), millis(a.DecidedAt), a.DecidedBy, a.Reason, a.ForTask, a.Summary, a.Counterpart)
	return sqlErr(err, "approval %q (task %q)", a.ID, a.TaskID)
}

// Approvals implements Store.
func (s *SQLite) Approvals(ctx context.Context, taskID string) ([]Approval, error) {
	// One read transaction, so that "no such task" and the list agree.
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return nil, sqlErr(err, "task %q: approvals", taskID)
	}
	defer tx.Rollback()
	var one int
	if err := tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, taskID).Scan(&one); err != nil {
		return nil, sqlErr(err, "task %q", taskID)
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT a.id, a.task_id, a.step_id, a.tool, a.args, a.commit_kind, a.rule, a.target, a.status,
			a.created_at, a.decided_at, a.decided_by, a.reason, a.for_task, a.summary, a.counterpart, coalesce(m.id, '')
		FROM approvals a LEFT JOIN media m ON m.id = 'approval-' || a.id
		WHERE a.task_id = ? ORDER BY a.created_at, a.id`, taskID)
	if err != nil {
		return nil, sqlErr(err, "task %q: approvals", taskID)
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		var a Approval
		var step sql.NullString
		var created, decided sql.NullInt64
		if err := rows.Scan(&a.ID, &a.TaskID, &step, &a.Tool, &a.Args, &a.Commit, &a.Rule, &a.Target,
			&a.Status, &created, &decided, &a.DecidedBy, &a.Reason, &a.ForTask, &a.Summary, &a.Counterpart, &a.Screenshot); err != nil {
			return nil, sqlErr(err, "task %q: approvals", taskID)
		}
		a.StepID = step.String
		a.CreatedAt, a.DecidedAt = fromMillis(created), fromMillis(decided)
		out = append(out, a)
	}
	return out, sqlErr(rows.Err(), "task %q: approvals", taskID)
}

// PutRecording implements Store.
func (s *SQLite) PutRecording(ctx context.Context, r Recording) (err error) {
	defer s.track(&err, true)
	if err := checkRecording(r); err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, `
		INSERT INTO recordings (task_id, path, codec, width, height, started_at, duration_ms,
			bytes, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (task_id) DO UPDATE SET
			path = excluded.path, codec = excluded.codec, width = excluded.width,
			height = excluded.height, started_at = excluded.started_at,
			duration_ms = excluded.duration_ms, bytes = excluded.bytes,
			updated_at = excluded.updated_at`,
		r.TaskID, r.Path, r.Codec, r.Width, r.Height, millis(r.StartedAt),
		r.Duration.Milliseconds(), r.Bytes, millis(r.UpdatedAt))
	return sqlErr(err, "recording of task %q", r.TaskID)
}

// Recording implements Store.
func (s *SQLite) Recording(ctx context.Context, taskID string) (Recording, error) {
	r := Recording{TaskID: taskID}
	var started, updated sql.NullInt64
	var dur int64
	err := s.r.QueryRowContext(ctx, `
		SELECT path, codec, width, height, started_at, duration_ms, bytes, updated_at
		FROM recordings WHERE task_id = ?`, taskID).
		Scan(&r.Path, &r.Codec, &r.Width, &r.Height, &started, &dur, &r.Bytes, &updated)
	if err != nil {
		return Recording{}, sqlErr(err, "recording of task %q", taskID)
	}
	r.StartedAt, r.UpdatedAt = fromMillis(started), fromMillis(updated)
	r.Duration = time.Duration(dur) * time.Millisecond
	return r, nil
}

// Prune implements Store.
func (s *SQLite) Prune(ctx context.Context, before time.Time) (_ Pruned, err error) {
	changed := false
	defer func() { s.track(&err, changed) }()
	if err := checkAt("prune", "*", before); err != nil {
		return Pruned{}, err
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return Pruned{}, sqlErr(err, "prune")
	}
	defer tx.Rollback()
	// The doomed tasks go into a temporary table first, so that every
	// statement below works on the same set, and each is a plain join.
	if _, err := tx.ExecContext(ctx, `
		CREATE TEMP TABLE IF NOT EXISTS prune_tasks (id TEXT PRIMARY KEY);
		DELETE FROM temp.prune_tasks;`); err != nil {
		return Pruned{}, sqlErr(err, "prune")
	}
	beforeMS := before.UnixMilli()
	res, err := tx.ExecContext(ctx, `
		INSERT INTO temp.prune_tasks SELECT id FROM tasks
		WHERE ended_at IS NOT NULL AND ended_at < ?`, beforeMS)
	if err != nil {
		return Pruned{}, sqlErr(err, "prune: select tasks")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return Pruned{}, sqlErr(err, "prune: select tasks")
	}
	p := Pruned{Tasks: int(n)}
	if p.Files.Media, err = column(ctx, tx, `
		SELECT DISTINCT path FROM media
		WHERE task_id IN (SELECT id FROM temp.prune_tasks) ORDER BY path`); err != nil {
		return Pruned{}, sqlErr(err, "prune: media paths")
	}
	if p.Files.Recordings, err = column(ctx, tx, `
		SELECT DISTINCT path FROM recordings
		WHERE task_id IN (SELECT id FROM temp.prune_tasks) ORDER BY path`); err != nil {
		return Pruned{}, sqlErr(err, "prune: recording paths")
	}
	// Deleted children first, as the foreign keys require. A row of a task
	// that stays but names a step of a pruned task (which the gateway does
	// not write) loses that reference rather than stopping retention.
	for _, st := range []struct {
		sql   string
		args  []any
		count *int
	}{
		{`UPDATE approvals SET step_id = NULL
			WHERE task_id NOT IN (SELECT id FROM temp.prune_tasks)
			AND step_id IN (SELECT s.id FROM steps s JOIN temp.prune_tasks p ON s.task_id = p.id)`, nil, nil},
		{`UPDATE media SET step_id = NULL
			WHERE task_id NOT IN (SELECT id FROM temp.prune_tasks)
			AND step_id IN (SELECT s.id FROM steps s JOIN temp.prune_tasks p ON s.task_id = p.id)`, nil, nil},
		{`DELETE FROM approvals WHERE task_id IN (SELECT id FROM temp.prune_tasks)`, nil, &p.Approvals},
		{`DELETE FROM media WHERE task_id IN (SELECT id FROM temp.prune_tasks)`, nil, &p.Media},
		{`DELETE FROM recordings WHERE task_id IN (SELECT id FROM temp.prune_tasks)`, nil, &p.Recordings},
		{`DELETE FROM steps WHERE task_id IN (SELECT id FROM temp.prune_tasks)`, nil, &p.Steps},
		{`DELETE FROM tasks WHERE id IN (SELECT id FROM temp.prune_tasks)`, nil, nil},
		{`DELETE FROM sessions WHERE ended_at IS NOT NULL AND ended_at < ?
			AND NOT EXISTS (SELECT 1 FROM tasks WHERE session_id = sessions.id)`,
			[]any{beforeMS}, &p.Sessions},
		{`DELETE FROM temp.prune_tasks`, nil, nil},
	} {
		res, err := tx.ExecContext(ctx, st.sql, st.args...)
		if err != nil {
			return Pruned{}, sqlErr(err, "prune")
		}
		if st.count != nil {
			n, err := res.RowsAffected()
			if err != nil {
				return Pruned{}, sqlErr(err, "prune")
			}
			*st.count = int(n)
		}
	}
	if err := tx.Commit(); err != nil {
		return Pruned{}, sqlErr(err, "prune: commit")
	}
	changed = p.Tasks+p.Sessions > 0
	return p, nil
}

// NamedFiles implements Store.
func (s *SQLite) NamedFiles(ctx context.Context, f Files) (Files, error) {
	// One read transaction, so that both lists come from one snapshot.
	tx, err := s.r.BeginTx(ctx, nil)
	if err != nil {
		return Files{}, sqlErr(err, "named files")
	}
	defer tx.Rollback()
	var out Files
	if out.Media, err = named(ctx, tx, `SELECT DISTINCT path FROM media WHERE path IN `, f.Media); err != nil {
		return Files{}, sqlErr(err, "named media files")
	}
	if out.Recordings, err = named(ctx, tx, `SELECT DISTINCT path FROM recordings WHERE path IN `, f.Recordings); err != nil {
		return Files{}, sqlErr(err, "named recording files")
	}
	return out, nil
}

// named runs query, which ends in "IN ", on paths in batches, and returns
// the paths it selects, sorted.
func named(ctx context.Context, tx *sql.Tx, query string, paths []string) ([]string, error) {
	const batch = 500 // well under SQLite's limit of bound parameters
	var out []string
	for len(paths) > 0 {
		chunk := paths[:min(batch, len(paths))]
		paths = paths[len(chunk):]
		args := make([]any, len(chunk))
		for i, p := range chunk {
			args[i] = p
		}
		got, err := column(ctx, tx, query+"("+placeholders(len(chunk))+")", args...)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func placeholders(n int) string {
	b := make([]byte, 0, 2*n)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '?')
	}
	return string(b)
}

// column returns the one text column of a query's rows.
func column(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Health implements Store.
func (s *SQLite) Health() Health { return s.health.get() }

// track records a write's outcome in the store's Health, and makes a write
// that failed because the file cannot be written a *WriteError saying why.
// changed says whether a write that worked changed the file: one that
// changed nothing wrote nothing, and proves nothing about the disk.
func (s *SQLite) track(err *error, changed bool) {
	f, isSQLite := sqliteFailureOf(*err)
	switch {
	case *err == nil:
		if changed {
			s.health.worked()
		}
	case neutral(*err) || !isSQLite:
	default:
		cause, fix := diagnose(f, s.path)
		s.health.failed(cause, fix, *err)
		*err = &WriteError{Cause: cause, Err: *err}
	}
}

// diagnose says why SQLite could not write the database at path (cause,
// without the path, for agents and people alike) and what the person does
// about it (fix).
func diagnose(se sqliteFailure, path string) (cause, fix string) {
	dir := filepath.Dir(path)
	errno := se.errno
	switch {
	case se.code == sqliteFull || errno == syscall.ENOSPC || errno == syscall.EDQUOT:
		cause, fix = "the disk is full", fmt.Sprintf("free space on the disk that holds %s; writes resume by themselves", dir)
	case errno == syscall.EFBIG:
		cause, fix = "a file size limit was reached", "raise the file size limit the daemon runs with (ulimit -f), or free space; writes resume by themselves"
	case errno == syscall.EROFS:
		cause, fix = "the file system is read-only", fmt.Sprintf("make the file system that holds %s writable, then restart the daemon", dir)
	case se.code == sqliteReadonly:
		// SQLite opened the file read-only: it was not writable when the
		// daemon started.
		cause, fix = "the database file is read-only", fmt.Sprintf("make %s writable for the daemon's user (lsattr shows an immutable one; chattr -i clears it), then restart the daemon", path)
	case errno == syscall.EPERM || errno == syscall.EACCES || se.code == sqlitePerm:
		cause, fix = "the database file is not writable", fmt.Sprintf("make %s and %s-wal writable for the daemon's user (lsattr shows an immutable one; chattr -i clears it); writes resume by themselves", path, path)
	case se.code == sqliteCorrupt || se.code == sqliteNotADB:
		cause, fix = "the database is damaged", "stop the daemon, "+damagedFix(path)
	case se.code == sqliteBusy || se.code == sqliteLocked:
		cause, fix = "another program holds the database locked", fmt.Sprintf("close the program that has %s open", path)
	case se.code == sqliteNomem:
		cause, fix = "the computer is out of memory", "close programs to free memory"
	case se.code == sqliteIOErr:
		cause, fix = "the disk reports an input/output error", fmt.Sprintf("check the disk that holds %s", dir)
	default:
		cause, fix = "SQLite refused the write: "+se.text, fmt.Sprintf("check %s and the daemon's log", path)
	}
	if errno != 0 {
		cause += " (" + errno.Error() + ")"
	}
	return cause, fix
}

// sqlErr wraps err with context, mapping what SQLite reports to the
// package's errors. It returns nil for a nil err.
func sqlErr(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	if f, ok := sqliteFailureOf(err); ok {
		switch f.extended {
		case sqliteConstraintPrimaryKey, sqliteConstraintUnique:
			return fmt.Errorf("%s: %w", what, ErrExists)
		case sqliteConstraintForeignKey:
			return fmt.Errorf("%s: an id it refers to: %w", what, ErrNotFound)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

// millis is a time as stored: UTC unix milliseconds, NULL when zero.
func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func fromMillis(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64).UTC()
}

// null stores an empty reference as NULL, which foreign keys let through.
func null(id string) any {
	if id == "" {
		return nil
	}
	return id
}

func appsJSON(apps []string) (string, error) {
	if len(apps) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(apps)
	return string(b), err
}
