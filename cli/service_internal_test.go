package cli

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// TestSystemdUnit: the unit runs the daemon with the flags given, quoted
// so that systemd reads them back as they were, and systemd's own checker
// takes it.
func TestSystemdUnit(t *testing.T) {
	analyze := testdep.Need(t, "systemd-analyze")
	dir := filepath.Join(t.TempDir(), "a folder with spaces")
	exe := filepath.Join(dir, "pinky")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := serviceSpec{Exe: exe, Home: filepath.Join(dir, "home 100%"), Args: []string{"--http", "127.0.0.1:8765", "--console", "off", "--enable-driver", "x$y"}}
	text := systemdUnitText(spec)
	for _, want := range []string{
		`ExecStart="` + exe + `" daemon --http 127.0.0.1:8765 --console off --enable-driver x$$y`,
		`Environment="PINKY_HOME=` + dir + `/home 100%%"`,
		"Restart=on-failure", "WantedBy=default.target",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("unit lacks %q:\n%s", want, text)
		}
	}
	unit := filepath.Join(t.TempDir(), systemdUnit)
	if err := os.WriteFile(unit, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", unit).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s\n%s", err, out, text)
	}
}

// TestDeployedUnit: deploy/systemd/pinky.service, the unit a package
// installs, is the one pinky service install writes for /usr/bin/pinky.
func TestDeployedUnit(t *testing.T) {
	testkit.Golden(t, "../deploy/systemd/pinky.service", []byte(systemdUnitText(serviceSpec{Exe: "/usr/bin/pinky"})))
}

// TestLaunchdPlist: the launchd agent is a property list whose program
// arguments are the daemon's, with the data folder in its environment.
func TestLaunchdPlist(t *testing.T) {
	spec := serviceSpec{Exe: "/Applications/Pinky <1>/pinky", Home: "/Users/ana/Pinky & co", Args: []string{"--console", "off"}}
	text := launchdPlist(spec, "/Users/ana/Pinky & co/logs")
	d := xml.NewDecoder(strings.NewReader(text))
	d.Strict = true
	var strs []string
	var in string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case xml.StartElement:
			in = v.Name.Local
		case xml.CharData:
			if in == "string" && strings.TrimSpace(string(v)) != "" {
				strs = append(strs, string(v))
			}
		case xml.EndElement:
			in = ""
		}
	}
	want := []string{launchdLabel, spec.Exe, "daemon", "--console", "off", spec.Home, "/Users/ana/Pinky & co/logs/daemon.log"}
	if !reflect.DeepEqual(strs, want) {
		t.Errorf("plist strings %q; want %q\n%s", strs, want, text)
	}
}

func TestWindowsTask(t *testing.T) {
	got := windowsTaskArgs(serviceSpec{Exe: `C:\Program Files\Pinky\pinky.exe`, Args: []string{"--console", "off"}})
	want := []string{"/Create", "/F", "/TN", "Pinky", "/SC", "ONLOGON", "/RL", "LIMITED", "/TR", `"C:\Program Files\Pinky\pinky.exe" daemon --console off`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("schtasks %q; want %q", got, want)
	}
	// A scheduled task has no environment of its own: the data folder is a flag.
	got = windowsTaskArgs(serviceSpec{Exe: `C:\pinky.exe`, Home: `D:\My Data\Pinky`})
	if line := got[len(got)-1]; line != `C:\pinky.exe daemon --home "D:\My Data\Pinky"` {
		t.Errorf("schtasks /TR %q; want the data folder passed with --home", line)
	}
}
