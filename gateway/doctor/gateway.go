package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strings"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// MinFree is the free space below which the data folder is a problem: the
// history, the recordings and the media grow there.
const MinFree = 1 << 30

// DataFolder checks the data folder at path from its Lstat (fi, err): a
// folder private to the user (0700). One not made yet is fine: the daemon
// makes it. checkMode is false where modes mean nothing (Windows).
func DataFolder(path string, fi fs.FileInfo, err error, checkMode bool) Result {
	const name = "data folder"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ok(name, path+" is not made yet: `pinky daemon` makes it, private to you")
	case err != nil:
		return problem(name, fmt.Sprintf("%s cannot be read: %v", path, err), "check PINKY_HOME, or give the folder back to your user")
	case !fi.IsDir():
		return problem(name, path+" is not a folder", "point PINKY_HOME at a folder, or move the file away")
	case checkMode && fi.Mode().Perm()&0o077 != 0:
		return problem(name, fmt.Sprintf("%s has mode %04o: other users may read the history and the token", path, fi.Mode().Perm()),
			"run `chmod 700 "+path+"` (the daemon also does at its start)")
	}
	return ok(name, path+", private to you")
}

// FreeSpace checks the free bytes of the data folder's file system, as
// measured (err when it could not be).
func FreeSpace(path string, free uint64, err error) Result {
	const name = "free space"
	if err != nil {
		return ok(name, fmt.Sprintf("not measured here (%v)", err))
	}
	if free < MinFree {
		return problem(name, fmt.Sprintf("only %s free for %s: the history stops being written when the disk is full", size(free), path),
			"free some space, or move PINKY_HOME to a disk with more")
	}
	return ok(name, size(free)+" free")
}

func size(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Token checks the token file at path from its Stat (fi, statErr) and from
// reading it (readErr, as home.ReadToken refuses an unsafe file). checkMode
// is false where modes mean nothing (Windows: readErr then says what the
// file's access list lets others do).
func Token(path string, fi fs.FileInfo, statErr, readErr error, checkMode bool) Result {
	const name = "token file"
	switch {
	case errors.Is(statErr, fs.ErrNotExist):
		return ok(name, "none yet: it is made when MCP over HTTP is first on, or by `pinky token`")
	case statErr != nil:
		return problem(name, fmt.Sprintf("%s cannot be read: %v", path, statErr), "run `pinky token --rotate` for a new token")
	case checkMode && fi.Mode().IsRegular() && fi.Mode().Perm()&0o077 != 0:
		return problem(name, fmt.Sprintf("%s has mode %04o: other users may read the token, and the daemon refuses it", path, fi.Mode().Perm()),
			"run `chmod 600 "+path+"`, or `pinky token --rotate` for a new token if it may have leaked")
	case readErr != nil:
		return problem(name, readErr.Error(), "run `pinky token --rotate` for a new token")
	}
	return ok(name, path+", private to you")
}

// Policy checks the policy: err is what loading policy.yaml (and apps.yaml)
// gave; its text names the file. None yet is fine: the daemon writes the
// default.
func Policy(path string, err error) Result {
	const name = "policy"
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ok(name, "none yet: the daemon writes the default policy at its first start")
	case err != nil:
		return problem(name, err.Error(), "correct the file it names (`pinky policy check` checks it again), or move it away for the default policy")
	}
	return ok(name, path+" is valid")
}

// DriverSettings checks drivers.yaml at path: err is what loading it gave.
func DriverSettings(path string, err error) Result {
	const name = "drivers.yaml"
	if err != nil {
		return problem(name, err.Error(), "correct "+path+": each driver takes enabled, env and args")
	}
	return ok(name, "valid, or none")
}

// Keychain checks the OS keychain: err is what reading an entry that does
// not exist gave, with the keychain's "not found" already taken as nil.
func Keychain(goos string, err error) Result {
	const name = "keychain"
	if err == nil {
		return ok(name, "reachable: phone PINs saved with `pinky pin` can unlock phones")
	}
	fix := "needed only to save phone PINs for automatic unlock: "
	switch goos {
	case "linux":
		fix += "run a Secret Service in your session (GNOME Keyring or KeePassXC) with its D-Bus session bus"
	case "darwin":
		fix += "unlock your login keychain (Keychain Access)"
	case "windows":
		fix += "use the Credential Manager of your own account"
	default:
		fix += "this system has no keychain Pinky can use"
	}
	return problem(name, fmt.Sprintf("not reachable: %v", err), fix)
}

// Daemon checks the daemon: st is its status when err is nil. No daemon
// is fine: `pinky mcp` starts one.
func Daemon(st api.Status, err error) Result {
	const name = "daemon"
	switch {
	case errors.Is(err, api.ErrNoDaemon):
		return ok(name, "not running: an agent's `pinky mcp` starts one, or run `pinky daemon`")
	case err != nil:
		return problem(name, fmt.Sprintf("does not answer: %v", err), "stop it with `pinky stop-daemon` and start it again")
	}
	return ok(name, fmt.Sprintf("running, pid %d, version %s", st.Pid, st.Version))
}

// Listeners checks the daemon's console and MCP over HTTP: each address it
// serves must answer dial; History says whether the history is written.
func Listeners(st api.Status, dial func(addr string) error) []Result {
	var out []Result
	for _, l := range []struct{ name, addr, flag string }{
		{"console", st.Console, "--console"},
		{"MCP over HTTP", st.HTTP, "--http"},
	} {
		if l.addr == "" {
			out = append(out, ok(l.name, "off (`pinky daemon "+l.flag+" 127.0.0.1:PORT` turns it on)"))
			continue
		}
		if err := dial(l.addr); err != nil {
			out = append(out, problem(l.name, fmt.Sprintf("%s does not answer: %v", l.addr, err),
				"restart the daemon; check that no firewall or other program holds the port"))
			continue
		}
		detail := "serves http://" + l.addr
		if host, _, err := net.SplitHostPort(l.addr); err == nil {
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				detail += ", reachable from other computers"
			}
		}
		out = append(out, ok(l.name, detail))
	}
	if h := st.History; !h.Writable {
		out = append(out, problem("history", fmt.Sprintf("%s cannot be written: %s", h.Path, h.Cause), h.Fix))
	} else {
		out = append(out, ok("history", h.Path+" is written"))
	}
	return out
}

// Found checks the drivers found: found and err are what
// driverhost.Discover gave, searched the folders it looked in, and off the
// drivers found there that the settings, the flags or the environment turn
// off.
func Found(found []driverhost.Candidate, off []string, err error, searched []string) []Result {
	const name = "drivers found"
	var out []Result
	if len(found) == 0 && len(off) > 0 {
		out = append(out, problem(name, "every driver found is turned off: "+strings.Join(off, ", "),
			"turn one on: pinky daemon --enable-driver NAME, `enabled: true` under its name in drivers.yaml, or leave it out of PINKY_DISABLE_DRIVERS"))
	} else if len(found) == 0 {
		out = append(out, problem(name, "no pinky-driver-* in "+strings.Join(searched, ", "),
			"put pinky-driver-android and pinky-driver-ios next to pinky (release archives have them), or a driver in PINKY_HOME/drivers"))
	} else {
		var names []string
		for _, c := range found {
			if c.Path == "" {
				names = append(names, c.Name+" (attached)")
				continue
			}
			names = append(names, c.Name+" ("+filepath.Clean(c.Path)+")")
		}
		out = append(out, ok(name, strings.Join(names, ", ")))
	}
	if err != nil {
		out = append(out, problem("drivers search", err.Error(), "correct the path the driver is pinned to, or remove the pin"))
	}
	return out
}
