package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// Decision is what the guard says of an action.
type Decision string

// Decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Check is what the guard is asked about an action before it runs.
type Check struct {
	Agent  string
	Device string
	App    string       // the app in front
	Action Action       // with the app resolved to its id for launch and stop
	View   *screen.View // the screen the action aims at
	Target *screen.Node // nil when the action has no target element
}

// Verdict is the guard's answer.
type Verdict struct {
	Decision Decision
	Code     Code   // for a deny: denied, scope_denied, blocked_app, credentials
	Reason   string // a sentence for a model
	Rule     string // the policy rule that decided
	Commit   string // the commit kind detected, "" for none
	Evidence string // why it is that commit
}

// Guard decides about actions and hides what agents must not see. The
// gateway builds it from the policy, the commit detector and the secrets
// rules; nil allows everything.
type Guard interface {
	Check(c Check) Verdict
	// Blocked reports whether an app is hidden from agents.
	Blocked(appID string) bool
}

// guard runs the guard for an action and, when it asks, the approval: it
// returns nil when the action may run now, and whether the person was
// asked (then the caller checks that the screen did not change meanwhile).
func (s *Session) guard(ctx context.Context, l *lease, view *screen.View, target *screen.Node, a Action, args map[string]any, progress Progress) (asked bool, err error) {
	m := s.m
	if m.cfg.Guard == nil {
		return false, nil
	}
	v := m.cfg.Guard.Check(Check{Agent: s.client.Name, Device: l.device, App: view.App.ID, Action: a, View: view, Target: target})
	book := m.cfg.Approvals
	b := binding(s, l, a, args)
	// An approval id is checked whatever the verdict: it is valid only for
	// the exact call it was given for.
	var claimed *approval.Card
	if a.ApprovalID != "" {
		if book == nil {
			return false, Errorf(CodeNotFound, "there is no approval %q", a.ApprovalID)
		}
		c, err := book.Claim(a.ApprovalID, b)
		switch {
		case errors.Is(err, approval.ErrNotFound):
			return true, Errorf(CodeNotFound, "there is no approval %q; repeat the call without approval_id to ask again", a.ApprovalID)
		case errors.Is(err, approval.ErrForeign):
			return true, Errorf(CodeInvalidArgument, "approval %q belongs to another call: it is valid only for the exact call that answered approval_pending, in the same session", a.ApprovalID)
		case errors.Is(err, approval.ErrUsed):
			return true, Errorf(CodeInvalidArgument, "approval %q was already used; an approval covers one action", a.ApprovalID)
		case err != nil:
			return true, err
		}
		claimed = &c
	}
	switch v.Decision {
	case Allow:
		return claimed != nil, nil
	case Deny:
		code := v.Code
		if code == "" {
			code = CodeDenied
		}
		return false, &Error{Code: code, Message: v.Reason}
	}
	if book == nil {
		return false, Errorf(CodeDenied, "%s, and nobody can approve it here", v.Reason)
	}
	key := targetKey(target)
	if claimed == nil && book.AllowedForTask(l.taskID, v.Commit, key) {
		return false, nil
	}
	var card approval.Card
	if claimed != nil {
		card = *claimed
	} else {
		card = book.Open(approval.Card{
			Agent: s.client.Name, TaskText: l.task, TaskID: l.taskID, Device: l.device, Tool: b.Tool, Args: b.Args,
			Commit: v.Commit, Rule: v.Rule, Target: nodeLine(target), Evidence: v.Evidence, Screen: view.Text(), TargetKey: key,
		}, b)
		m.log.Warn("an agent asks the person", "approval", card.ID, "device", l.device, "agent", s.client.Name, "commit", v.Commit, "rule", v.Rule)
		m.mu.Lock()
		s.waiting[card.ID] = waitingCall{device: l.device, action: a}
		m.mu.Unlock()
		s.cardShot(l, card.ID, target)
	}
	if card.Status == approval.Pending {
		c, err := s.waitApproval(ctx, card.ID, progress)
		if err != nil {
			return true, err
		}
		if c.Status == approval.Approved {
			if _, err := book.Claim(c.ID, b); err != nil {
				return true, err
			}
		}
		card = c
	}
	switch card.Status {
	case approval.Approved:
		return true, nil
	case approval.Denied:
		msg := "the person denied it"
		if card.Reason != "" {
			msg += ": " + card.Reason
		}
		return true, Errorf(CodeDenied, "%s; do not try it another way. Tell the user, or ask the person with phone_ask_person", msg)
	case approval.Expired:
		return true, Errorf(CodeDenied, "the person did not answer within a minute, so it is denied; ask again only if it still makes sense")
	}
	return true, Errorf(CodeApprovalPending, "the person has not decided yet; approval_id %s. Wait with phone_approval (id %s), or repeat this exact call with approval_id; do not do the action another way", card.ID, card.ID)
}

