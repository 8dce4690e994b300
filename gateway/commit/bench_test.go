package commit

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// largestFixture is the captured UIAutomator dump that reads into the most
// nodes.
func largestFixture(b *testing.B) (string, *screen.View) {
	entries, err := os.ReadDir(fixtureDir)
	if err != nil {
		b.Fatal(err)
	}
	var name string
	var big *screen.View
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".xml") || strings.HasPrefix(e.Name(), "synthetic") {
			continue
		}
		f, err := os.Open(filepath.Join(fixtureDir, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		s, err := dump.ParseUIAutomator(f)
		f.Close()
		if err != nil {
			continue // an iOS capture
		}
		v := screen.NewModel().Read(s)
		if big == nil || len(v.Nodes) > len(big.Nodes) {
			name, big = e.Name(), v
		}
	}
	return name, big
}

// BenchmarkDetect classifies a tap on every node of a screen in turn, a key
// enter on its focused field and a "Confirm" that reads the whole screen, and
// reports the 99th percentile of one call's time next to the mean.
func BenchmarkDetect(b *testing.B) {
	name, big := largestFixture(b)
	// The same screen in an app that is not a home screen: its labels,
	// which the tables do not know, all go to the model.
	other := *big
	other.App.ID = "com.example.app"
	for _, bb := range []struct {
		name string
		v    *screen.View
	}{{"fixture-" + strings.TrimSuffix(name, ".xml"), big}, {"fixture-as-another-app", &other}, {"sim-messages-thread", threadView(b)}} {
		b.Run(bb.name, func(b *testing.B) {
			v := bb.v
			type call struct {
				v *screen.View
				a Action
			}
			calls := make([]call, 0, len(v.Nodes)+2)
			for i := range v.Nodes {
				calls = append(calls, call{v, Action{Kind: "tap", Target: &v.Nodes[i]}})
			}
			calls = append(calls, call{v, Action{Kind: "key", Key: "enter"}})
			// The costliest path: a "Confirm" that reads the whole screen's text.
			wide := *v
			wide.Nodes = append(slices.Clone(v.Nodes), screen.Node{Ref: 1 << 20, Role: screen.RoleButton, Clickable: true, Label: "Confirm"})
			calls = append(calls, call{&wide, Action{Kind: "tap", Target: &wide.Nodes[len(wide.Nodes)-1]}})
			times := make([]time.Duration, 0, 1<<16)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c := calls[i%len(calls)]
				start := time.Now()
				Detect(c.v, c.a)
				if len(times) < cap(times) {
					times = append(times, time.Since(start))
				}
				i++
			}
			slices.Sort(times)
			if len(times) > 0 {
				b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
			}
			b.ReportMetric(float64(len(v.Nodes)), "nodes")
		})
	}
}
