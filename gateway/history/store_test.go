package history_test

import (
	"path/filepath"
	"testing"

	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/history/historytest"
)

func TestSQLite(t *testing.T) {
	historytest.Run(t, func(t *testing.T) history.Store {
		return openTemp(t)
	})
}

func TestMemory(t *testing.T) {
	historytest.Run(t, func(t *testing.T) history.Store {
		return history.NewMemory()
	})
}

// openTemp opens a new database in a temporary folder; the caller closes it.
func openTemp(t testing.TB) *history.SQLite {
	t.Helper()
	s, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestMemoryFaults(t *testing.T) {
	historytest.RunFaults(t, func(t *testing.T) historytest.Faulty {
		m := history.NewMemory()
		return historytest.Faulty{Store: m, Break: func(*testing.T) func() {
			m.FailWrites("the disk is full")
			return func() { m.FailWrites("") }
		}}
	})
}
