package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// An acting call commits its step before anything reaches the phone, with
// the outcome history.StepRunning (intend), and ends that step once the
// action has ended (record and recordOK do, through the call's context): a
// step is in the history before the phone changes, or the action is not
// done. When the history cannot take the running step, the call answers
// internal "history cannot be written: …" and does nothing. When it cannot
// take the end, the action has run: the call says so instead of answering
// ok, and the history keeps the step as running until the daemon's next
// start settles it as uncertain.

// intentKey is the context key of an acting call's running step.
type intentKey struct{}

// An intent is an acting call's running step.
type intent struct {
	s       *Session
	l       *lease
	step    history.Step
	args    map[string]any
	ended   bool  // record or recordOK ended the step
	lostEnd error // why the end could not be written, when it could not
}

// intentOf returns the running step of the call of ctx, or nil for a call
// that wrote none (a read, a refusal before the action).
func intentOf(ctx context.Context) *intent {
	in, _ := ctx.Value(intentKey{}).(*intent)
	return in
}

// intend commits the step of an acting call as running and returns the
// call's context, which carries it to the record or recordOK that ends it.
// When the step cannot be committed, the action must not run: the error
// is the agent's answer.
func (s *Session) intend(ctx context.Context, l *lease, tool string, args map[string]any, started time.Time) (context.Context, *intent, error) {
	st := s.newStep(l, tool, args, started, history.StepRunning, "", "")
	wctx, cancel := stepContext(ctx)
	defer cancel()
	if err := s.m.cfg.Store.AddStep(wctx, st); err != nil {
		s.m.log.Error("the history cannot take the step, so the action is not done", "task", l.taskID, "tool", tool, "err", err)
		s.published(l, tool, string(CodeInternal), st.Seq)
		return ctx, nil, unrecorded(err, "nothing was done on the phone. Tell the person: pinky status says what to fix. Reads such as phone_observe still work")
	}
	in := &intent{s: s, l: l, step: st, args: args}
	return context.WithValue(ctx, intentKey{}, in), in, nil
}

// end makes sure the running step has ended and returns the agent's error
// when its end could not be written: the action ran, and the history does
// not say how it went. A path that returned without recording (none
// should) ends the step with err's outcome.
func (in *intent) end(ctx context.Context, err error) error {
	if !in.ended {
		in.s.record(ctx, in.l, in.step.Tool, in.args, in.step.StartedAt, err, "")
	}
	if in.lostEnd == nil {
		return nil
	}
	return unrecorded(in.lostEnd, "the action was done on the phone, but the history has it only as begun, not how it ended. "+
		"Observe before acting again, and tell the person: pinky status says what to fix")
}

// unrecorded is the agent's error for a call the history could not take;
// done says what became of the call, and what to do.
func unrecorded(err error, done string) *Error {
	if cause, ok := history.CauseOf(err); ok {
		return Errorf(CodeInternal, "history cannot be written: %s; %s", cause, done)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return Errorf(CodeInternal, "history cannot be written: it did not answer in time; %s", done)
	}
	return Errorf(CodeInternal, "history cannot be written: it failed (the daemon's log says how); %s", done)
}

// newStep is a new step of the lease's task, with the next sequence number.
func (s *Session) newStep(l *lease, tool string, args map[string]any, started time.Time, code, msg, diff string) history.Step {
	b, _ := json.Marshal(args)
	// Nothing secret in the history: a code the agent passed on is masked.
	argsText := secrets.Scrub(string(b))
	s.m.mu.Lock()
	l.seq++
	seq := l.seq
	s.m.mu.Unlock()
	return history.Step{
		ID: newID("st"), TaskID: l.taskID, Seq: seq, Tool: tool, Args: argsText, Outcome: code, Message: secrets.Scrub(msg),
		Diff: diff, StartedAt: started, Duration: time.Since(started),
	}
}

// stepContext is the context of a step's write: the step is written even
// when the agent gave up on the call, within a bound.
func stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// published tells the person's stream that a call ended: the tool and its
// outcome only, never the arguments or the message.
func (s *Session) published(l *lease, tool, code string, seq int) {
	s.m.cfg.Events.Publish(events.Event{Kind: events.Step, Device: l.device, Agent: s.client.Name, Task: l.taskID,
		Data: map[string]string{"tool": tool, "outcome": code, "step": fmt.Sprint(seq)}})
}
