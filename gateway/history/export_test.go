package history

import "context"

// NewMediaWriterHook lets the tests slow the writer down.
var NewMediaWriterHook = newMediaWriter

// PostgresSetting reads a setting of a PostgreSQL store's connections.
func PostgresSetting(s *Postgres, name string) (string, error) {
	var v string
	err := s.pool.QueryRow(context.Background(), "SELECT current_setting($1)", name).Scan(&v)
	return v, err
}
