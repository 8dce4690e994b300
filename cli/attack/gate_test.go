package attack_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// The attacks on the gate: every input path an agent has must pass it, on
// the screen as the phone shows it when the action runs.

const device = "sim-android-1"

var with = e2e.OnDevice(device)

// askPolicy is the default policy (banking, wallets, password managers and
// authenticators blocked; anything that commits asks) with some blocked
// apps let through for the attack at hand.
func askPolicy(unblocked ...string) string {
	return `blocked_categories: [banking, wallets, password_managers, authenticators]
unblocked_apps: [` + strings.Join(unblocked, ", ") + `]
rules:
  - name: default
    decision: allow
  - name: ask before committing
    commit: any
    decision: ask
`
}

// gateEnv starts a daemon with the virtual phones and policy, unlocks the
// phone and connects an agent over a real `pinky mcp` pipe.
func gateEnv(t *testing.T, policy string, task string, apps ...string) (*e2e.Env, *e2e.Host) {
	t.Helper()
	e := e2e.New(t)
	e.WriteFile("policy.yaml", policy)
	e.Daemon("--sim", "--approval-wait", "300ms")
	e.Unlock(device)
	h := e.StdioHost()
	h.Initialize()
	args := with("task", task)
	if len(apps) > 0 {
		args["apps"] = apps
	}
	h.OK("phone_connect", args, "")
	return e, h
}

// screenOf is the phone's screen as its driver reports it, read with the
// person's tool: the ground truth of what happened on the phone.
func screenOf(e *e2e.Env) sdk.Screen {
	e.T.Helper()
	var s sdk.Screen
	e.JSON(&s, "driver", "screen", device)
	return s
}

// element finds the first element of s whose text or description is text.
func element(t *testing.T, s sdk.Screen, text string) sdk.Element {
	t.Helper()
	for _, el := range s.Elements {
		if el.Visible && (el.Text == text || el.ContentDescription == text || el.Hint == text) {
			return el
		}
	}
	t.Fatalf("no element %q on the phone's screen (%s)", text, s.App.ID)
	return sdk.Element{}
}

// at is the tool arguments of a point: the middle of el.
func at(el sdk.Element, kv ...any) map[string]any {
	c := el.Bounds.Center()
	return with(append([]any{"x", c.X, "y", c.Y}, kv...)...)
}

// shows reports whether any element of the phone's screen holds text.
func shows(s sdk.Screen, text string) bool {
	for _, el := range s.Elements {
		if strings.Contains(el.Text, text) || strings.Contains(el.ContentDescription, text) {
			return true
		}
	}
	return false
}

var approvalID = regexp.MustCompile(`ap_[0-9a-f]+`)

