package ios

import (
	"context"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/ios/wda"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
)

// The benchmarks run on the virtual iPhone over loopback HTTP; each has a
// twin that makes the same WDA calls straight through the WDA client, so
// that the difference is the driver's own cost per call (`make bench`
// prints it).

func benchRig(b *testing.B) (*rig, *Driver, *wda.Client) { return benchRigTimed(b, timing.Fast) }

// benchRigTimed is benchRig with the virtual iPhone's timing profile.
func benchRigTimed(b *testing.B, p timing.Profile) (*rig, *Driver, *wda.Client) {
	r := newRig(b, rigOpt{timing: p})
	d := r.unlocked(b)
	c, err := wda.New(r.phone.WDA)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close(context.Background()) })
	return r, d, c
}

// BenchmarkDriverObserve is one screen read through the driver: source, app in
// front and lock state, parsed and scaled to pixels.
func BenchmarkDriverObserve(b *testing.B) {
	_, d, _ := benchRig(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Screen(ctx, phoneID, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWDAObserve is the same three WDA calls, one after another,
// without the driver.
func BenchmarkWDAObserve(b *testing.B) {
	_, _, c := benchRig(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Source(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.ActiveApp(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Locked(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDriverTap is a tap through the driver on an empty part of the home
// screen (nothing opens).
func BenchmarkDriverTap(b *testing.B) {
	_, d, _ := benchRig(b)
	ctx := context.Background()
	a := sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 600, Y: 1500}}
	b.ResetTimer()
	for b.Loop() {
		if _, err := d.Act(ctx, phoneID, a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWDATap is the same tap straight through the WDA client.
func BenchmarkWDATap(b *testing.B) {
	_, _, c := benchRig(b)
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if err := c.Tap(ctx, 200, 500); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPhoneProfile is a screen read and a tap through the driver with
// the virtual iPhone answering at once (fast) and taking a real phone's time
// (phone, PINKY_SIM_TIMING=phone): what a read and a tap cost on a phone
// before the driver's own work.
func BenchmarkPhoneProfile(b *testing.B) {
	for _, p := range []timing.Profile{timing.Fast, timing.Phone} {
		b.Run(p.Name+"/observe", func(b *testing.B) {
			_, d, _ := benchRigTimed(b, p)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := d.Screen(ctx, phoneID, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(p.Name+"/tap", func(b *testing.B) {
			_, d, _ := benchRigTimed(b, p)
			ctx := context.Background()
			a := sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 600, Y: 1500}}
			b.ResetTimer()
			for b.Loop() {
				if _, err := d.Act(ctx, phoneID, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWDASettings is a screen read, a tap and a swipe through the
// driver with WebDriverAgent's settings as the driver sets them (tuned) and
// left at WDA's defaults (stock, Config.StockWDA), on both timing
// profiles: what the settings buy on a phone.
func BenchmarkWDASettings(b *testing.B) {
	for _, p := range []timing.Profile{timing.Fast, timing.Phone} {
		for _, stock := range []bool{true, false} {
			mode := "tuned"
			if stock {
				mode = "stock"
			}
			for _, op := range []struct {
				name string
				run  func(ctx context.Context, d *Driver) error
			}{
				{"observe", func(ctx context.Context, d *Driver) error { _, err := d.Screen(ctx, phoneID, 0); return err }},
				{"tap", func(ctx context.Context, d *Driver) error {
					_, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 600, Y: 1500}})
					return err
				}},
				{"swipe", func(ctx context.Context, d *Driver) error {
					_, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 600, Y: 1500},
						To: sdk.Point{X: 600, Y: 1400}, Duration: 100 * time.Millisecond})
					return err
				}},
			} {
				b.Run(p.Name+"/"+mode+"/"+op.name, func(b *testing.B) {
					r := newRig(b, rigOpt{timing: p, stock: stock})
					d := r.unlocked(b)
					ctx := context.Background()
					b.ResetTimer()
					for b.Loop() {
						if err := op.run(ctx, d); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkWDASourceAttributes is one /source straight through the WDA
// client with every attribute, with the driver's exclusions, and with
// visible excluded too (which the driver does not do): what each costs.
func BenchmarkWDASourceAttributes(b *testing.B) {
	for _, p := range []timing.Profile{timing.Fast, timing.Phone} {
		for _, ex := range []struct {
			name  string
			attrs []string
		}{
			{"all", nil},
			{"driver", excludedAttributes},
			{"driver+visible", append(append([]string(nil), excludedAttributes...), "visible")},
		} {
			b.Run(p.Name+"/"+ex.name, func(b *testing.B) {
				r := newRig(b, rigOpt{timing: p})
				r.unlocked(b)
				c, err := wda.New(r.phone.WDA, wda.WithExcludedAttributes(ex.attrs...))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { c.Close(context.Background()) })
				ctx := context.Background()
				var size int
				b.ResetTimer()
				for b.Loop() {
					src, err := c.Source(ctx)
					if err != nil {
						b.Fatal(err)
					}
					size = len(src)
				}
				b.ReportMetric(float64(size), "bytes")
			})
		}
	}
}
