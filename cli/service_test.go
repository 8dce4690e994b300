package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestServiceInstall: on Linux, pinky service install writes the user
// unit, stops the daemon that runs for the data folder so the service's
// can take it, and asks systemd to enable and start it; status and
// uninstall follow. systemctl is a recording stand-in on PATH: the test
// machine has no user manager.
func TestServiceInstall(t *testing.T) {
	e := newEnv(t)
	bin, cfg := t.TempDir(), t.TempDir()
	calls := filepath.Join(t.TempDir(), "calls")
	fake := "#!/bin/sh\necho \"$@\" >> " + calls + "\ncase \"$*\" in *is-active*) echo active ;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "systemctl"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	e.Extra = append(e.Extra, "PATH="+bin+":/usr/bin:/bin", "XDG_CONFIG_HOME="+cfg)
	e.Daemon("--console", "off")

	out, errs, code := e.Run("service", "install", "--console", "off", "--auto-unlock")
	if code != 0 {
		t.Fatalf("pinky service install: exit %d\n%s%s", code, out, errs)
	}
	unit := filepath.Join(cfg, "systemd", "user", "pinky.service")
	text, err := os.ReadFile(unit)
	if err != nil {
		t.Fatalf("the unit: %v\n%s", err, out)
	}
	if !strings.Contains(string(text), " daemon --console off --auto-unlock\n") || !strings.Contains(string(text), "PINKY_HOME="+e.Home) {
		t.Errorf("the unit does not run the daemon with the flags and the data folder:\n%s", text)
	}
	if !strings.Contains(out, "stopped the daemon that ran") {
		t.Errorf("install did not say it stopped the running daemon:\n%s", out)
	}
	if _, _, code := e.Run("status"); code == 0 {
		t.Errorf("the daemon that ran still answers after install")
	}
	got, _ := os.ReadFile(calls)
	if want := "--user daemon-reload\n--user enable --now pinky.service\n"; string(got) != want {
		t.Errorf("systemctl calls %q; want %q", got, want)
	}

	out, _, code = e.Run("service", "status")
	if code != 1 || !strings.Contains(out, "installed ("+unit+"), active") || !strings.Contains(out, "daemon:  not running") {
		t.Errorf("service status with no daemon answering: exit %d\n%s", code, out)
	}
	if out, errs, code := e.Run("service", "install", "--print"); code != 0 || !strings.HasPrefix(out, "# Written by `pinky service install`") {
		t.Errorf("install --print: exit %d %q %q", code, out, errs)
	}

	if out, errs, code := e.Run("service", "uninstall"); code != 0 || !strings.Contains(out, "removed "+unit) {
		t.Errorf("uninstall: exit %d %q %q", code, out, errs)
	}
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Errorf("the unit is still there after uninstall: %v", err)
	}
	got, _ = os.ReadFile(calls)
	if !strings.HasSuffix(string(got), "--user disable --now pinky.service\n--user daemon-reload\n") {
		t.Errorf("systemctl calls after uninstall %q", got)
	}
	if out, _, code := e.Run("service", "status"); code != 0 || !strings.Contains(out, "not installed") {
		t.Errorf("status after uninstall: exit %d %q", code, out)
	}
}

// TestDaemonHomeFlag: `pinky daemon --home DIR` serves DIR whatever
// PINKY_HOME says, as the Windows scheduled task needs.
func TestDaemonHomeFlag(t *testing.T) {
	served, other := newEnv(t), newEnv(t)
	d := other.Cmd("daemon", "--home", served.Home, "--console", "off", "--sim")
	var logs e2e.Buffer
	d.Stderr = &logs
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Process.Signal(os.Interrupt)
		d.Wait()
		if t.Failed() {
			t.Logf("daemon log:\n%s", logs.String())
		}
	})
	served.Eventually("the daemon answers on the --home folder", func() bool { _, _, code := served.Run("status"); return code == 0 })
	if _, _, code := other.Run("status"); code == 0 {
		t.Error("the daemon also answers on PINKY_HOME's folder")
	}
}

// TestServiceHistory: --history reaches the service's file when it holds
// no password; a URL with one (in its user part or its query) is refused,
// so that the password is not written in the clear.
func TestServiceHistory(t *testing.T) {
	e := newEnv(t)
	e.Extra = append(e.Extra, "XDG_CONFIG_HOME="+t.TempDir())
	out, errs, code := e.Run("service", "install", "--print", "--history", "postgres://pinky@127.0.0.1:5432/pinky")
	if code != 0 || !strings.Contains(out, "--history postgres://pinky@127.0.0.1:5432/pinky") {
		t.Errorf("install --print --history: exit %d\n%s%s", code, out, errs)
	}
	for _, u := range []string{"postgres://pinky:s3cret@127.0.0.1/pinky", "postgresql://127.0.0.1/pinky?password=s3cret", "mysql://x"} {
		out, errs, code := e.Run("service", "install", "--print", "--history", u)
		if code == 0 || strings.Contains(out+errs, "s3cret") || !strings.Contains(errs, "--history") {
			t.Errorf("install --history %q: exit %d; want refused without echoing the password\n%s%s", u, code, out, errs)
		}
	}
}
