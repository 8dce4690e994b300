package driverhost

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost/testdata/fakedriver"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// benchTarget is a driver to measure in-process and through the host.
type benchTarget struct {
	name   string
	dir    string
	device string
	act    sdk.Action
	local  func(b *testing.B) sdk.Driver
}

func benchTargets(b *testing.B) []benchTarget {
	ts := []benchTarget{{
		name: "fake", dir: driverDir(b, "fake"), device: "fake-1",
		act:   sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 10, Y: 10}},
		local: func(*testing.B) sdk.Driver { return fakedriver.FromEnv("fake") },
	}}
	dir := b.TempDir()
	if err := os.Symlink(bin.sim, dir+"/"+Prefix+"sim"); err != nil {
		b.Fatal(err)
	}
	return append(ts, benchTarget{
		name: "sim", dir: dir, device: "sim-android-1",
		act:   sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyVolumeUp},
		local: func(b *testing.B) sdk.Driver { return simtest.New(b) },
	})
}

// BenchmarkRoundTrip measures Screen and Act on a driver in-process and
// through its plugin process; the plugin runs report the added cost per
// call as us/op-overhead.
func BenchmarkRoundTrip(b *testing.B) {
	for _, tgt := range benchTargets(b) {
		calls := map[string]func(ctx context.Context, d sdk.Driver) error{
			"screen": func(ctx context.Context, d sdk.Driver) error {
				_, err := d.Screen(ctx, tgt.device, 0)
				return err
			},
			"act": func(ctx context.Context, d sdk.Driver) error {
				_, err := d.Act(ctx, tgt.device, tgt.act)
				return err
			},
		}
		for _, call := range []string{"screen", "act"} {
			f := calls[call]
			// latencies times n calls one by one.
			latencies := func(d sdk.Driver, n int) []time.Duration {
				ctx := context.Background()
				lat := make([]time.Duration, n)
				for i := range lat {
					t0 := time.Now()
					if err := f(ctx, d); err != nil {
						b.Fatal(err)
					}
					lat[i] = time.Since(t0)
				}
				slices.Sort(lat)
				return lat
			}
			b.Run(tgt.name+"/"+call+"/inprocess", func(b *testing.B) {
				d := tgt.local(b)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if err := f(context.Background(), d); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(tgt.name+"/"+call+"/plugin", func(b *testing.B) {
				h := New(testConfig(tgt.dir))
				defer h.Stop()
				if err := h.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				d, err := h.Driver(tgt.name)
				if err != nil {
					b.Fatal(err)
				}
				local := latencies(tgt.local(b), max(b.N, 200))
				latencies(d, 20) // warm up the connection
				b.ReportAllocs()
				b.ResetTimer()
				remote := latencies(d, b.N)
				b.StopTimer()
				p50, p99 := remote[len(remote)/2], remote[len(remote)*99/100]
				b.ReportMetric(us(p50), "us-p50")
				b.ReportMetric(us(p99), "us-p99")
				b.ReportMetric(us(local[len(local)/2]), "us-p50-inprocess")
				b.ReportMetric(us(p50-local[len(local)/2]), "us-p50-overhead")
			})
		}
	}
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// BenchmarkCrashRecovery measures the time from SIGKILL of a driver to its
// devices being listed online again, with the default backoff: the first
// restart waits DefaultBackoff.Initial (100 ms), then the new process
// starts, handshakes and lists its devices.
func BenchmarkCrashRecovery(b *testing.B) {
	for _, tgt := range benchTargets(b) {
		b.Run(tgt.name, func(b *testing.B) {
			cfg := testConfig(tgt.dir)
			cfg.Backoff = DefaultBackoff
			cfg.Backoff.Stable = time.Millisecond // every run is stable: the backoff never grows
			h := New(cfg)
			defer h.Stop()
			if err := h.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			n := len(onlineDevices(h, tgt.name))
			events, cancel := h.Subscribe()
			defer cancel()
			b.ResetTimer()
			for range b.N {
				pid := status(h, tgt.name).Pid
				for len(events) > 0 {
					<-events
				}
				if err := testkit.Kill(pid); err != nil {
					b.Fatal(err)
				}
				online := 0
				timeout := time.After(10 * time.Second)
				for online < n {
					select {
					case ev := <-events:
						if ev.Kind == EventOnline || ev.Kind == EventAdded {
							online++
						}
					case <-timeout:
						b.Fatal("driver did not come back in 10 s")
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/recovery")
		})
	}
}

// BenchmarkIdleMemory reports the resident memory of an idle driver
// process, and the host's heap and goroutines per driver it runs (4
// drivers started, measured after they settle).
func BenchmarkIdleMemory(b *testing.B) {
	const n = 4
	for _, tgt := range benchTargets(b) {
		b.Run(tgt.name, func(b *testing.B) {
			exe, err := os.Readlink(tgt.dir + "/" + Prefix + tgt.name)
			if err != nil {
				b.Fatal(err)
			}
			dir := b.TempDir()
			for i := range n {
				if err := os.Symlink(exe, fmt.Sprintf("%s/%s%s%d", dir, Prefix, tgt.name, i)); err != nil {
					b.Fatal(err)
				}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			g0 := runtime.NumGoroutine()
			h := New(testConfig(dir))
			defer h.Stop()
			if err := h.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // let the drivers go idle
			runtime.GC()
			runtime.ReadMemStats(&after)
			g1 := runtime.NumGoroutine()
			rss := 0
			for _, s := range h.Drivers() {
				kb, err := vmRSS(s.Pid)
				if err != nil {
					b.Fatal(err)
				}
				rss += kb
			}
			b.ResetTimer()
			for range b.N { // the figures above are measured once
			}
			b.ReportMetric(float64(rss)/n, "KiB-RSS/driver")
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/1024/n, "KiB-host-heap/driver")
			b.ReportMetric(float64(g1-g0)/n, "goroutines/driver")
		})
	}
}
