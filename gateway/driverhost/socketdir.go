package driverhost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// SocketDirEnv is the variable through which go-plugin tells a driver
// where to create its Unix socket.
const SocketDirEnv = "PLUGIN_UNIX_SOCKET_DIR"

// sockets gives each driver start a folder of its own for its Unix socket
// and removes it when the process ends.
//
// Without PLUGIN_UNIX_SOCKET_DIR a driver makes its socket in the system's
// temporary folder, and nothing removes it when the driver is killed: every
// kill -9 would leave one behind. So the host names the folder, removes it
// once the process is gone, whatever ended it, and at its first start
// removes the folders of hosts that are no longer running (a host that was
// itself killed). The folders of live hosts, other daemons of the same
// user included, are left alone: each folder's name starts with the pid of
// the host that made it.
type sockets struct {
	base string // Config.SocketDir or the default; "" when unusable

	once  sync.Once
	ready bool // base exists, is ours and private
}

// defaultSocketBase is the folder under which driver socket folders go
// when Config.SocketDir is empty: the user's runtime folder when there is
// one, else a folder of the user's own in the temporary folder. It is kept
// short, because a Unix socket's path is limited to about 104 bytes.
func defaultSocketBase() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "pinky-sock")
	}
	return filepath.Join(os.TempDir(), "pinky-sock-"+strconv.Itoa(os.Getuid()))
}

// prepareSockets makes the base folder (mode 0700) and removes the folders that
// hosts no longer running left in it. It runs once; a base that cannot be
// used makes the host fall back to go-plugin's own choice, with a warning.
func (h *Host) prepareSockets() bool {
	s := &h.socks
	s.once.Do(func() {
		if !socketDirSupported || s.base == "" {
			return
		}
		if err := privateDir(s.base); err != nil {
			h.log.Warn("driver socket folder unusable; drivers choose their own", "dir", s.base, "err", err)
			return
		}
		s.ready = true
		entries, err := os.ReadDir(s.base)
		if err != nil {
			return
		}
		for _, e := range entries {
			pid, ok := socketDirPid(e.Name())
			if !ok || pid == os.Getpid() || processAlive(pid) {
				continue
			}
			if err := os.RemoveAll(filepath.Join(s.base, e.Name())); err != nil {
				h.log.Warn("removing a driver socket folder left by an earlier host", "dir", e.Name(), "err", err)
			}
		}
	})
	return s.ready
}

// socketDir makes the folder for one driver start: "" when the host leaves
// the choice to the driver (an unusable base, or a system without Unix
// sockets).
func (h *Host) socketDir() string {
	if !h.prepareSockets() {
		return ""
	}
	dir, err := os.MkdirTemp(h.socks.base, strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		h.log.Warn("making a driver socket folder", "err", err)
		return ""
	}
	return dir // os.MkdirTemp makes it 0700
}

// removeSocketDir removes a driver start's folder once its process is gone.
func (h *Host) removeSocketDir(dir string) {
	if dir == "" {
		return
	}
	if err := os.RemoveAll(dir); err != nil {
		h.log.Warn("removing a driver socket folder", "dir", dir, "err", err)
	}
}

// socketDirPid is the pid of the host that made the folder named name.
func socketDirPid(name string) (int, bool) {
	p, _, ok := strings.Cut(name, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}

// privateDir makes dir with mode 0700 when it is missing, and checks that it
// is a folder (not a link to one) that only this user can enter: in a
// shared temporary folder, another user could have made it first.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New("not a folder")
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("mode %v: want 0700", fi.Mode().Perm())
	}
	return ownedByMe(fi)
}
