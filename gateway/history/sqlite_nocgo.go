//go:build !cgo

package history

// sqliteFailureOf has nothing to read without cgo: mattn/go-sqlite3 is
// built through cgo, and without it the store does not open at all. This
// file lets the package compile for a cross-check of the other systems
// (make test's GOOS=… go vet).
func sqliteFailureOf(error) (sqliteFailure, bool) { return sqliteFailure{}, false }
