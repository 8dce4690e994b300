package events_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// seqs lists the numbers of a page's events.
func seqs(p events.Page) []uint64 {
	out := make([]uint64, len(p.Events))
	for i, e := range p.Events {
		out[i] = e.Seq
	}
	return out
}

func publish(l *events.Log, n int) {
	for range n {
		l.Publish(events.Event{Kind: events.Step, Device: "d1"})
	}
}

func TestPublishSince(t *testing.T) {
	l := events.New(0)
	if got := l.Publish(events.Event{Kind: events.LeaseStarted, Device: "d1", Agent: "a", Task: "t_1"}); got != 1 {
		t.Fatalf("first Publish: got seq %d; want 1", got)
	}
	publish(l, 4)
	tests := []struct {
		name       string
		after      uint64
		max        int
		want       []uint64
		next, last uint64
	}{
		{"from the start", 0, 0, []uint64{1, 2, 3, 4, 5}, 5, 5},
		{"after 2", 2, 0, []uint64{3, 4, 5}, 5, 5},
		{"at the end", 5, 0, []uint64{}, 5, 5},
		{"max 2", 1, 2, []uint64{2, 3}, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := l.Since(tt.after, tt.max)
			if diff := cmp.Diff(tt.want, seqs(p)); diff != "" {
				t.Errorf("seqs (-want +got):\n%s", diff)
			}
			if p.Next != tt.next || p.Last != tt.last || p.Gap || p.Closed {
				t.Errorf("got next %d, last %d, gap %v, closed %v; want next %d, last %d, no gap, open", p.Next, p.Last, p.Gap, p.Closed, tt.next, tt.last)
			}
		})
	}
	first := l.Since(0, 1).Events[0]
	if first.Kind != events.LeaseStarted || first.Agent != "a" || first.Task != "t_1" || first.Time.IsZero() {
		t.Errorf("first event: got %+v", first)
	}
}

func TestNilLogDrops(t *testing.T) {
	var l *events.Log
	if got := l.Publish(events.Event{Kind: events.Step}); got != 0 {
		t.Errorf("nil log Publish: got %d; want 0", got)
	}
}

func TestConcurrentPublishersStrictlyIncreasing(t *testing.T) {
	const writers, each = 8, 500
	l := events.New(writers * each)
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last uint64
			for range each {
				seq := l.Publish(events.Event{Kind: events.Step})
				if seq <= last {
					t.Errorf("a publisher got seq %d after %d", seq, last)
				}
				last = seq
			}
		}()
	}
	// A reader follows along meanwhile.
	done := make(chan struct{})
	var read []uint64
	go func() {
		defer close(done)
		var after uint64
		for after < writers*each {
			p := l.Wait(context.Background(), after, 100, time.Second)
			read = append(read, seqs(p)...)
			after = p.Next
		}
	}()
	wg.Wait()
	<-done
	if len(read) != writers*each {
		t.Fatalf("the reader got %d events; want %d", len(read), writers*each)
	}
	for i, s := range read {
		if s != uint64(i+1) {
			t.Fatalf("event %d has seq %d; want %d", i, s, i+1)
		}
	}
}

