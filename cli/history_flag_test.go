package cli_test

import (
	"strings"
	"testing"
)

// TestDaemonHistoryFlag checks that pinky daemon refuses a --history that
// is not a PostgreSQL URL before it starts, saying what it wants, without
// the password the value held.
func TestDaemonHistoryFlag(t *testing.T) {
	for _, v := range []string{"mysql://pinky:s3cret@db/history", "history.db"} {
		_, errs, code := newEnv(t).Run("daemon", "--history", v)
		if code == 0 || !strings.Contains(errs, "postgres://") || strings.Contains(errs, "s3cret") {
			t.Errorf("daemon --history %s: exit %d, %q; want a refusal that names postgres:// and not the password", v, code, errs)
		}
	}
}