// waitApproval waits up to approvalWait for the person, with progress.
func (s *Session) waitApproval(ctx context.Context, id string, progress Progress) (approval.Card, error) {
	start := time.Now()
	for {
		c, err := s.m.cfg.Approvals.Wait(ctx, id, min(5*time.Second, s.m.cfg.ApprovalWait))
		if err != nil {
			return c, Errorf(CodeApprovalPending, "the wait was cancelled; approval_id %s is still open: wait with phone_approval", id)
		}
		if c.Status != approval.Pending || time.Since(start) >= s.m.cfg.ApprovalWait {
			return c, nil
		}
		if progress != nil {
			progress(time.Since(start).Seconds(), s.m.cfg.ApprovalWait.Seconds(), "waiting for the person to approve")
		}
	}
}

// binding is what an approval is tied to: this session, phone, task, tool
// and the exact arguments (without the approval id).
func binding(s *Session, l *lease, a Action, args map[string]any) approval.Binding {
	clean := map[string]any{}
	for k, v := range args {
		if k != "approval_id" {
			clean[k] = v
		}
	}
	b, _ := json.Marshal(clean) // map keys are sorted: canonical
	return approval.Binding{Session: s.id, Device: l.device, Task: l.taskID, Tool: toolName(a.Kind), Args: string(b)}
}

// targetKey is what an "allow for this task" matches later actions on.
func targetKey(n *screen.Node) string {
	if n == nil {
		return ""
	}
	return string(n.Role) + ":" + strings.ToLower(n.Label) + ":" + n.ShortID
}

func nodeLine(n *screen.Node) string {
	if n == nil {
		return ""
	}
	return fmt.Sprintf("[%d] %s %q", n.Ref, n.Role, n.Label)
}

// stillThere checks, after an approval, that the target is where it was:
// the screen may have changed while the person decided.
func stillThere(before, after *screen.View, target *screen.Node) bool {
	if target == nil {
		return after.App.ID == before.App.ID
	}
	n, err := after.ByRef(target.Ref)
	return err == nil && n.Label == target.Label && n.Role == target.Role && n.Bounds == target.Bounds
}

// toolName is the MCP tool of an action kind.
func toolName(kind string) string {
	if kind == "stop" {
		return "phone_stop_app"
	}
	return "phone_" + kind
}

// targetNode finds the element an action aims at on view, if any.
func targetNode(view *screen.View, a Action) *screen.Node {
	t := a.Target
	var n screen.Node
	var err error
	switch {
	case t.Ref != 0:
		n, err = view.ByRef(t.Ref)
	case t.Text != "":
		n, err = view.ByText(t.Text, t.Occurrence)
	case t.HasPoint:
		var ok bool
		if n, ok = view.ByPoint(sdk.Point{X: t.X, Y: t.Y}); !ok {
			return nil
		}
	default:
		if a.Kind == "type" || a.Kind == "key" {
			for _, fn := range view.Nodes {
				if fn.Focused {
					return &fn
				}
			}
		}
		return nil
	}
	if err != nil {
		return nil
	}
	return &n
}

// waitingCall is an action that waits for an approval, for phone_approval
// to run once the person allows it.
type waitingCall struct {
	device string
	action Action
}

// Approval waits on a pending approval of this session and, once the
// person allows it, runs the action it was opened for.
func (s *Session) Approval(ctx context.Context, id string, progress Progress) (*Observation, error) {
	book := s.m.cfg.Approvals
	if book == nil {
		return nil, Errorf(CodeNotFound, "there is no pending approval %q", id)
	}
	if _, _, err := book.Get(id, s.id); err != nil {
		if errors.Is(err, approval.ErrForeign) {
			return nil, Errorf(CodeInvalidArgument, "approval %q belongs to another session", id)
		}
		return nil, Errorf(CodeNotFound, "there is no approval %q", id)
	}
	s.m.mu.Lock()
	w, ok := s.waiting[id]
	s.m.mu.Unlock()
	if !ok {
		return nil, Errorf(CodeNotFound, "approval %q is not waiting for this session", id)
	}
	start := time.Now()
	for {
		c, err := book.Wait(ctx, id, 5*time.Second)
		if err != nil {
			return nil, Errorf(CodeApprovalPending, "the wait was cancelled; approval_id %s is still open", id)
		}
		if c.Status != approval.Pending {
			break
		}
		if progress != nil {
			progress(time.Since(start).Seconds(), 0, "waiting for the person to approve")
		}
	}
	s.m.mu.Lock()
	delete(s.waiting, id)
	s.m.mu.Unlock()
	a := w.action
	a.ApprovalID = id
	if a.Kind == "files_push" {
		return s.pushApproved(ctx, w.device, a, progress)
	}
	return s.Act(ctx, w.device, a, progress)
}
