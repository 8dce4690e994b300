//go:build unix

package cli_test

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// TestFarmTwoGateways: two gateways on one PostgreSQL database, through
// the real binaries, reach one phone host's phone (the host links to both,
// paired with each). Two agents, one on each gateway, race for the phone
// round after round: one wins each round, the other is told the phone is
// held. A gateway killed while it holds the lease keeps it until it is due,
// and then the other gateway takes the phone with a higher fence. A gateway
// paused while it holds the lease finds it lost when it wakes: nothing it
// sends reaches the phone.
func TestFarmTwoGateways(t *testing.T) {
	db := pgtest.New(t)
	const idle = "4s"
	gws := [2]*farm{
		newFarm(t, "127.0.0.2", db, "--lease-idle", idle),
		newFarm(t, "127.0.0.3", db, "--lease-idle", idle),
	}
	closet := newEnv(t)
	// One host, paired with each gateway under the same name, so that its
	// phone has one id, and one lease row, on both.
	codeA, codeB := gws[0].pair(t, "closet"), gws[1].pair(t, "closet")
	host := runHost(t, closet, "--gateway", gws[0].addr, "--gateway", gws[1].addr, "--pair", codeB, "--pair", codeA)
	for _, g := range gws {
		g.online(t, "sim-android-1", "closet")
	}
	if r := doctorCheck(t, closet, "phone host identity"); !r.OK || !strings.Contains(r.Detail, "paired as closet") {
		t.Errorf("doctor on the host: %+v", r)
	}
	gws[0].gw.Unlock("sim-android-1")
	dev := e2e.OnDevice("sim-android-1")

	agents := [2]*e2e.Host{gws[0].gw.StdioHost(), gws[1].gw.StdioHost()}
	for _, a := range agents {
		a.Initialize()
	}
	// The race: both connect at once, round after round.
	won := [2]int{}
	for round := range 4 {
		ids := [2]int{}
		for i, a := range agents {
			ids[i] = a.Request("tools/call", map[string]any{"name": "phone_connect", "arguments": dev("task", "round")})
		}
		var winner []int
		for i, a := range agents {
			r := a.Response(ids[i], time.Minute)
			text := resultText(r)
			if res, _ := r["result"].(map[string]any); res["isError"] != true {
				winner = append(winner, i)
			} else if !strings.HasPrefix(text, "lease_held:") {
				t.Fatalf("round %d: gateway %d's agent: %q; want it connected or told lease_held", round, i, text)
			}
		}
		if len(winner) != 1 {
			t.Fatalf("round %d: %d agents hold the phone; want exactly one", round, len(winner))
		}
		w := winner[0]
		won[w]++
		agents[w].OK("phone_tap", dev("text", "Notes"), "")
		agents[1-w].Fails("phone_tap", dev("text", "Notes"), "lease_held")
		agents[w].OK("phone_release", dev(), "")
	}
	t.Logf("rounds won by gateway: %v", won)

	// Gateway A holds the phone and is killed: the lease holds until it
	// is due (idle), then B's agent takes the phone with a higher fence.
	agents[0].OK("phone_connect", dev("task", "before the crash"), "")
	first := lease(t, gws[1], "sim-android-1")
	if first.Fence == 0 {
		t.Fatalf("the lease seen from the other gateway: %+v; want its fence", first)
	}
	if err := gws[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	gws[0].cmd.Wait()
	agents[0].Close()
	gws[1].gw.EventuallyOr("the dead gateway's lease due and taken", func() bool {
		text, isErr := agents[1].Tool("phone_connect", dev("task", "after the crash"))
		if isErr && !strings.HasPrefix(text, "lease_held:") {
			t.Fatalf("connecting while the dead gateway's lease holds: %q", text)
		}
		return !isErr
	}, func() string { return gws[1].log.String() })
	second := lease(t, gws[1], "sim-android-1")
	if second.Fence <= first.Fence || second.Task != "after the crash" {
		t.Fatalf("the lease taken over: %+v, after %+v; want a higher fence", second, first)
	}
	agents[1].OK("phone_tap", dev("text", "Notes"), "")

	// A comes back on the same database: its new agent finds the phone
	// held by B's.
	gws[0].start()
	gws[0].online(t, "sim-android-1", "closet")
	agents[0] = gws[0].gw.StdioHost()
	agents[0].Initialize()
	agents[0].Fails("phone_connect", dev("task", "too late"), "lease_held")
	// A's task ended (B ended it when its lease was due); A's start left
	// B's task running.
	tasks := map[string]api.Task{}
	var ts []api.Task
	gws[1].gw.JSON(&ts, "history")
	for _, tk := range ts {
		tasks[tk.Text] = tk
	}
	if tk := tasks["before the crash"]; tk.EndedAt.IsZero() || tk.Outcome == "" {
		t.Errorf("A's task of its killed run: %+v; want it ended", tk)
	}
	if tk := tasks["after the crash"]; tk.ID == "" || !tk.EndedAt.IsZero() {
		t.Errorf("B's task while A started again: %+v; want it still open", tk)
	}
	agents[1].OK("phone_tap", dev("text", "Notes"), "")

	// B is paused while it holds the lease, past the idle time: A ends
	// B's lease when it is due and takes the phone, acting with a higher
	// fence, which the host keeps. B wakes: its agent's next action is
	// refused, and nothing of it reaches the phone.
	if err := gws[1].cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	gws[0].gw.EventuallyOr("the paused gateway's lease due and taken", func() bool {
		_, isErr := agents[0].Tool("phone_connect", dev("task", "while B sleeps"))
		return !isErr
	}, func() string { return gws[0].log.String() })
	third := lease(t, gws[0], "sim-android-1")
	if third.Fence <= second.Fence {
		t.Fatalf("the lease taken from the paused gateway: %+v, after %+v", third, second)
	}
	agents[0].OK("phone_tap", dev("text", "Notes"), "")
	if err := gws[1].cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	text, isErr := agents[1].Tool("phone_tap", dev("x", 540, "y", 1200))
	if !isErr || !(strings.HasPrefix(text, "lease_lost:") || strings.HasPrefix(text, "lease_held:")) {
		t.Fatalf("the woken gateway's agent taps: error=%v %q; want lease_held (the table refused) or lease_lost (the host did)", isErr, text)
	}
	if l := lease(t, gws[0], "sim-android-1"); l.Fence != third.Fence || l.Task != "while B sleeps" {
		t.Fatalf("the lease after B woke: %+v; want A's, untouched", l)
	}
	_ = host
}

// lease is the lease of device that gateway f's status lists.
func lease(t *testing.T, f *farm, device string) api.Lease {
	t.Helper()
	var st api.Status
	f.gw.JSON(&st, "status")
	for _, l := range st.Leases {
		if l.Device == device {
			return l
		}
	}
	t.Fatalf("gateway on %s lists no lease of %s: %+v", f.addr, device, st.Leases)
	return api.Lease{}
}
