package driverhost

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSettings(t *testing.T) {
	home := t.TempDir()
	if s, err := LoadSettings(home); err != nil || s != nil {
		t.Fatalf("no file: %v, %v; want no settings", s, err)
	}
	write := func(text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(home, SettingsFile), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	if s, err := LoadSettings(home); err != nil || len(s) != 0 {
		t.Errorf("empty file: %v, %v", s, err)
	}
	write(`
android:
  env: {SCRCPY_SERVER_PATH: /opt/scrcpy-server, SCRCPY_SERVER_VERSION: "3.3"}
sim:
  enabled: true
  args: [--adb-device, x]
ios:
  enabled: false
`)
	s, err := LoadSettings(home)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Disabled: map[string]bool{"sim": true}}
	cfg.Apply(s)
	if cfg.Disabled["sim"] || !cfg.Disabled["ios"] {
		t.Errorf("Disabled = %v; want sim on, ios off", cfg.Disabled)
	}
	if want := []string{"SCRCPY_SERVER_PATH=/opt/scrcpy-server", "SCRCPY_SERVER_VERSION=3.3"}; !slices.Equal(cfg.Env["android"], want) {
		t.Errorf("android env = %v; want %v", cfg.Env["android"], want)
	}
	if !slices.Equal(cfg.Args["sim"], []string{"--adb-device", "x"}) {
		t.Errorf("sim args = %v", cfg.Args["sim"])
	}
	for _, bad := range []string{"sim: {enabeld: true}\n", "bad/name: {}\n", "x: {env: {\"A B\": c}}\n", "sim: [\n"} {
		write(bad)
		if _, err := LoadSettings(home); err == nil || !strings.Contains(err.Error(), SettingsFile) {
			t.Errorf("%q: %v; want an error naming the file", bad, err)
		}
	}
}