// asks calls a tool that must open a card (approval_pending within the
// short wait), denies it as the person, and returns the card.
func asks(t *testing.T, e *e2e.Env, h *e2e.Host, tool string, args map[string]any) approval.Card {
	t.Helper()
	text, isErr := h.Tool(tool, args)
	id := approvalID.FindString(text)
	if !isErr || !strings.HasPrefix(text, "approval_pending:") || id == "" {
		t.Fatalf("%s %v went through without asking the person: %q", tool, args, text)
	}
	var cards []approval.Card
	e.JSON(&cards, "approvals", "--all")
	if _, errs, code := e.Run("deny", id, "--reason", "attack"); code != 0 {
		t.Fatalf("pinky deny: %s", errs)
	}
	for _, c := range cards {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("approval %s is not listed", id)
	return approval.Card{}
}

// TestEveryInputPathAsks: the controls that commit ask however they are
// worked — a long press, a swipe or scroll starting or ending on them, the
// on-screen keyboard's enter key by coordinates — and nothing is sent.
func TestEveryInputPathAsks(t *testing.T) {
	e, h := gateEnv(t, askPolicy(), "reply to Ben")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	h.OK("phone_type", with("field", "Text message", "text", "harmless hello"), "harmless hello")
	s := screenOf(e)
	send, enter := element(t, s, "Send"), element(t, s, "enter")
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"long press on Send", "phone_long_press", with("text", "Send")},
		{"long press on Send by coordinates", "phone_long_press", at(send)},
		{"swipe starting on Send", "phone_swipe", with("from", map[string]any{"text": "Send"}, "to", map[string]any{"x": 10, "y": 1200})},
		{"swipe ending on Send", "phone_swipe", with("from", map[string]any{"x": 540, "y": 1200}, "to", map[string]any{"text": "Send"})},
		{"pinch on Send", "phone_pinch", with("text", "Send", "scale_percent", 200)},
		{"tap on the keyboard's enter key", "phone_tap", at(enter)},
		{"long press on the keyboard's enter key", "phone_long_press", at(enter)},
		{"typing aimed at the keyboard's enter key", "phone_type", at(enter, "text", " too")},
		{"typing with submit", "phone_type", with("text", " too", "submit", true)},
		{"typing a new line", "phone_type", with("text", " too\n")},
		{"the enter key", "phone_key", with("key", "enter")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := asks(t, e, h, tc.tool, tc.args)
			if c.Commit != "send_message" {
				t.Errorf("card commit %q; want send_message", c.Commit)
			}
			if shows(screenOf(e), "Me: harmless hello") {
				t.Fatal("the message was sent without the person")
			}
		})
	}

	// Mail: a long press on Send in the composer.
	h.OK("phone_launch", with("app", "Mail"), "Inbox")
	h.OK("phone_tap", with("text", "Compose"), "")
	h.OK("phone_type", with("field", "To", "text", "boss@example.com"), "")
	asks(t, e, h, "phone_long_press", with("text", "Send"))
	if shows(screenOf(e), "To boss@example.com") {
		t.Fatal("the mail was sent without the person")
	}

	// Shop: a long press on Place order, then on Pay in its dialog.
	h.OK("phone_launch", with("app", "Shop"), "Add to cart")
	h.OK("phone_tap", with("text", "Add to cart"), "Place order")
	if c := asks(t, e, h, "phone_long_press", with("text", "Place order")); c.Commit != "purchase" {
		t.Errorf("Place order: commit %q; want purchase", c.Commit)
	}
	text, _ := h.Tool("phone_tap", with("text", "Place order"))
	id := approvalID.FindString(text)
	e.Run("approve", id)
	h.OK("phone_tap", with("text", "Place order", "approval_id", id), "Pay")
	asks(t, e, h, "phone_long_press", with("text", "Pay"))
	asks(t, e, h, "phone_swipe", with("from", map[string]any{"text": "Cancel"}, "to", map[string]any{"text": "Pay"}))
	if shows(screenOf(e), "Order placed") {
		t.Fatal("the order was placed without the person")
	}
	h.OK("phone_tap", with("text", "Cancel"), "")

	// Settings: a long press on the Wi-Fi switch.
	h.OK("phone_launch", with("app", "Settings"), "Wi-Fi")
	asks(t, e, h, "phone_long_press", with("text", "Wi-Fi"))
	if !element(t, screenOf(e), "Wi-Fi").Checked {
		t.Fatal("Wi-Fi was switched off without the person")
	}
}

// TestKeyboardTypesNoPassword: while a password field has focus, the
// on-screen keyboard's keys are refused as typing is, and so is a long
// press on the field (a paste).
func TestKeyboardTypesNoPassword(t *testing.T) {
	e, h := gateEnv(t, askPolicy("com.pinky.sim.bank"), "sign in to the bank")
	h.OK("phone_launch", with("app", "Bank"), "Sign in")
	h.OK("phone_tap", with("text", "Password"), "keyboard")
	s := screenOf(e)
	for _, k := range []string{"h", "u", "enter"} {
		h.Fails("phone_tap", at(element(t, s, k)), "credentials")
		h.Fails("phone_long_press", at(element(t, s, k)), "credentials")
	}
	h.Fails("phone_swipe", with("from", map[string]any{"x": element(t, s, "h").Bounds.Center().X, "y": element(t, s, "h").Bounds.Center().Y},
		"to", map[string]any{"x": element(t, s, "j").Bounds.Center().X, "y": element(t, s, "j").Bounds.Center().Y}), "credentials")
	h.Fails("phone_long_press", with("text", "Password"), "credentials")
	if pw := element(t, screenOf(e), "Password"); pw.Text != "" && pw.Text != "Password" {
		t.Fatalf("the password field holds %q: keys reached it", pw.Text)
	}
	// The username is not a secret: the keyboard types into it.
	h.OK("phone_tap", with("text", "Username"), "")
	h.OK("phone_tap", at(element(t, screenOf(e), "a")), "")
	if u := element(t, screenOf(e), "Username"); u.Text != "a" {
		t.Errorf("the username field holds %q; want the key typed", u.Text)
	}
}

