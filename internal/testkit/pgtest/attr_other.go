//go:build !linux

package pgtest

import (
	"errors"
	"os"
	"syscall"
)

// procAttr is how initdb and postgres run: as the caller, who must not be
// root (initdb refuses it; only Linux runs them as the postgres user).
func procAttr(dir string) (*syscall.SysProcAttr, error) {
	if os.Getuid() == 0 {
		return nil, errors.New("run the tests as a user other than root: initdb refuses root")
	}
	return nil, nil
}
