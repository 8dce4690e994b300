// Package home locates Pinky's data folder ($PINKY_HOME) and runtime folder,
// holds the lock that keeps one daemon per data folder, and keeps the
// bearer token file that agents on other hosts present (token.go).
package home

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Dirs are the folders of one Pinky installation.
type Dirs struct {
	Home    string // $PINKY_HOME: history, media, drivers/, logs/
	Runtime string // the local socket's folder
}

// Resolve finds the folders from the environment: $PINKY_HOME, else the
// platform's data folder; $XDG_RUNTIME_DIR/pinky, else the data folder.
func Resolve() (Dirs, error) {
	h := os.Getenv("PINKY_HOME")
	if h == "" {
		base, err := defaultBase()
		if err != nil {
			return Dirs{}, err
		}
		h = base
	}
	h, err := filepath.Abs(h)
	if err != nil {
		return Dirs{}, fmt.Errorf("PINKY_HOME: %w", err)
	}
	d := Dirs{Home: h, Runtime: h}
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); xdg != "" && os.Getenv("PINKY_HOME") == "" {
		d.Runtime = filepath.Join(xdg, "pinky")
	}
	return d, nil
}

func defaultBase() (string, error) {
	u, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no PINKY_HOME and no home folder: %w", err)
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(u, "Library", "Application Support", "Pinky"), nil
	case "windows":
		if l := os.Getenv("LOCALAPPDATA"); l != "" {
			return filepath.Join(l, "Pinky"), nil
		}
		return filepath.Join(u, "AppData", "Local", "Pinky"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "pinky"), nil
	}
	return filepath.Join(u, ".local", "share", "pinky"), nil
}

// Socket is the path of the daemon's local socket.
func (d Dirs) Socket() string { return filepath.Join(d.Runtime, "pinky.sock") }

// MCPSocket is the path of the socket that `pinky mcp` bridges agents to.
func (d Dirs) MCPSocket() string { return filepath.Join(d.Runtime, "mcp.sock") }

// Token is the path of the bearer token that agents present over MCP over
// HTTP (`pinky token`).
func (d Dirs) Token() string { return filepath.Join(d.Home, "token") }

// Database is the path of the history database.
func (d Dirs) Database() string { return filepath.Join(d.Home, "history.db") }

// Media is the folder of screenshots and recordings.
func (d Dirs) Media() string { return filepath.Join(d.Home, "media") }

// Drivers is the folder searched for third-party drivers.
func (d Dirs) Drivers() string { return filepath.Join(d.Home, "drivers") }

// Logs is the folder of the daemon's log files.
func (d Dirs) Logs() string { return filepath.Join(d.Home, "logs") }

// Files holds each phone's files on the computer, in a folder per device.
func (d Dirs) Files() string { return filepath.Join(d.Home, "files") }

// Recordings holds the tasks' screen recordings, <task>.mp4.
func (d Dirs) Recordings() string { return filepath.Join(d.Home, "recordings") }

// Settings is the person's settings file (package settings).
func (d Dirs) Settings() string { return filepath.Join(d.Home, "settings.json") }

// Ensure creates the folders, private to the user (0700), and tightens the
// mode of folders that exist with a looser one.
func (d Dirs) Ensure() error {
	for _, dir := range []string{d.Home, d.Runtime} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return err
		}
	}
	return nil
}

// ErrLocked means another daemon holds the data folder.
var ErrLocked = errors.New("another pinky daemon is running on this data folder")

// Lock is the held daemon lock.
type Lock struct{ f *os.File }

// AcquireLock takes the daemon lock in d.Home, writing this process's pid in
// it. When another daemon holds it, the error wraps ErrLocked and names that
// daemon's pid. The lock is released when the process ends, however it ends.
func (d Dirs) AcquireLock() (*Lock, error) {
	path := filepath.Join(d.Home, "daemon.lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		pid := strings.TrimSpace(string(b))
		return nil, fmt.Errorf("%w (pid %s, PINKY_HOME %s): stop it with `pinky stop-daemon` or use another PINKY_HOME", ErrLocked, pid, d.Home)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
