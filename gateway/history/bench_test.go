package history_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/history"
)

// benchStep is a step of the usual size: short arguments, a diff of about
// a kilobyte.
func benchStep(id, taskID string, seq int) history.Step {
	return history.Step{
		ID: id, TaskID: taskID, Seq: seq, Tool: "tap", Args: `{"ref":17,"device":"emulator-5554"}`,
		Outcome: "ok", Message: "tapped [17] button \"Send\"",
		Diff:      strings.Repeat("+ [12] text \"a line of the screen\"\n", 28),
		StartedAt: time.Now(), Duration: 850 * time.Millisecond,
	}
}

// BenchmarkAddStep is the history's cost in an agent's step: one committed
// insert.
func BenchmarkAddStep(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	ctx := context.Background()
	if err := s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	seq := 0
	for b.Loop() {
		seq++
		if err := s.AddStep(ctx, benchStep(fmt.Sprint("p", seq), "k1", seq)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepIntent is the history's cost in an acting step: the step
// committed as running before the action, then its end committed after it
// (two transactions).
func BenchmarkStepIntent(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	ctx := context.Background()
	if err := s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}); err != nil {
		b.Fatal(err)
	}
	seq := 0
	for b.Loop() {
		seq++
		st := benchStep(fmt.Sprint("p", seq), "k1", seq)
		begun := st
		begun.Outcome, begun.Message, begun.Diff = history.StepRunning, "", ""
		if err := s.AddStep(ctx, begun); err != nil {
			b.Fatal(err)
		}
		if err := s.FinishStep(ctx, st); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAddStepParallel is many agents stepping at once, each in its own
// task.
func BenchmarkAddStepParallel(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	ctx := context.Background()
	var tasks atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		taskID := fmt.Sprint("k", tasks.Add(1))
		if err := s.StartTask(ctx, history.Task{ID: taskID, StartedAt: time.Now()}); err != nil {
			b.Error(err)
			return
		}
		seq := 0
		for pb.Next() {
			seq++
			if err := s.AddStep(ctx, benchStep(fmt.Sprint(taskID, "-", seq), taskID, seq)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkTasks is the history list: the newest tasks of a store with
// 2,000 tasks of 20 steps.
func BenchmarkTasks(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	ctx := context.Background()
	start := time.Now().Add(-time.Hour)
	for i := range 2000 {
		id := fmt.Sprint("k", i)
		if err := s.StartTask(ctx, history.Task{ID: id, StartedAt: start.Add(time.Duration(i) * time.Second)}); err != nil {
			b.Fatal(err)
		}
		for seq := 1; seq <= 20; seq++ {
			if err := s.AddStep(ctx, benchStep(fmt.Sprint(id, "-", seq), id, seq)); err != nil {
				b.Fatal(err)
			}
		}
	}
	for b.Loop() {
		list, err := s.Tasks(ctx, history.TaskFilter{Limit: 50})
		if err != nil || len(list) != 50 {
			b.Fatalf("Tasks: got %d, %v; want 50", len(list), err)
		}
	}
}
