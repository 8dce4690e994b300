package version

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGet(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tt := range []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    Info
		line    string
	}{
		{"no build info", "", nil, Info{Version: "dev", Go: runtime.Version()}, "dev (" + runtime.Version() + ")"},
		{"a work tree build", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs},
			Info{Version: "dev", Commit: "1a2b3c4d5e6f7a8b9c0d", Date: "2026-12-01T10:00:00Z", Modified: true, Go: runtime.Version()},
			"dev (commit 1a2b3c4d5e6f+changes, 2026-12-01T10:00:00Z, " + runtime.Version() + ")"},
		{"stamped by make", "v0.3.0-4-g1a2b3c4", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs[:2]},
			Info{Version: "v0.3.0-4-g1a2b3c4", Commit: "1a2b3c4d5e6f7a8b9c0d", Date: "2026-12-01T10:00:00Z", Go: runtime.Version()},
			"v0.3.0-4-g1a2b3c4 (commit 1a2b3c4d5e6f, 2026-12-01T10:00:00Z, " + runtime.Version() + ")"},
		{"go install @v0.3.0", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}},
			Info{Version: "v0.3.0", Go: runtime.Version()}, "v0.3.0 (" + runtime.Version() + ")"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := get(tt.stamped, tt.bi)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("get (-want +got):\n%s", d)
			}
			if s := got.String(); s != tt.line {
				t.Errorf("String: %q; want %q", s, tt.line)
			}
		})
	}
}
