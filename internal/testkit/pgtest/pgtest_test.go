package pgtest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m).Run()) }

// TestNew checks that each test gets a database of its own that it can
// write, and that another test's tables are not in it.
func TestNew(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.New(t), pgtest.New(t)
	if a == b {
		t.Fatalf("two databases with one URL %s", a)
	}
	ca, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ca.Close(ctx)
	if _, err := ca.Exec(ctx, `CREATE TABLE t (v int); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := ca.QueryRow(ctx, `SELECT v FROM t`).Scan(&v); err != nil || v != 7 {
		t.Errorf("got %d, %v; want 7", v, err)
	}
	cb, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	var n int
	if err := cb.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 't'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("the second database has %d tables named t (%v); want 0", n, err)
	}
}