// block writes the default policy back (the Bank and the Authenticator
// blocked again, as if the person changed their mind while the app is in
// front) and waits until the daemon applies it.
func block(t *testing.T, e *e2e.Env, h *e2e.Host) {
	t.Helper()
	e.WriteFile("policy.yaml", askPolicy())
	var text string
	// Each check is an MCP call that reads the screen: a steady pace.
	if !testkit.PollEvery(15*time.Second, 200*time.Millisecond, func() bool {
		var isErr bool
		text, isErr = h.Tool("phone_observe", with())
		return isErr && strings.HasPrefix(text, "blocked_app:")
	}) {
		t.Fatalf("the blocked policy was not applied: %q", text)
	}
}

// TestBlockedAppIsNotOperatedBlind: with a blocked app in front, no action
// reaches the phone — by coordinates, typing, a long press, a swipe, a key
// — and the answer says blocked_app; home and back still work.
func TestBlockedAppIsNotOperatedBlind(t *testing.T) {
	e, h := gateEnv(t, askPolicy("com.pinky.sim.bank", "com.google.android.apps.authenticator2"), "look at the phone")
	h.OK("phone_launch", with("app", "Bank"), "Sign in")
	h.OK("phone_tap", with("text", "Username"), "keyboard")
	s := screenOf(e)
	user, key := element(t, s, "Username"), element(t, s, "m")
	block(t, e, h)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"phone_tap", at(key)},
		{"phone_tap", at(user)},
		{"phone_type", at(user, "text", "mallory")},
		{"phone_type", with("text", "mallory")},
		{"phone_long_press", at(user)},
		{"phone_swipe", with("from", map[string]any{"x": 540, "y": 600}, "to", map[string]any{"x": 540, "y": 1800})},
		{"phone_scroll", with("direction", "down")},
		{"phone_pinch", with("scale_percent", 200)},
		{"phone_key", with("key", "enter")},
		{"phone_open_url", with("url", "https://example.com/")},
	} {
		h.Fails(tc.tool, tc.args, "blocked_app")
	}
	if got := element(t, screenOf(e), "Username").Text; got != "" && got != "Username" {
		t.Fatalf("the Bank's username field holds %q: a blind action reached it", got)
	}
	h.OK("phone_key", with("key", "home"), "")
	// Its launcher icon does not open it again.
	h.Fails("phone_tap", with("text", "Bank"), "blocked_app")
	if got := screenOf(e).App.ID; got == "com.pinky.sim.bank" {
		t.Fatal("the Bank's icon opened it")
	}

	// The Authenticator: a blind tap would copy a code, and a paste in
	// Notes would show it.
	e.WriteFile("policy.yaml", askPolicy("com.pinky.sim.bank", "com.google.android.apps.authenticator2"))
	e.Eventually("the Authenticator is let through again", func() bool {
		text, isErr := h.Tool("phone_launch", with("app", "Authenticator"))
		return !isErr && strings.Contains(text, "Authenticator")
	})
	row := element(t, screenOf(e), "Google ana@example.com")
	block(t, e, h)
	h.Fails("phone_tap", at(row), "blocked_app")
	h.Fails("phone_long_press", at(row), "blocked_app")
	h.OK("phone_key", with("key", "home"), "")
	h.OK("phone_launch", with("app", "Notes"), "New note")
	h.OK("phone_tap", with("text", "New note"), "")
	text := h.OK("phone_long_press", with("text", "Note"), "")
	if strings.Contains(text, "305") || shows(screenOf(e), "305 118") {
		t.Fatalf("a code from the blocked Authenticator reached Notes: %q", text)
	}
}

