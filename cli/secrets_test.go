package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestSecretsNeverLeave runs the virtual phone's flows that show one-time
// codes (the Authenticator, unblocked for the test) and a password field,
// then searches every MCP response, the database, the media files and the
// daemon's log for the codes and the password: zero occurrences.
func TestSecretsNeverLeave(t *testing.T) {
	e := newEnv(t)
	policy := `blocked_categories: [wallets, password_managers]
unblocked_apps: [com.pinky.sim.bank, com.google.android.apps.authenticator2]
rules:
  - name: default
    decision: allow
  - name: ask before committing
    commit: any
    decision: ask
`
	if err := os.WriteFile(filepath.Join(e.Home, "policy.yaml"), []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	// The default world, with the Bank's one-time code already in the
	// notifications (the Bank sends it after a sign-in, which needs the
	// person to type the password).
	world, err := os.ReadFile("../drivers/sim/worlds/default.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const ben = `      - {app: messages, title: Ben, text: "Did you get the tickets?"}`
	if !bytes.Contains(world, []byte(ben)) {
		t.Fatalf("the default world no longer has %q; update the test", ben)
	}
	world = bytes.Replace(world, []byte(ben), []byte(ben+"\n"+`      - {app: bank, title: Bank, text: "Your code is 482913"}`), 1)
	worldPath := filepath.Join(t.TempDir(), "world.yaml")
	if err := os.WriteFile(worldPath, world, 0o600); err != nil {
		t.Fatal(err)
	}
	h := e.StdioHost("PINKY_SIM=1", "PINKY_SIM_WORLD="+worldPath)
	h.Initialize()
	e.Unlock("sim-android-1")
	const password = "hunter2-Secret!"
	dev := map[string]any{"device": "sim-android-1"}
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", "check my sign-in codes"), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Bank"), "Sign in")
	h.OK("phone_type", with("field", "Username", "text", "ana"), "ana")
	h.Fails("phone_type", with("field", "Password", "text", password), "credentials")
	h.OK("phone_launch", with("app", "Authenticator"), "Authenticator")
	h.OK("phone_observe", with("full", true, "screenshot", true), "Google")
	h.OK("phone_notifications", dev, "Your code is ••••••")
	h.OK("phone_release", dev, "")

	// The codes, as the phone shows them, read with the person's tool.
	var raw struct{ Elements []struct{ Text string } }
	out, errs, code := e.Run("driver", "screen", "sim-android-1", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &raw) != nil {
		t.Fatalf("driver screen: %s", errs)
	}
	var secrets []string
	for _, el := range raw.Elements {
		if len(el.Text) == 7 && el.Text[3] == ' ' {
			secrets = append(secrets, el.Text, strings.ReplaceAll(el.Text, " ", ""))
		}
	}
	if len(secrets) < 4 {
		t.Fatalf("found %d code forms on the Authenticator screen; the test needs the codes", len(secrets))
	}
	secrets = append(secrets, password, "482913")
	if _, errs, code := e.Run("stop-daemon"); code != 0 {
		t.Fatalf("stop-daemon: %s", errs)
	}

	// Every MCP response.
	responses, _ := json.Marshal(h.Lines())
	check := func(where string, data []byte) {
		for _, s := range secrets {
			if bytes.Contains(data, []byte(s)) {
				t.Errorf("%s holds the secret %q", where, s)
			}
		}
	}
	check("the MCP responses", responses)
	// Every file of the data folder: the database (and its WAL), media, logs, policy.
	files := 0
	filepath.Walk(e.Home, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		files++
		check(strings.TrimPrefix(path, e.Home), data)
		return nil
	})
	if files < 3 {
		t.Errorf("searched only %d files; want the database, the log and media", files)
	}
	// The screenshot the agent got is covered where the codes are: it is
	// a JPEG, so the check above cannot read it; its presence is checked.
	if !bytes.Contains(responses, []byte(`"image/jpeg"`)) {
		t.Error("no screenshot came back")
	}
}
