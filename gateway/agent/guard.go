package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/commit"
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

// Check is what the guard is asked about an action before it runs. The
// view is the screen as the phone showed it just before, and the points of
// the action are resolved on it: what the guard judges is what the finger
// touches.
type Check struct {
	Agent  string
	Device string
	App    string       // the app in front
	Action Action       // with the app resolved to its id for launch and stop
	View   *screen.View // the screen the action aims at
	Target *screen.Node // the element the action starts on, or types into; nil when none
	// Under is the smallest element under the start point when it is not
	// Target (a control inside the row aimed at, an element over it), nil
	// otherwise: the finger may work it instead.
	Under *screen.Node
	// End is the element under the point where a swipe or scroll lifts
	// the finger, nil when none.
	End *screen.Node
	// Also are the elements other fingers go down on (a pinch's two
	// fingers), judged as Target is: the stronger counts.
	Also []*screen.Node
	// OnKeyboard says the action touches the on-screen keyboard (at its
	// start; EndOnKeyboard at its end), on the key named Key ("" when the
	// keyboard names none there).
	OnKeyboard, EndOnKeyboard bool
	Key, EndKey               string
	// Focused is the focused field that typing and keyboard touches go
	// into, nil when none.
	Focused *screen.Node
}

// Verdict is the guard's answer.
type Verdict struct {
	Decision Decision
	Code     Code   // for a deny: denied, scope_denied, blocked_app, credentials
	Reason   string // a sentence for a model
	Rule     string // the policy rule that decided
	Commit   string // the commit kind detected, "" for none
	Evidence string // why it is that commit
	// Summary is what the person would approve, read from the screen.
	Summary commit.Summary
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
// returns nil when the action may run now, and the card the person decided
// when they were asked (then the caller checks that the screen still shows
// what they saw).
func (s *Session) guard(ctx context.Context, c *call, view *screen.View, t aim, a Action) (*approval.Card, error) {
	m, tk := s.m, c.task
	if m.cfg.Guard == nil {
		return nil, nil
	}
	v := m.cfg.Guard.Check(s.check(tk, view, a, t))
	book := m.cfg.Approvals
	b := binding(s, c)
	// An approval id is checked whatever the verdict: it is valid only for
	// the exact call it was given for.
	var claimed *approval.Card
	if a.ApprovalID != "" {
		if book == nil {
			return nil, Errorf(CodeNotFound, "there is no approval %q", a.ApprovalID)
		}
		c, err := book.Claim(a.ApprovalID, b)
		switch {
		case errors.Is(err, approval.ErrNotFound):
			return nil, Errorf(CodeNotFound, "there is no approval %q; repeat the call without approval_id to ask again", a.ApprovalID)
		case errors.Is(err, approval.ErrForeign):
			return nil, Errorf(CodeInvalidArgument, "approval %q belongs to another call: it is valid only for the exact call that answered approval_pending, in the same session", a.ApprovalID)
		case errors.Is(err, approval.ErrUsed):
			return nil, Errorf(CodeInvalidArgument, "approval %q was already used; an approval covers one action", a.ApprovalID)
		case err != nil:
			return nil, err
		}
		claimed = &c
	}
	switch v.Decision {
	case Allow:
		return claimed, nil
	case Deny:
		code := v.Code
		if code == "" {
			code = CodeDenied
		}
		return nil, &Error{Code: code, Message: v.Reason}
	}
	if book == nil {
		return nil, Errorf(CodeDenied, "%s, and nobody can approve it here", v.Reason)
	}
	key := targetKey(t.start.node)
	sum := v.Summary
	if claimed == nil && book.AllowedForTask(tk.id, v.Commit, key, sum.Counterpart) {
		return nil, nil
	}
	if h := m.cfg.Store.Health(); claimed == nil && h.Failing {
		// The action could not be recorded: do not ask the person for it.
		return nil, Errorf(CodeInternal, "history cannot be written: %s; nothing was done on the phone and the person was not asked. Tell the person: pinky status says what to fix. Reads such as phone_observe still work", h.Cause)
	}
	var card approval.Card
	if claimed != nil {
		card = *claimed
	} else {
		card = book.Open(approval.Card{
			Agent: s.client.Name, TaskText: tk.text, TaskID: tk.id, Device: tk.device, Tool: b.Tool, Args: b.Args,
			Commit: v.Commit, Rule: v.Rule, Target: nodeLine(t.start.node), Evidence: v.Evidence, Screen: view.Text(), TargetKey: key,
			Summary: sum.Sentence, Counterpart: sum.Counterpart, Content: commit.Content(view), ForTaskCovers: forTaskCovers(v.Commit, sum.Counterpart, t.start.node),
		}, b)
		m.log.Warn("an agent asks the person", "approval", card.ID, "device", tk.device, "agent", s.client.Name, "commit", v.Commit, "rule", v.Rule)
		m.mu.Lock()
		s.waiting[card.ID] = waitingCall{device: tk.device, action: a}
		m.mu.Unlock()
		s.cardShot(tk, card.ID, t.start.node)
	}
	if card.Status == approval.Pending {
		c, err := s.waitApproval(ctx, card.ID, c.progress)
		if end := m.leaseEnded(tk); end != nil {
			return nil, end // the person stopped the agent while it waited (person.go)
		}
		if err != nil {
			return nil, err
		}
		if c.Status == approval.Approved {
			if _, err := book.Claim(c.ID, b); err != nil {
				return nil, err
			}
		}
		card = c
	}
	switch card.Status {
	case approval.Approved:
		return &card, nil
	case approval.Denied:
		msg := "the person denied it"
		if card.Reason != "" {
			msg += ": " + card.Reason
		}
		return nil, Errorf(CodeDenied, "%s; do not try it another way. Tell the user, or ask the person with phone_ask_person", msg)
	case approval.Expired:
		return nil, Errorf(CodeDenied, "the person did not answer within a minute, so it is denied; ask again only if it still makes sense")
	}
	return nil, Errorf(CodeApprovalPending, "the person has not decided yet; approval_id %s. Wait with phone_approval (id %s), or repeat this exact call with approval_id; do not do the action another way", card.ID, card.ID)
}

// forTaskCovers says, on the card, what "allow for this task" covers.
func forTaskCovers(commit, counterpart string, target *screen.Node) string {
	what := strings.ReplaceAll(commit, "_", " ")
	on := ""
	if target != nil && target.Label != "" {
		on = fmt.Sprintf(" with %s %q", target.Role, target.Label)
	}
	if counterpart == "" {
		return fmt.Sprintf("later %s actions%s in this task, where the screen names no counterpart", what, on)
	}
	return fmt.Sprintf("later %s actions%s in this task to %q only", what, on, counterpart)
}

// check is what the guard is asked about a, aimed as t on view.
func (s *Session) check(tk *task, view *screen.View, a Action, t aim) Check {
	return Check{Agent: s.client.Name, Device: tk.device, App: view.App.ID, Action: a, View: view,
		Target: t.start.node, Under: t.start.under, End: t.end.node, Also: t.also, OnKeyboard: t.start.onKeyboard, EndOnKeyboard: t.end.onKeyboard,
		Key: t.start.key, EndKey: t.end.key, Focused: t.focused}
}

// waitApproval waits up to Config.ApprovalWait for the person to decide
// card id, reporting progress every Config.ProgressEvery, and returns the
// card as it is then (still pending when the wait ran out).
func (s *Session) waitApproval(ctx context.Context, id string, progress Progress) (approval.Card, error) {
	cfg := s.m.cfg
	start := time.Now()
	for {
		left := cfg.ApprovalWait - time.Since(start)
		c, err := cfg.Approvals.Wait(ctx, id, max(min(cfg.ProgressEvery, left), 0))
		if err != nil {
			return c, Errorf(CodeApprovalPending, "the wait was cancelled; approval_id %s is still open: wait with phone_approval", id)
		}
		if c.Status != approval.Pending || time.Since(start) >= cfg.ApprovalWait {
			return c, nil
		}
		if progress != nil {
			progress(time.Since(start).Seconds(), cfg.ApprovalWait.Seconds(), "waiting for the person to approve")
		}
	}
}

// binding is what an approval is tied to: this session, phone, task, the
// call's tool and its exact arguments (without the approval id).
func binding(s *Session, c *call) approval.Binding {
	clean := map[string]any{}
	for k, v := range c.args {
		if k != "approval_id" {
			clean[k] = v
		}
	}
	b, _ := json.Marshal(clean) // map keys are sorted: canonical
	return approval.Binding{Session: s.id, Device: c.task.device, Task: c.task.id, Tool: c.tool, Args: string(b)}
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

// stillThere checks, after an approval, that the screen still shows what
// the person saw: the target where it was, and the same committing content
// (the message and its recipient, the amount and the payee). Anything else
// was not approved: the agent may have retyped the message or opened
// another conversation since.
func stillThere(card *approval.Card, before, after *screen.View, target *screen.Node) bool {
	if !slices.Equal(commit.Content(after), card.Content) {
		return false
	}
	if target == nil {
		return after.App.ID == before.App.ID
	}
	n, err := after.ByRef(target.Ref)
	return err == nil && n.Label == target.Label && n.Role == target.Role && n.Bounds == target.Bounds
}

// waitingCall is an action that waits for an approval, for phone_approval
// to run once the person allows it.
type waitingCall struct {
	device string
	action Action
}

// Approval waits on a pending approval of this session and, once the
// person allows it, runs the action it was opened for. It waits as long as
// an acting call does (Config.ApprovalWait), then answers approval_pending
// again: the agent calls it again to wait on.
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
	c, err := s.waitApproval(ctx, id, progress)
	if err != nil {
		return nil, Errorf(CodeApprovalPending, "the wait was cancelled; approval_id %s is still open", id)
	}
	if c.Status == approval.Pending {
		return nil, Errorf(CodeApprovalPending, "the person has not decided within %s; approval_id %s is still open. Call phone_approval (id %s) again to keep waiting; do not do the action another way", s.m.cfg.ApprovalWait, id, id)
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
