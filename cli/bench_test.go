package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
)

// paces are the gaps between two timed calls. An agent thinks for seconds
// between calls, so "paced" leaves a gap in which the background work of a
// step (its screenshot) ends before the next call, as it would; with
// "back-to-back" the next call competes with it for the CPUs, which is the
// gateway's throughput rather than its latency.
var paces = []struct {
	name string
	gap  time.Duration
}{{"paced", 50 * time.Millisecond}, {"back-to-back", 0}}

// BenchmarkGatewayOverhead measures what the gateway adds to a tool call:
// the time from the MCP client's send to its receive through a real
// `pinky mcp` and daemon, minus the time the driver itself takes for the
// same driver calls, made as the gateway makes them (through a plugin
// process of the same sim binary and world, over go-plugin's gRPC). So the
// overhead is the bridge, the daemon's MCP server, leases, the screen model
// and diff, and the step committed to the history before the answer.
//
// phone_observe makes one Screen call; phone_key makes Act, WaitIdle (the
// settle wait; the launcher never animates, so it answers at once) and
// Screen. Each sub-benchmark times max(b.N, 300) calls one by one after a
// warm-up, paced and back-to-back (see paces), and reports the medians and
// p99s in µs (ns/op is the tool's median): us-p50-overhead is the
// tool's median minus the driver's median, us-p99-overhead the tool's p99
// minus the driver's median (the tail is the gateway's to answer for).
func BenchmarkGatewayOverhead(b *testing.B) {
	home, err := os.MkdirTemp("", "ph") // short: the socket lives here
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(home) })
	world := tenPhones(b)
	benchDaemon(b, home, world)
	agent := startMCPAgent(b, home, "bench-agent")
	const device = "sim-1"
	if res, err := agent.call("phone_connect", map[string]any{"device": device, "task": "measure the gateway"}); err != nil || res.IsError {
		b.Fatalf("phone_connect: %v %v", err, res)
	}

	p, err := sdk.Start(sdk.StartConfig{Path: e2e.Bin.Sim, Env: []string{"PINKY_SIM_WORLD=" + world}})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Kill()
	drv := p.Driver()

	calls := []struct {
		name   string
		tool   string
		args   map[string]any
		driver func(ctx context.Context) error
	}{
		{"observe", "phone_observe", map[string]any{"device": device}, func(ctx context.Context) error {
			_, err := drv.Screen(ctx, device, 0)
			return err
		}},
		// An action reads the screen just before it (it is judged and aimed
		// on the screen as it is then), acts, waits for idle, and reads.
		{"key", "phone_key", map[string]any{"device": device, "key": "back"}, func(ctx context.Context) error {
			if _, err := drv.Screen(ctx, device, 0); err != nil {
				return err
			}
			if _, err := drv.Act(ctx, device, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack}); err != nil {
				return err
			}
			if _, err := drv.WaitIdle(ctx, device, 3*time.Second); err != nil {
				return err
			}
			_, err := drv.Screen(ctx, device, 0)
			return err
		}},
	}
	for _, c := range calls {
		for _, pace := range paces {
			b.Run(c.name+"/"+pace.name, func(b *testing.B) {
				tool := func() error {
					res, err := agent.call(c.tool, c.args)
					if err == nil && res.IsError {
						b.Fatalf("%s: %s", c.tool, mcpText(res))
					}
					return err
				}
				driver := func() error { return c.driver(context.Background()) }
				n := max(b.N, 300)
				latencies(b, tool, 30, pace.gap)
				toolLat := latencies(b, tool, n, pace.gap)
				latencies(b, driver, 30, pace.gap)
				drvLat := latencies(b, driver, n, pace.gap)
				p50, p99 := quantile(toolLat, 0.5), quantile(toolLat, 0.99)
				d50 := quantile(drvLat, 0.5)
				b.ReportMetric(float64(p50.Nanoseconds()), "ns/op")
				b.ReportMetric(us(p50), "us-p50")
				b.ReportMetric(us(p99), "us-p99")
				b.ReportMetric(us(d50), "us-p50-driver")
				b.ReportMetric(us(quantile(drvLat, 0.99)), "us-p99-driver")
				b.ReportMetric(us(p50-d50), "us-p50-overhead")
				b.ReportMetric(us(p99-d50), "us-p99-overhead")
			})
		}
	}
	// The screenshot the gateway takes in the background after every
	// successful step, for the history: not part of a call's latency, but
	// CPU that the next call shares.
	b.Run("step-screenshot", func(b *testing.B) {
		shot := func() error {
			_, err := drv.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: device, Format: sdk.FormatJPEG, MaxSide: 1280, Quality: 70})
			return err
		}
		lat := latencies(b, shot, max(b.N, 50), paces[0].gap)
		b.ReportMetric(float64(quantile(lat, 0.5).Nanoseconds()), "ns/op")
		b.ReportMetric(us(quantile(lat, 0.5)), "us-p50-driver")
	})
}

// latencies times n calls of f one by one, gap apart, and returns them
// sorted.
func latencies(b *testing.B, f func() error, n int, gap time.Duration) []time.Duration {
	b.Helper()
	lat := make([]time.Duration, n)
	for i := range lat {
		time.Sleep(gap)
		t0 := time.Now()
		if err := f(); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	slices.Sort(lat)
	return lat
}

// quantile returns the q-quantile of sorted latencies.
func quantile(sorted []time.Duration, q float64) time.Duration {
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*q))]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// benchDaemon starts `pinky daemon --sim` on the world for the data folder
// home, and waits until it lists the phones; it is stopped when b ends.
func benchDaemon(b *testing.B, home, world string) {
	b.Helper()
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command(e2e.Bin.Pinky, args...)
		c.Env = append(os.Environ(), "PINKY_HOME="+home, "XDG_RUNTIME_DIR=", "PATH=/usr/bin:/bin")
		return c
	}
	d := cmd("daemon", "--sim", "--sim-world", world)
	if err := d.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		d.Process.Signal(syscall.SIGTERM)
		d.Wait()
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var devs []api.Device
		out, err := cmd("devices", "--json").Output()
		if err == nil && json.Unmarshal(out, &devs) == nil && len(devs) > 0 && devs[0].Online {
			return
		}
		if time.Now().After(deadline) {
			b.Fatal("the daemon did not list its phones within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
