package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/pinky-gateway/pinky/gateway/history"
)

// openTimeout bounds connecting to a PostgreSQL history and migrating it.
const openTimeout = 30 * time.Second

// checkHistory refuses a Config.History that names no store Pinky has.
// Its error shows the value without a password.
func checkHistory(url string) error {
	if url == "" || history.IsPostgresURL(url) {
		return nil
	}
	return fmt.Errorf("--history %s: want a postgres:// or postgresql:// URL "+
		"(without --history, the history is SQLite in the data folder)", history.RedactURL(url))
}

// openHistory opens the history that cfg names: the SQLite file in the
// data folder, or the PostgreSQL database at cfg.History. It returns the
// store and its name for status: the file's path, or the URL without its
// password. A PostgreSQL history may be shared with other gateways: gateway
// (home's Dirs.GatewayID) is this one's, which its sessions and tasks
// carry, so that its start ends only its own last run's.
func openHistory(cfg Config, gateway string) (history.Store, string, error) {
	if cfg.History == "" {
		s, err := history.Open(cfg.Dirs.Database())
		if err != nil {
			return nil, "", err
		}
		return s, cfg.Dirs.Database(), nil
	}
	if err := checkHistory(cfg.History); err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	s, err := history.OpenPostgres(ctx, cfg.History, history.OwnedBy(gateway))
	if err != nil {
		return nil, "", err
	}
	return s, s.Name(), nil
}
