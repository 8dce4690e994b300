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

// An intent is an acting call's running step.
type intent struct {
	c       *call
	step    history.Step
	ended   bool  // the call's fail or done ended the step
	lostEnd error // why the end could not be written, when it could not
}

// intend commits the call's step as running; the call's fail or done ends
// it. When the step cannot be committed, the action must not run: the
// error is the agent's answer.
func (c *call) intend(ctx context.Context) error {
	st := c.newStep(history.StepRunning, "", "")
	wctx, cancel := stepContext(ctx)
	defer cancel()
	if err := c.s.m.cfg.Store.AddStep(wctx, st); err != nil {
		c.s.m.log.Error("the history cannot take the step, so the action is not done", "task", c.task.id, "tool", c.tool, "err", err)
		c.s.published(c.task, c.tool, string(CodeInternal), st.Seq)
		return unrecorded(err, "nothing was done on the phone. Tell the person: pinky status says what to fix. Reads such as phone_observe still work")
	}
	c.in = &intent{c: c, step: st}
	return nil
}

// end makes sure the running step has ended and returns the agent's error
// when its end could not be written: the action ran, and the history does
// not say how it went. A path that returned without recording (none
// should) ends the step with err's outcome.
func (in *intent) end(ctx context.Context, err error) error {
	if !in.ended {
		in.c.record(ctx, err, "")
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

// newStep is a new step of the call's task, with the next sequence number.
func (c *call) newStep(code, msg, diff string) history.Step {
	b, _ := json.Marshal(c.args)
	// Nothing secret in the history: a code the agent passed on is masked.
	argsText := secrets.Scrub(string(b))
	c.s.m.mu.Lock()
	c.task.seq++
	seq := c.task.seq
	c.s.m.mu.Unlock()
	return history.Step{
		ID: newID("st"), TaskID: c.task.id, Seq: seq, Tool: c.tool, Args: argsText, Outcome: code, Message: secrets.Scrub(msg),
		Diff: diff, StartedAt: c.started, Duration: time.Since(c.started),
	}
}

// stepContext is the context of a step's write: the step is written even
// when the agent gave up on the call, within a bound.
func stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
}

// published tells the person's stream that a call ended: the tool and its
// outcome only, never the arguments or the message.
func (s *Session) published(tk *task, tool, code string, seq int) {
	s.m.cfg.Events.Publish(events.Event{Kind: events.Step, Device: tk.device, Agent: s.client.Name, Task: tk.id,
		Data: map[string]string{"tool": tool, "outcome": code, "step": fmt.Sprint(seq)}})
}
