package history

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// A migration is one numbered schema change.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded migrations, which must be numbered 1, 2,
// 3… without gaps: migrations/0001_init.sql, migrations/0002_safety.sql…
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", base)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d", m.name, m.version, i+1)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this binary writes: the number of its
// last migration.
func SchemaVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		panic("history: " + err.Error()) // a build mistake, caught by the tests
	}
	return len(ms)
}

// migrate brings the database to the latest schema, one transaction per
// migration, or refuses a database newer than the binary. db must be the
// write connection: its transactions begin IMMEDIATE, so two processes
// opening the same new file at once apply each migration once.
func migrate(ctx context.Context, db *sql.DB, ms []migration) error {
	for {
		done, err := migrateOne(ctx, db, ms)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next migration, if any, and reports whether the
// schema is now current.
func migrateOne(ctx context.Context, db *sql.DB, ms []migration) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("read schema version: %w", err)
	}
	if v > len(ms) {
		return false, fmt.Errorf("%w: version %d, this pinky knows up to %d; "+
			"run a newer pinky, or move the file away to start a new history",
			ErrSchemaTooNew, v, len(ms))
	}
	if v == len(ms) {
		return true, tx.Rollback()
	}
	m := ms[v]
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return false, fmt.Errorf("migration %s: %w", m.name, err)
	}
	// PRAGMA takes no parameters; m.version is an int we formatted.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return false, fmt.Errorf("migration %s: set version: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %s: commit: %w", m.name, err)
	}
	return m.version == len(ms), nil
}
