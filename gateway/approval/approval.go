// Package approval keeps the approvals the person decides: an agent's
// action that the policy says to ask about waits here, as a card the
// person reads, until they allow or deny it, or it expires (a deny).
//
// An approval is bound to the session, device, task, tool and exact
// arguments of the call that opened it, and is used once: the agent repeats
// that very call with the id (or waits with phone_approval), and a reused,
// foreign or altered id is refused. Only the person's clients decide; no
// agent path leads to Decide.
package approval

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Status is where an approval stands.
type Status string

// Statuses.
const (
	Pending  Status = "pending"
	Approved Status = "approved"
	Denied   Status = "denied"
	Expired  Status = "expired"
)

// DefaultTTL is how long an approval stays open before it expires.
const DefaultTTL = 60 * time.Second

// Binding is what an approval is tied to: the call that opened it.
type Binding struct {
	Session string
	Device  string
	Task    string
	Tool    string
	Args    string // the call's arguments, canonical JSON without approval_id
}

// Card is what the person sees to decide.
type Card struct {
	ID       string `json:"id"`
	Agent    string `json:"agent"`
	TaskText string `json:"task"`
	Device   string `json:"device"`
	Tool     string `json:"tool"`
	Args     string `json:"args"`
	Commit   string `json:"commit"`   // the detected commit kind
	Rule     string `json:"rule"`     // the policy rule that asked
	Target   string `json:"target"`   // e.g. [12] button "Send"
	Evidence string `json:"evidence"` // why it is a commit
	// Summary is one sentence read from the screen: what the person
	// approves (the message and its recipient, the amount and the payee).
	Summary string `json:"summary"`
	// Counterpart is who or what the commit goes to, "" when the screen
	// names nobody; "allow for this task" covers only this counterpart.
	Counterpart string `json:"counterpart"`
	// ForTaskCovers says what "allow for this task" would cover.
	ForTaskCovers string `json:"for_task_covers"`
	// Content is the screen's committing content when the card opened: the
	// action runs only while the screen still shows exactly this.
	Content    []string `json:"-"`
	Screen     string   `json:"screen"`     // the screen text when it opened
	Screenshot string   `json:"screenshot"` // media id, may be empty
	// ScreenshotPath is the screenshot's file in the media folder.
	ScreenshotPath string    `json:"screenshot_path,omitempty"`
	Status         Status    `json:"status"`
	OpenedAt       time.Time `json:"opened_at"`
	ExpiresAt      time.Time `json:"expires_at"`
	DecidedAt      time.Time `json:"decided_at"`
	Reason         string    `json:"reason"`   // the person's reason for a deny
	ForTask        bool      `json:"for_task"` // the allow covers the task's later actions of this kind and target
	TaskID         string    `json:"task_id"`
	TargetKey      string    `json:"-"` // what "for this task" matches later actions on
	binding        Binding
	used           bool
	decided        chan struct{}
}

// Errors of claiming and deciding.
var (
	ErrNotFound = errors.New("no such approval")
	ErrForeign  = errors.New("the approval belongs to another call")
	ErrUsed     = errors.New("the approval was already used")
	ErrDecided  = errors.New("the approval is already decided")
)

// Book holds the approvals. It is safe for concurrent use.
type Book struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	items   map[string]*Card
	forTask map[string]bool // forTaskKey of the allowed
	// OnChange, when set, is called (without the lock) after an approval
	// opens or is decided; the daemon turns it into an event for the person.
	OnChange func(Card)
}

// NewBook returns an empty book whose approvals expire after ttl (0: DefaultTTL).
func NewBook(ttl time.Duration) *Book {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &Book{ttl: ttl, now: time.Now, items: map[string]*Card{}, forTask: map[string]bool{}}
}

func newID() string {
	b := make([]byte, 12)
	rand.Read(b) //nolint:errcheck // never fails
	return "ap_" + hex.EncodeToString(b)
}

// Open opens an approval for card (its ID, status and times are set here)
// bound to b, and returns its id.
func (bk *Book) Open(card Card, b Binding) Card {
	now := bk.now()
	c := new(Card)
	*c = card
	c.ID, c.Status, c.OpenedAt, c.ExpiresAt = newID(), Pending, now, now.Add(bk.ttl)
	c.binding, c.decided = b, make(chan struct{})
	bk.mu.Lock()
	bk.items[c.ID] = c
	out := *c // a copy: the person may decide as soon as the lock is free
	bk.mu.Unlock()
	bk.changed(out)
	return out
}

func (bk *Book) changed(c Card) {
	if bk.OnChange != nil {
		bk.OnChange(c)
	}
}

// expireLocked turns a pending approval past its time into Expired.
func (bk *Book) expireLocked(c *Card) bool {
	if c.Status == Pending && !bk.now().Before(c.ExpiresAt) {
		c.Status, c.DecidedAt = Expired, c.ExpiresAt
		close(c.decided)
		return true
	}
	return false
}