func TestWaitWakesOnPublish(t *testing.T) {
	l := events.New(0)
	publish(l, 1)
	got := make(chan events.Page)
	go func() { got <- l.Wait(context.Background(), 1, 0, 20*time.Second) }()
	time.Sleep(50 * time.Millisecond) // let it wait
	start := time.Now()
	l.Publish(events.Event{Kind: events.DeviceOnline, Device: "d2"})
	select {
	case p := <-got:
		if len(p.Events) != 1 || p.Events[0].Seq != 2 || p.Events[0].Kind != events.DeviceOnline || p.Next != 2 {
			t.Errorf("got %+v; want the device.online event, seq 2", p)
		}
		if d := time.Since(start); d > testkit.Scaled(time.Second) {
			t.Errorf("the wait returned %s after the publish; want at once", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the wait did not return after a publish")
	}
}

func TestWaitReturnsAtOnceWhenBehind(t *testing.T) {
	l := events.New(0)
	publish(l, 3)
	start := time.Now()
	p := l.Wait(context.Background(), 1, 0, 10*time.Second)
	if d := time.Since(start); d > testkit.Scaled(time.Second) || len(p.Events) != 2 {
		t.Errorf("got %d events after %s; want 2 at once", len(p.Events), d)
	}
}

func TestWaitIdle(t *testing.T) {
	l := events.New(0)
	publish(l, 2)
	start := time.Now()
	p := l.Wait(context.Background(), 2, 0, 150*time.Millisecond)
	if d := time.Since(start); d < 150*time.Millisecond || d > testkit.Scaled(5*time.Second) {
		t.Errorf("an idle wait returned after %s; want about 150ms", d)
	}
	if len(p.Events) != 0 || p.Next != 2 || p.Last != 2 {
		t.Errorf("idle wait: got %+v; want no events, next 2", p)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	l.Wait(ctx, 2, 0, 20*time.Second)
	if d := time.Since(start); d > testkit.Scaled(5*time.Second) {
		t.Errorf("a cancelled wait returned after %s; want when its context ended", d)
	}
}

func TestCloseWakesWaiters(t *testing.T) {
	l := events.New(0)
	got := make(chan events.Page)
	go func() { got <- l.Wait(context.Background(), 0, 0, 20*time.Second) }()
	time.Sleep(50 * time.Millisecond)
	l.Close()
	select {
	case p := <-got:
		if !p.Closed || len(p.Events) != 0 {
			t.Errorf("got %+v; want an empty closed page", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not wake the waiter")
	}
	l.Publish(events.Event{Kind: events.LeaseEnded}) // still appends
	if p := l.Wait(context.Background(), 0, 0, 20*time.Second); !p.Closed || len(p.Events) != 1 {
		t.Errorf("after Close: got %+v; want the event at once, closed", p)
	}
}

func TestGap(t *testing.T) {
	l := events.New(4)
	publish(l, 10) // keeps 7..10
	tests := []struct {
		name   string
		after  uint64
		want   []uint64
		gap    bool
		reason string
		lost   string
	}{
		{"kept", 6, []uint64{7, 8, 9, 10}, false, "", ""},
		{"one lost", 5, []uint64{6, 7, 8, 9, 10}, true, events.GapOverflow, "1"},
		{"from the start", 0, []uint64{6, 7, 8, 9, 10}, true, events.GapOverflow, "6"},
		{"another run", 99, []uint64{6, 7, 8, 9, 10}, true, events.GapUnknown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := l.Since(tt.after, 0)
			if diff := cmp.Diff(tt.want, seqs(p)); diff != "" {
				t.Errorf("seqs (-want +got):\n%s", diff)
			}
			if p.Gap != tt.gap || p.Next != 10 {
				t.Errorf("got gap %v, next %d; want gap %v, next 10", p.Gap, p.Next, tt.gap)
			}
			if !tt.gap {
				return
			}
			m := p.Events[0]
			if m.Kind != events.Gap || m.Data["reason"] != tt.reason || m.Data["lost"] != tt.lost {
				t.Errorf("marker: got %+v; want %s, reason %s, lost %q", m, events.Gap, tt.reason, tt.lost)
			}
		})
	}
	// Reading on from the gap page's Next finds no gap.
	if p := l.Since(l.Since(0, 0).Next, 0); p.Gap || len(p.Events) != 0 {
		t.Errorf("after the gap page: got %+v", p)
	}
}

func TestGapEmptyLogOfAnotherRun(t *testing.T) {
	l := events.New(0)
	p := l.Since(42, 0)
	if !p.Gap || len(p.Events) != 1 || p.Events[0].Kind != events.Gap || p.Next != 0 {
		t.Errorf("got %+v; want only a gap marker and next 0", p)
	}
}

func TestMaxIsCapped(t *testing.T) {
	l := events.New(events.MaxMax + 10)
	publish(l, events.MaxMax+10)
	if p := l.Since(0, 1<<30); len(p.Events) != events.MaxMax {
		t.Errorf("got %d events; want at most %d", len(p.Events), events.MaxMax)
	}
}

func BenchmarkPublish(b *testing.B) {
	l := events.New(0)
	e := events.Event{Kind: events.Step, Device: "d1", Agent: "a", Task: "t", Data: map[string]string{"tool": "phone_tap", "outcome": "ok"}}
	for b.Loop() {
		l.Publish(e)
	}
}
