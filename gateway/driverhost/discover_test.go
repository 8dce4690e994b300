package driverhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	exe := filepath.Join(root, "bin")
	home := filepath.Join(root, "home")
	p1 := filepath.Join(root, "p1")
	p2 := filepath.Join(root, "p2")
	file := func(path string, mode os.FileMode) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	file(filepath.Join(exe, "pinky-driver-android"), 0o755)
	file(filepath.Join(home, "drivers", "pinky-driver-android"), 0o755) // shadowed by exe
	file(filepath.Join(home, "drivers", "pinky-driver-ios"), 0o755)
	file(filepath.Join(p1, "pinky-driver-ios"), 0o755) // shadowed by home
	file(filepath.Join(p1, "pinky-driver-noexec"), 0o644)
	file(filepath.Join(p2, "pinky-driver-noexec"), 0o755) // the first executable wins
	file(filepath.Join(p1, "pinky-driver-sim"), 0o755)
	file(filepath.Join(p2, "pinky-driver-sim"), 0o755) // shadowed by p1
	file(filepath.Join(p2, "pinky-driver-bad.name"), 0o755)
	file(filepath.Join(p2, "pinky-driver-"), 0o755)
	file(filepath.Join(p2, "other-tool"), 0o755)
	if err := os.MkdirAll(filepath.Join(p1, "pinky-driver-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	pinned := file(filepath.Join(root, "custom", "my-android"), 0o755)
	notExec := file(filepath.Join(root, "custom", "plain"), 0o644)
	path := strings.Join([]string{p1, "", filepath.Join(root, "missing"), p2}, string(os.PathListSeparator))

	tests := []struct {
		name    string
		cfg     Config
		want    []Candidate
		wantErr string
	}{
		{
			name: "order and first wins",
			cfg:  Config{ExeDir: exe, Home: home, Path: path},
			want: []Candidate{
				{"android", filepath.Join(exe, "pinky-driver-android"), SourceExeDir},
				{"ios", filepath.Join(home, "drivers", "pinky-driver-ios"), SourceHome},
				{"noexec", filepath.Join(p2, "pinky-driver-noexec"), SourcePath},
				{"sim", filepath.Join(p1, "pinky-driver-sim"), SourcePath},
			},
		},
		{
			name: "no exe dir",
			cfg:  Config{Home: home},
			want: []Candidate{
				{"android", filepath.Join(home, "drivers", "pinky-driver-android"), SourceHome},
				{"ios", filepath.Join(home, "drivers", "pinky-driver-ios"), SourceHome},
			},
		},
		{
			name: "pin wins over search and adds a name",
			cfg:  Config{ExeDir: exe, Pins: map[string]string{"android": pinned, "extra": pinned}},
			want: []Candidate{
				{"android", pinned, SourcePin},
				{"extra", pinned, SourcePin},
			},
		},
		{
			name: "disabled",
			cfg: Config{ExeDir: exe, Home: home, Path: path,
				Disabled: map[string]bool{"android": true, "sim": true}, Pins: map[string]string{"sim": pinned}},
			want: []Candidate{
				{"ios", filepath.Join(home, "drivers", "pinky-driver-ios"), SourceHome},
				{"noexec", filepath.Join(p2, "pinky-driver-noexec"), SourcePath},
			},
		},
		{
			name:    "bad pin is an error and hides the name",
			cfg:     Config{ExeDir: exe, Pins: map[string]string{"android": notExec, "ios": filepath.Join(root, "nope")}},
			wantErr: "not executable",
		},
		{
			name: "nothing configured",
			cfg:  Config{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Discover(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v; want one containing %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("err = %v; want nil", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Discover (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultConfigDisabledFromEnv(t *testing.T) {
	t.Setenv("PINKY_DISABLE_DRIVERS", "android, ios,,")
	cfg := DefaultConfig(t.TempDir())
	if !cfg.Disabled["android"] || !cfg.Disabled["ios"] || len(cfg.Disabled) != 2 {
		t.Errorf("PINKY_DISABLE_DRIVERS=android, ios: Disabled = %v", cfg.Disabled)
	}
	t.Setenv("PINKY_DISABLE_DRIVERS", "")
	if cfg := DefaultConfig(t.TempDir()); len(cfg.Disabled) != 0 {
		t.Errorf("no PINKY_DISABLE_DRIVERS: Disabled = %v", cfg.Disabled)
	}
}

// TestDriverNamesOnEachSystem: the search reads pinky-driver-NAME on Unix
// and pinky-driver-NAME.exe on Windows, where no execute bit exists.
func TestDriverNamesOnEachSystem(t *testing.T) {
	for _, tt := range []struct {
		file, goos, name string
		ok               bool
	}{
		{"pinky-driver-sim", "linux", "sim", true},
		{"pinky-driver-sim.exe", "linux", "", false},
		{"pinky-driver-sim.exe", "windows", "sim", true},
		{"pinky-driver-Acme_2.EXE", "windows", "Acme_2", true},
		{"pinky-driver-sim", "windows", "", false},
		{"pinky-driver-.exe", "windows", "", false},
		{"pinky-driver-a.b.exe", "windows", "", false},
		{"other.exe", "windows", "", false},
	} {
		name, ok := driverName(tt.file, tt.goos)
		if name != tt.name || ok != tt.ok {
			t.Errorf("driverName(%q, %s) = %q, %v; want %q, %v", tt.file, tt.goos, name, ok, tt.name, tt.ok)
		}
	}
	for _, tt := range []struct {
		path, goos string
		mode       os.FileMode
		want       bool
	}{
		{"/x/pinky-driver-sim", "linux", 0o755, true},
		{"/x/pinky-driver-sim", "linux", 0o644, false},
		{`C:\x\pinky-driver-sim.exe`, "windows", 0o666, true},
		{`C:\x\pinky-driver-sim.txt`, "windows", 0o666, false},
	} {
		if got := executable(tt.path, tt.mode, tt.goos); got != tt.want {
			t.Errorf("executable(%s, %o, %s) = %v; want %v", tt.path, tt.mode, tt.goos, got, tt.want)
		}
	}
}
