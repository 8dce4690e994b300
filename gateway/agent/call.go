package agent

import (
	"context"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// A call is one tool call on a leased phone, from its start to its step in
// the history: begin makes it, and every path of the tool ends with fail or
// done, which record the step. It carries what every stage of the pipeline
// needs, so that none of them takes a list of eight arguments.
type call struct {
	s        *Session
	task     *task
	drv      sdk.Full // bound to the lease (calls.go); nil for a call that needs no driver
	p        *phone
	device   string
	tool     string
	args     map[string]any // what the history keeps of the arguments
	started  time.Time
	progress Progress // nil: the caller hears nothing while the call waits
	in       *intent  // an acting call's running step (intent.go), once written
}

// begin starts a tool call on a device: the session must hold it, and its
// driver must be there (that failure is recorded as the call's step). The
// call's driver is bound to the lease: the person's stop ends a call that
// waits on it at once, and a take-over an action (calls.go).
func (s *Session) begin(ctx context.Context, device, tool string, args map[string]any, progress Progress) (*call, error) {
	return s.beginAt(ctx, time.Now(), device, tool, args, progress)
}

// beginAt is begin for a call that started at started.
func (s *Session) beginAt(ctx context.Context, started time.Time, device, tool string, args map[string]any, progress Progress) (*call, error) {
	c, err := s.held(started, device, tool, args)
	if err != nil {
		return nil, err
	}
	drv, err := s.driver(device)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	c.drv, c.progress = s.m.bind(c.task, drv), progress
	return c, nil
}

// held starts a call that needs the lease but no driver (an upload to the
// computer, the person's help).
func (s *Session) held(started time.Time, device, tool string, args map[string]any) (*call, error) {
	l, err := s.hold(device)
	if err != nil {
		return nil, err
	}
	return &call{s: s, task: l, p: s.m.phone(device), device: device, tool: tool, args: args, started: started}, nil
}

// fail records the call's step with err's outcome and returns err for the
// caller to return, whether or not the history took the step.
func (c *call) fail(ctx context.Context, err error) error {
	return c.record(ctx, c.refused(err), "")
}

// done records the call's step as ok with what it showed (a diff, a
// summary) and returns the step's id, or "" when the history could not
// take it: no agent is given the id of a step that is not there.
func (c *call) done(ctx context.Context, diff string) string {
	id, _ := c.s.addStep(ctx, c, "ok", "", diff)
	return id
}

// record writes the call's step with err's outcome (ok when nil).
func (c *call) record(ctx context.Context, err error, diff string) error {
	code, msg := "ok", ""
	if err != nil {
		code, msg = string(CodeInternal), err.Error()
		if e, ok := AsError(err); ok {
			code, msg = string(e.Code), e.Message
		}
	}
	c.s.addStep(ctx, c, code, msg, diff)
	return err
}

// read reads the phone's screen as the agent may see it.
func (c *call) read(ctx context.Context) (*screen.View, error) {
	return c.s.read(ctx, c.drv, c.p, c.device)
}

// display is the display the call's task runs on; 0 is the phone's own.
func (c *call) display() int { return c.s.m.displayOf(c.p) }

// report tells the caller the call is still waiting, when it listens.
func (c *call) report(done, total float64, message string) {
	if c.progress != nil {
		c.progress(done, total, message)
	}
}
