package cli_test

import (
	"testing"

	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// TestKillDaemonDuringLoadPostgres is TestKillDaemonDuringLoad with the
// history in PostgreSQL (pinky daemon --history postgres://…), as issue 18
// asks: ten agents act through pinky mcp, the daemon dies by SIGKILL in the
// middle, and the next daemon on the same database has every step an agent
// was answered for, once, with the tasks ended as with SQLite.
func TestKillDaemonDuringLoadPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("10 agents and a kill -9")
	}
	killDaemonDuringLoad(t, pgtest.New(t))
}