// Decide records the person's decision. forTask (with allow) lets later
// actions of the same commit kind and target in the task go without asking.
func (bk *Book) Decide(id string, allow, forTask bool, reason string) (Card, error) {
	bk.mu.Lock()
	c, ok := bk.items[id]
	if !ok {
		bk.mu.Unlock()
		return Card{}, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	expired := bk.expireLocked(c)
	if c.Status != Pending {
		out := *c
		bk.mu.Unlock()
		if expired {
			bk.changed(out)
		}
		return out, fmt.Errorf("%s is %s: %w", id, c.Status, ErrDecided)
	}
	c.Status, c.DecidedAt, c.Reason = Denied, bk.now(), reason
	if allow {
		c.Status, c.ForTask = Approved, forTask
		if forTask {
			bk.forTask[forTaskKey(c.TaskID, c.Commit, c.TargetKey, c.Counterpart)] = true
		}
	}
	out := *c
	bk.mu.Unlock()
	// The person's stream hears of the decision before the waiting call
	// wakes: an approval that call opens next comes after it.
	bk.changed(out)
	close(c.decided)
	return out, nil
}

// Wait waits until the approval is decided, expires, max passes or ctx
// ends, and returns its status then.
func (bk *Book) Wait(ctx context.Context, id string, max time.Duration) (Card, error) {
	bk.mu.Lock()
	c, ok := bk.items[id]
	if !ok {
		bk.mu.Unlock()
		return Card{}, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	decided, expires := c.decided, c.ExpiresAt
	bk.mu.Unlock()
	limit := min(max, time.Until(expires)+10*time.Millisecond)
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-decided:
	case <-t.C:
	case <-ctx.Done():
	}
	bk.mu.Lock()
	expired := bk.expireLocked(c)
	out := *c
	bk.mu.Unlock()
	if expired {
		bk.changed(out)
	}
	return out, ctx.Err()
}

// Claim checks that id belongs to the call b and uses it: an approved
// approval is used once. It returns the approval's state; a pending one is
// not used.
func (bk *Book) Claim(id string, b Binding) (Card, error) {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	c, ok := bk.items[id]
	if !ok {
		return Card{}, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	if c.binding != b {
		return Card{}, fmt.Errorf("%s: %w", id, ErrForeign)
	}
	bk.expireLocked(c)
	if c.used {
		return *c, fmt.Errorf("%s: %w", id, ErrUsed)
	}
	if c.Status == Approved {
		c.used = true
	}
	return *c, nil
}

// Get returns one approval for a session's phone_approval; it must belong
// to that session.
func (bk *Book) Get(id, session string) (Card, Binding, error) {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	c, ok := bk.items[id]
	if !ok {
		return Card{}, Binding{}, fmt.Errorf("%s: %w", id, ErrNotFound)
	}
	if c.binding.Session != session {
		return Card{}, Binding{}, fmt.Errorf("%s: %w", id, ErrForeign)
	}
	bk.expireLocked(c)
	return *c, c.binding, nil
}

// SetScreenshot records the card's screenshot: its media id and its path
// in the media folder.
func (bk *Book) SetScreenshot(id, media, path string) {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	if c, ok := bk.items[id]; ok {
		c.Screenshot, c.ScreenshotPath = media, path
	}
}

// AllowedForTask reports whether the person allowed actions of this commit
// kind on this target, to this counterpart, for the whole task: a send to
// Ana allowed for the task does not allow a send to Ben.
func (bk *Book) AllowedForTask(task, commit, targetKey, counterpart string) bool {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	return bk.forTask[forTaskKey(task, commit, targetKey, counterpart)]
}

func forTaskKey(task, commit, targetKey, counterpart string) string {
	return strings.Join([]string{task, commit, targetKey, counterpart}, "\x00")
}

// OpenFor reports an undecided approval on device, if any.
func (bk *Book) OpenFor(device string) (Card, bool) {
	bk.mu.Lock()
	defer bk.mu.Unlock()
	for _, c := range bk.items {
		if c.Device == device && c.Status == Pending && !bk.expireLocked(c) {
			return *c, true
		}
	}
	return Card{}, false
}

// List returns the approvals, pending first, then newest first; with
// pendingOnly only the undecided ones.
func (bk *Book) List(pendingOnly bool) []Card {
	bk.mu.Lock()
	var out []Card
	for _, c := range bk.items {
		bk.expireLocked(c)
		if !pendingOnly || c.Status == Pending {
			out = append(out, *c)
		}
	}
	bk.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if (out[i].Status == Pending) != (out[j].Status == Pending) {
			return out[i].Status == Pending
		}
		return out[i].OpenedAt.After(out[j].OpenedAt)
	})
	return out
}
