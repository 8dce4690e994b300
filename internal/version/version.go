// Package version says which build of Pinky is running: its version, the
// commit and commit time the Go toolchain recorded in the binary, and the
// Go version that built it. `make build` and `make dist` stamp Version
// from `git describe`; a binary from `go install …@vX.Y.Z` carries its
// module version; any other build says "dev".
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version, Commit and Date are stamped at build time (make build does):
//
//	go build -ldflags "-X github.com/pinky-gateway/pinky/internal/version.Version=v0.3.0 …" …
//
// Commit and Date are the git commit and its commit time; without them
// the toolchain's record of the work tree (-buildvcs) is used, when there
// is one.
var Version, Commit, Date = "", "", ""

// Info is what a build knows of itself.
type Info struct {
	Version string `json:"version"`
	// Commit is the git commit the binary was built from, and Date its
	// commit time (RFC 3339); Modified says the work tree had changes.
	Commit   string `json:"commit,omitempty"`
	Date     string `json:"date,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

// Get returns this binary's Info.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	in := get(Version, bi)
	if Commit != "" {
		in.Commit, in.Modified = strings.TrimSuffix(Commit, "-dirty"), strings.HasSuffix(Commit, "-dirty")
		in.Date = Date
	}
	return in
}

func get(stamped string, bi *debug.BuildInfo) Info {
	in := Info{Version: stamped, Go: runtime.Version()}
	if bi != nil {
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				in.Commit = s.Value
			case "vcs.time":
				in.Date = s.Value
			case "vcs.modified":
				in.Modified = s.Value == "true"
			}
		}
	}
	if in.Version == "" {
		in.Version = "dev"
	}
	return in
}

// String is the one line `pinky --version` prints after the program's
// name: "v0.3.0 (commit 1a2b3c4d5e6f, 2026-12-01T10:00:00Z, go1.26.0)".
func (in Info) String() string {
	var more []string
	if in.Commit != "" {
		c := in.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if in.Modified {
			c += "+changes"
		}
		more = append(more, "commit "+c)
	}
	if in.Date != "" {
		more = append(more, in.Date)
	}
	more = append(more, in.Go)
	return fmt.Sprintf("%s (%s)", in.Version, strings.Join(more, ", "))
}
