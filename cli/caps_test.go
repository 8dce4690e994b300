package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestPhoneLacks: a virtual phone whose world entry lacks capabilities
// (testdata/lacks.yaml), through the real daemon, the sim driver's process
// and pinky mcp. pinky devices says per phone what it lacks and how to get
// it (JSON has it all), pinky doctor has an ok check that names it with the
// fix, and an agent that asks for what the phone lacks gets unsupported
// with the reason and the fix, while phone_observe still works.
func TestPhoneLacks(t *testing.T) {
	e := newEnv(t)
	world, err := filepath.Abs(filepath.Join("testdata", "lacks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	e.Daemon("--sim", "--sim-world", world)
	var phone api.Device
	e.Eventually("sim-lacks is online", func() bool {
		var devs []api.Device
		e.JSON(&devs, "devices")
		for _, d := range devs {
			if d.ID == "sim-lacks" && d.Online {
				phone = d
				return true
			}
		}
		return false
	})

	want := map[string]api.MissingCap{
		"video":    {Capability: "video", Reason: "no scrcpy server was found on this machine", Fix: "install scrcpy 3.x"},
		"apps":     {Capability: "apps", Reason: "the app list is turned off on this phone", Fix: "turn on Settings > Apps > Share the list"},
		"displays": {Capability: "displays", Reason: "background displays need the scrcpy server"},
	}
	got := map[string]api.MissingCap{}
	for _, m := range phone.Missing {
		got[m.Capability] = m
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pinky devices --json: what sim-lacks lacks (-want +got):\n%s", d)
	}

	out, errs, code := e.Run("devices")
	if code != 0 {
		t.Fatalf("pinky devices: exit %d: %s", code, errs)
	}
	for _, line := range []string{
		"sim-lacks lacks video: no scrcpy server was found on this machine; to enable it: install scrcpy 3.x\n",
		"sim-lacks lacks apps: the app list is turned off on this phone; to enable it: turn on Settings > Apps > Share the list\n",
		"sim-lacks lacks displays: background displays need the scrcpy server\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("pinky devices: got\n%s\nwant the line %q", out, line)
		}
	}

	by, _, _ := doctor(t, e)
	r, ok := by["phone sim-lacks: capabilities"]
	if !ok || !r.OK || !strings.Contains(r.Detail, "no video (no scrcpy server was found on this machine): to enable it, install scrcpy 3.x") ||
		!strings.Contains(r.Detail, "no displays (background displays need the scrcpy server)") {
		t.Errorf("pinky doctor: phone sim-lacks: capabilities: got %+v (found %v); want ok, naming what it lacks with the fix", r, ok)
	}
	if r := by["phone sim-lacks"]; !r.OK {
		t.Errorf("pinky doctor: phone sim-lacks: got %+v; want ok (it works without what it lacks)", r)
	}

	h := e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice("sim-lacks")
	h.OK("phone_connect", dev("task", "check the apps"), "Settings")
	text := h.Fails("phone_apps", dev(), "unsupported")
	for _, w := range []string{"sim-lacks cannot list its apps: the app list is turned off on this phone",
		"The person can enable it: turn on Settings > Apps > Share the list", "phone_ask_person"} {
		if !strings.Contains(text, w) {
			t.Errorf("phone_apps: got %q; want it to say %q", text, w)
		}
	}
	if r := h.Call("phone_observe", dev("screenshot", true)); r.IsError || r.Images != 1 {
		t.Errorf("phone_observe with a screenshot on a phone without video: got error=%v, %d images %q; want one image", r.IsError, r.Images, r.Text)
	}
}
