package driverhost

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Prefix starts the file name of every driver executable: pinky-driver-<name>.
const Prefix = "pinky-driver-"

// Where a candidate was found.
const (
	SourcePin    = "pin"     // Config.Pins
	SourceExeDir = "exe-dir" // next to the pinky binary
	SourceHome   = "home"    // $PINKY_HOME/drivers
	SourcePath   = "path"    // a folder on PATH
)

// Candidate is a driver executable found by Discover.
type Candidate struct {
	Name   string // the part after "pinky-driver-"
	Path   string // absolute when the search folder was
	Source string // SourcePin, SourceExeDir, SourceHome or SourcePath
}

// Discover lists the drivers cfg can start, sorted by name. It looks, in
// this order, in cfg.ExeDir, in cfg.Home/drivers and in each folder of
// cfg.Path; the first executable found for a name wins. A name in cfg.Pins
// uses that path instead of the search, and a name in cfg.Disabled is left
// out. Directories, non-executable files and names with characters other
// than letters, digits, '-' and '_' are skipped; missing folders are not an
// error. The error reports pins that do not name an executable file; the
// other candidates are returned with it.
func Discover(cfg Config) ([]Candidate, error) {
	found := map[string]Candidate{}
	var errs []error
	for name, path := range cfg.Pins {
		if cfg.Disabled[name] {
			continue
		}
		if !validName(name) {
			errs = append(errs, fmt.Errorf("pinned driver %q: invalid name", name))
			continue
		}
		if err := checkExecutable(path); err != nil {
			errs = append(errs, fmt.Errorf("pinned driver %q: %w", name, err))
			found[name] = Candidate{} // a bad pin hides the name from the search
			continue
		}
		found[name] = Candidate{Name: name, Path: path, Source: SourcePin}
	}
	type dir struct{ path, source string }
	var dirs []dir
	if cfg.ExeDir != "" {
		dirs = append(dirs, dir{cfg.ExeDir, SourceExeDir})
	}
	if cfg.Home != "" {
		dirs = append(dirs, dir{filepath.Join(cfg.Home, "drivers"), SourceHome})
	}
	for _, p := range filepath.SplitList(cfg.Path) {
		if p == "" {
			continue // an empty PATH entry means ".", which a daemon must not search
		}
		dirs = append(dirs, dir{p, SourcePath})
	}
	for _, d := range dirs {
		entries, err := os.ReadDir(d.path)
		if err != nil {
			continue // a missing or unreadable folder holds no drivers
		}
		for _, e := range entries { // ReadDir sorts by name, so the search is deterministic
			name, ok := driverName(e.Name(), runtime.GOOS)
			if !ok || cfg.Disabled[name] {
				continue
			}
			if _, ok := found[name]; ok {
				continue
			}
			path := filepath.Join(d.path, e.Name())
			if checkExecutable(path) != nil {
				continue
			}
			found[name] = Candidate{Name: name, Path: path, Source: d.source}
		}
	}
	var out []Candidate
	for _, c := range found {
		if c.Name != "" {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b Candidate) int { return strings.Compare(a.Name, b.Name) })
	return out, errors.Join(errs...)
}

// checkExecutable follows symbolic links, as exec does.
func checkExecutable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	if !executable(path, fi.Mode(), runtime.GOOS) {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// driverName is the driver's name in a file name of the search, if it is
// one: pinky-driver-NAME, or on Windows pinky-driver-NAME.exe.
func driverName(file, goos string) (string, bool) {
	name, ok := strings.CutPrefix(file, Prefix)
	if goos == "windows" {
		if ext := filepath.Ext(name); strings.EqualFold(ext, ".exe") {
			name = name[:len(name)-len(ext)]
		} else {
			return "", false
		}
	}
	if !ok || !validName(name) {
		return "", false
	}
	return name, true
}

// executable: a mode with an execute bit on Unix; on Windows, which keeps
// no such bit, a program's extension.
func executable(path string, mode os.FileMode, goos string) bool {
	if goos == "windows" {
		switch strings.ToLower(filepath.Ext(path)) {
		case ".exe", ".com", ".bat", ".cmd":
			return true
		}
		return false
	}
	return mode.Perm()&0o111 != 0
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}
