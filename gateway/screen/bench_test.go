package screen

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// largestFixture is the captured dump with the most elements.
func largestFixture(b *testing.B) (string, *sdk.Screen) {
	var name string
	var big *sdk.Screen
	for _, n := range fixtures(b) {
		s, _ := loadFixture(b, n)
		if big == nil || len(s.Elements) > len(big.Elements) {
			name, big = n, s
		}
	}
	return name, big
}

func BenchmarkRead(b *testing.B) {
	p := simtest.NewPhone(b, android)
	p.Unlock()
	p.Launch("messages")
	p.Tap("Ana Silva")
	p.Tap("compose_message_text")
	thread := p.Screen()
	name, big := largestFixture(b)
	for _, bb := range []struct {
		name string
		s    *sdk.Screen
	}{{"sim-thread-keyboard", thread}, {"fixture-" + name, big}} {
		b.Run(bb.name, func(b *testing.B) {
			m := NewModel()
			b.ReportAllocs()
			for b.Loop() {
				m.Read(bb.s)
			}
			b.ReportMetric(float64(len(bb.s.Elements)), "elements")
		})
	}
}

func BenchmarkDiff(b *testing.B) {
	p := simtest.NewPhone(b, android)
	p.Unlock()
	p.Launch("messages")
	m := NewModel()
	list := m.Read(p.Screen())
	p.Tap("Ana Silva")
	p.Tap("compose_message_text")
	before := m.Read(p.Screen())
	p.Type("Hello")
	after := m.Read(p.Screen())
	for _, bb := range []struct {
		name       string
		prev, next *View
	}{{"typing", before, after}, {"new-screen", list, before}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Diff(bb.prev, bb.next).Text()
			}
		})
	}
}

// BenchmarkSizes reports, for every fixture and the default world's screens,
// the bytes of the raw dump (where there is one), of a flat JSON element list
// and of the compact text, and their ratios. Run it with -benchtime=1x.
func BenchmarkSizes(b *testing.B) {
	report := func(b *testing.B, s *sdk.Screen, raw []byte) {
		var text string
		for b.Loop() {
			text = NewModel().Read(s).Text()
		}
		flat := len(flatJSON(b, s))
		b.ReportMetric(float64(len(text)), "text_B")
		b.ReportMetric(float64(flat), "json_B")
		b.ReportMetric(float64(len(text))/float64(flat), "text/json")
		if raw != nil {
			b.ReportMetric(float64(len(raw)), "raw_B")
			b.ReportMetric(float64(len(text))/float64(len(raw)), "text/raw")
		}
	}
	for _, name := range fixtures(b) {
		b.Run(name, func(b *testing.B) {
			s, raw := loadFixture(b, name)
			report(b, s, raw)
		})
	}
	for _, tt := range simScreens {
		b.Run("sim-"+tt.name, func(b *testing.B) {
			p := simtest.NewPhone(b, tt.id)
			tt.setup(p)
			report(b, p.Screen(), nil)
		})
	}
}

// BenchmarkTaskDiff runs a short task on the virtual phone (unlock, open
// Messages, open a conversation, type a reply, send, go home) and reports the
// mean size of what Render gives after each action against the whole screen.
func BenchmarkTaskDiff(b *testing.B) {
	for _, id := range []string{android, ios} {
		b.Run(id, func(b *testing.B) {
			var steps, fulls, rendered, deltas, screens, partial, partialScreens int
			for b.Loop() {
				steps, fulls, rendered, deltas, screens, partial, partialScreens = 0, 0, 0, 0, 0, 0, 0
				p := simtest.NewPhone(b, id)
				m := NewModel()
				prev := m.Read(p.Screen())
				for _, step := range []func(){
					p.Unlock,
					func() { p.Tap("Messages") },
					func() { p.Tap("Ben Okafor") },
					func() { p.Tap("compose_message_text") },
					func() { p.Type("Yes, got them!") },
					func() { p.Tap("send_message_button") },
					func() { p.Key(sdk.KeyHome) },
				} {
					step()
					next := m.Read(p.Screen())
					text, full := Render(prev, next)
					steps++
					rendered += len(text)
					screens += len(next.Text())
					deltas += len(Diff(prev, next).Text())
					if full {
						fulls++
					} else {
						partial += len(text)
						partialScreens += len(next.Text())
					}
					prev = next
				}
			}
			b.ReportMetric(float64(rendered)/float64(steps), "render_B/step")
			b.ReportMetric(float64(deltas)/float64(steps), "diff_B/step")
			b.ReportMetric(float64(screens)/float64(steps), "screen_B/step")
			if n := steps - fulls; n > 0 {
				b.ReportMetric(float64(partial)/float64(n), "delta_B/delta_step")
				b.ReportMetric(float64(partialScreens)/float64(n), "screen_B/delta_step")
			}
			b.ReportMetric(float64(fulls), "full_renders")
			b.ReportMetric(float64(steps), "steps")
		})
	}
}

// TestTaskRender checks the scripted task's renders read sensibly: full
// screens when the app or lock changes, a short delta otherwise.
func TestTaskRender(t *testing.T) {
	p := simtest.NewPhone(t, android)
	m := NewModel()
	prev := m.Read(p.Screen())
	steps := []struct {
		name     string
		do       func()
		wantFull bool
		want     string
	}{
		{"unlock", p.Unlock, true, "unlocked"},
		{"open Messages", func() { p.Tap("Messages") }, true, "app Messages"},
		{"open a conversation", func() { p.Tap("Ben Okafor") }, true, `button "Back"`},
		{"focus the reply", func() { p.Tap("compose_message_text") }, false, "keyboard shown"},
		{"type", func() { p.Type("Yes, got them!") }, false, `field "" → "Yes, got them!"`},
		{"send", func() { p.Tap("send_message_button") }, false, `+ [`},
		{"home", func() { p.Key(sdk.KeyHome) }, true, "app Pixel Launcher"},
	}
	for _, st := range steps {
		st.do()
		next := m.Read(p.Screen())
		text, full := Render(prev, next)
		if full != st.wantFull || !strings.Contains(text, st.want) {
			t.Errorf("%s: got full=%v %q; want full=%v containing %q", st.name, full, text, st.wantFull, st.want)
		}
		prev = next
	}
}
