// Package atomicfile replaces a file so that a reader sees either the old
// content or the new, never a mix, and a crash leaves one or the other.
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces the file at path with data, readable and writable by its
// owner only: it writes a temporary file beside it, syncs it, and renames
// it over path.
func Write(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*") // mode 0600
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
