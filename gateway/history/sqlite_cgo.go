//go:build cgo

package history

import (
	"errors"

	"github.com/mattn/go-sqlite3"
)

// sqliteFailureOf reads what SQLite reported from err, when err is SQLite's.
func sqliteFailureOf(err error) (sqliteFailure, bool) {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return sqliteFailure{}, false
	}
	return sqliteFailure{code: int(se.Code), extended: int(se.ExtendedCode), errno: se.SystemErrno, text: se.Code.Error()}, true
}
