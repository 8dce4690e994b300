package home

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestLockRefusesASecondDaemon(t *testing.T) {
	d := Dirs{Home: t.TempDir()}
	l, err := d.AcquireLock()
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.AcquireLock()
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Errorf("second lock: got %v; want ErrLocked naming pid %d", err, os.Getpid())
	}
	l.Release()
	l2, err := d.AcquireLock()
	if err != nil {
		t.Errorf("after release: %v", err)
	}
	l2.Release()
}
