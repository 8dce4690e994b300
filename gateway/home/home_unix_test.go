//go:build !windows

package home

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	for _, tt := range []struct {
		name              string
		env               map[string]string
		wantHome, wantRun string
	}{
		{"pinky home wins", map[string]string{"PINKY_HOME": "/p", "XDG_RUNTIME_DIR": "/run/user/1"}, "/p", "/p"},
		{"xdg runtime", map[string]string{"PINKY_HOME": "", "HOME": "/u", "XDG_DATA_HOME": "", "XDG_RUNTIME_DIR": "/run/user/1"}, "/u/.local/share/pinky", "/run/user/1/pinky"},
		{"no runtime dir", map[string]string{"PINKY_HOME": "", "HOME": "/u", "XDG_DATA_HOME": "/d", "XDG_RUNTIME_DIR": ""}, "/d/pinky", "/d/pinky"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			d, err := Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if d.Home != tt.wantHome || d.Runtime != tt.wantRun {
				t.Errorf("got %+v; want home %s runtime %s", d, tt.wantHome, tt.wantRun)
			}
		})
	}
}

func TestEnsureIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "h")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	d := Dirs{Home: dir, Runtime: filepath.Join(dir, "run")}
	if err := d.Ensure(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{d.Home, d.Runtime} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("%s: mode %o; want 700", p, got)
		}
	}
}
