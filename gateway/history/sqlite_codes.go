package history

import "syscall"

// sqliteFailure is what SQLite reported of a failure: its result code, its
// extended code, the operating system's errno when there was one, and its
// own words. sqliteFailureOf (sqlite_cgo.go) reads it from a driver error.
type sqliteFailure struct {
	code, extended int
	errno          syscall.Errno
	text           string
}

// SQLite's result codes that the store tells apart (sqlite3.h; they are
// part of SQLite's stable interface).
const (
	sqlitePerm     = 3
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteNomem    = 7
	sqliteReadonly = 8
	sqliteIOErr    = 10
	sqliteCorrupt  = 11
	sqliteFull     = 13
	sqliteNotADB   = 26

	sqliteConstraintForeignKey = 787  // SQLITE_CONSTRAINT | 3<<8
	sqliteConstraintPrimaryKey = 1555 // SQLITE_CONSTRAINT | 6<<8
	sqliteConstraintUnique     = 2067 // SQLITE_CONSTRAINT | 8<<8
)