// TestAppsOutsideTheTaskShowNothing: a task limited to Notes cannot open
// Messages from the launcher or a notification; an app outside the list
// that comes to the front another way (a link the person approved) shows
// nothing, and takes no action but home and back; read-only mode refuses
// uploads.
func TestAppsOutsideTheTaskShowNothing(t *testing.T) {
	e, h := gateEnv(t, askPolicy(), "tidy my notes", "Notes")
	if text := h.Fails("phone_tap", with("text", "Messages"), "scope_denied"); !strings.Contains(text, "would open Messages") {
		t.Errorf("tap on the Messages icon: %q; want it refused before it opens", text)
	}
	h.OK("phone_swipe", with("from", map[string]any{"x": 540, "y": 5}, "to", map[string]any{"x": 540, "y": 1500}), "Notifications")
	h.Fails("phone_tap", with("text", "Did you get the tickets?"), "scope_denied")
	h.OK("phone_key", with("key", "back"), "")
	if got := screenOf(e).App.Label; got == "Messages" {
		t.Fatal("Messages came to the front")
	}

	// A link the person approves opens the Browser, outside the task.
	text, _ := h.Tool("phone_open_url", with("url", "https://example.com/"))
	id := approvalID.FindString(text)
	e.Run("approve", id)
	text = h.Fails("phone_open_url", with("url", "https://example.com/", "approval_id", id), "scope_denied")
	if !strings.Contains(text, "your action was done") || strings.Contains(text, "example") {
		t.Fatalf("the answer shows the Browser: %q", text)
	}
	if got := screenOf(e).App.Label; got != "Browser" {
		t.Fatalf("the link did not open the Browser (%s in front); the test needs it", got)
	}
	for _, tool := range []string{"phone_observe", "phone_wait_for"} {
		args := with()
		if tool == "phone_wait_for" {
			args = with("text", "Reload", "timeout_ms", 1000)
		}
		if text := h.Fails(tool, args, "scope_denied"); strings.Contains(text, "example") || strings.Contains(text, "Reload") {
			t.Errorf("%s shows the Browser: %q", tool, text)
		}
	}
	r := h.Call("phone_observe", with("screenshot", true))
	if r.Images != 0 || !r.IsError {
		t.Errorf("phone_observe with a screenshot: %d images, error %v; want none", r.Images, r.IsError)
	}
	h.Fails("phone_tap", with("text", "Reload"), "scope_denied")
	h.Fails("phone_type", with("text", "evil.example\n"), "scope_denied")
	h.Fails("phone_key", with("key", "enter"), "scope_denied")
	h.OK("phone_key", with("key", "home"), "")
	h.OK("phone_launch", with("app", "Notes"), "New note")

	if _, errs, code := e.Run("settings", "--read-only", "on"); code != 0 {
		t.Fatalf("settings: %s", errs)
	}
	h.Fails("phone_upload", with("path", "a.txt", "content_base64", base64.StdEncoding.EncodeToString([]byte("hi"))), "scope_denied")
}

// TestApprovalBindsWhatThePersonSaw: the person approves a send while the
// field reads "harmless hello"; the agent retypes it, or opens another
// conversation, and reuses the approval: stale, nothing sent. The card
// says what is approved in a sentence, and "allow for this task" covers
// only the same recipient.
func TestApprovalBindsWhatThePersonSaw(t *testing.T) {
	e, h := gateEnv(t, askPolicy(), "reply to my friends")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	h.OK("phone_type", with("field", "Text message", "text", "harmless hello"), "harmless hello")
	text, _ := h.Tool("phone_tap", with("text", "Send"))
	id := approvalID.FindString(text)
	var cards []approval.Card
	e.JSON(&cards, "approvals")
	if len(cards) != 1 || cards[0].Summary != `Send "harmless hello" to Ben Okafor (in Messages)` || cards[0].Counterpart != "Ben Okafor" {
		b, _ := json.Marshal(cards)
		t.Fatalf("card: %s; want the sentence with the message and its recipient", b)
	}
	if out, _, _ := e.Run("approvals"); !strings.Contains(out, `Send "harmless hello" to Ben Okafor`) || !strings.Contains(out, "Ben Okafor") {
		t.Errorf("pinky approvals does not say what is approved:\n%s", out)
	}
	e.Run("approve", id)
	h.OK("phone_type", with("field", "Text message", "text", "EVIL-swapped-text", "replace", true), "EVIL")
	h.Fails("phone_tap", with("text", "Send", "approval_id", id), "stale")
	if shows(screenOf(e), "Me: EVIL-swapped-text") {
		t.Fatal("the swapped text was sent on the approval of another")
	}

	// The same call in another conversation.
	h.OK("phone_type", with("field", "Text message", "text", "harmless hello", "replace", true), "harmless hello")
	text, _ = h.Tool("phone_tap", with("text", "Send"))
	id = approvalID.FindString(text)
	e.Run("approve", id)
	h.OK("phone_tap", with("text", "Back"), "Ana Silva")
	h.OK("phone_tap", with("text", "Ana Silva"), "lunch")
	h.OK("phone_type", with("field", "Text message", "text", "harmless hello"), "harmless hello")
	h.Fails("phone_tap", with("text", "Send", "approval_id", id), "stale")
	if shows(screenOf(e), "Me: harmless hello") {
		t.Fatal("the approval for Ben sent a message to Ana")
	}

	// Allow for this task: Ana again goes without asking; Ben asks.
	text, _ = h.Tool("phone_tap", with("text", "Send"))
	id = approvalID.FindString(text)
	e.JSON(&cards, "approvals")
	if len(cards) != 1 || !strings.Contains(cards[0].ForTaskCovers, "Ana Silva") {
		t.Errorf("the card does not say what allow for this task covers: %+v", cards)
	}
	e.Run("approve", id, "--for-task")
	h.OK("phone_tap", with("text", "Send", "approval_id", id), "Me: harmless hello")
	h.OK("phone_type", with("field", "Text message", "text", "second to Ana"), "")
	h.OK("phone_tap", with("text", "Send"), "Me: second to Ana")
	h.OK("phone_tap", with("text", "Back"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "tickets")
	h.OK("phone_type", with("field", "Text message", "text", "to Ben"), "")
	asks(t, e, h, "phone_tap", with("text", "Send"))
}

// TestCardShowsWhatIsApproved: in the console, in real Chromium, the card
// says in a sentence what the person approves, what "allow for this task"
// would cover, and shows the screen when the agent asked (its picture is
// served, not "No screenshot").
func TestCardShowsWhatIsApproved(t *testing.T) {

	e := e2e.New(t)
	e.WriteFile("policy.yaml", askPolicy())
	e.Daemon("--sim", "--console", "127.0.0.1:0", "--approval-wait", "300ms", "--approval-ttl", "5m")
	e.Unlock(device)
	h := e.StdioHost()
	h.Initialize()
	h.OK("phone_connect", with("task", "reply to Ben"), "")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "tickets")
	h.OK("phone_type", with("field", "Text message", "text", "see you at 6"), "")
	text, _ := h.Tool("phone_tap", with("text", "Send"))
	id := approvalID.FindString(text)
	if id == "" {
		t.Fatalf("Send did not ask: %q", text)
	}
	var cards []approval.Card
	e.Eventually("the card has its picture", func() bool {
		e.JSON(&cards, "approvals")
		return len(cards) == 1 && cards[0].Screenshot != ""
	})
	out, _, _ := e.Run("approvals")
	m := regexp.MustCompile(`picture (\S+\.jpg)`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("pinky approvals does not name the picture:\n%s", out)
	} else if fi, err := os.Stat(m[1]); err != nil || fi.Size() == 0 {
		t.Errorf("the picture pinky approvals names is not there: %v", err)
	}
	link, errs, code := e.Run("open", "--no-browser")
	if code != 0 {
		t.Fatalf("pinky open: %s", errs)
	}
	ctx := e2e.Chromium(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(strings.TrimSpace(link))); err != nil {
		t.Fatal(err)
	}
	e2e.WaitJS(t, ctx, "the card's sentence", `document.getElementById('summary-`+id+`')`)
	e2e.WaitJS(t, ctx, "the card's picture loaded", `(() => { const i = document.getElementById('shot-`+id+`'); return i && i.complete && i.naturalWidth > 0 })()`)
	checkPage(t, ctx, "the card", `Send "see you at 6" to Ben Okafor`, `Allow for this task also allows`, `to "Ben Okafor" only`)
	if strings.Contains(mustEval(t, ctx, `document.getElementById('approval-`+id+`').innerText`), "No screenshot") {
		t.Error("the card says No screenshot")
	}

	// The history and the export keep the sentence and the picture.
	e.Run("approve", id)
	h.OK("phone_tap", with("text", "Send", "approval_id", id), "Me: see you at 6")
	var tasks []api.Task
	e.JSON(&tasks, "history")
	if len(tasks) != 1 {
		t.Fatalf("history: %+v", tasks)
	}
	if out, _, _ := e.Run("history", "show", tasks[0].ID); !strings.Contains(out, `asked: Send "see you at 6" to Ben Okafor`) {
		t.Errorf("pinky history show does not say what was approved:\n%s", out)
	}
	dir := filepath.Join(t.TempDir(), "report")
	if _, errs, code := e.Run("export", tasks[0].ID, dir); code != 0 {
		t.Fatalf("pinky export: %s", errs)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	img := regexp.MustCompile(`<img src="([^"]+)" alt="the screen when the agent asked"`).FindSubmatch(page)
	if !strings.Contains(string(page), `Send &#34;see you at 6&#34; to Ben Okafor`) || img == nil {
		t.Fatalf("the export lacks the approval's sentence or picture:\n%s", page)
	}
	if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(string(img[1])))); err != nil || fi.Size() == 0 {
		t.Errorf("the export's approval picture %s is not there: %v", img[1], err)
	}
}

func mustEval(t *testing.T, ctx context.Context, expr string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
