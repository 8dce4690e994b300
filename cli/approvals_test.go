package cli_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// TestApprovalsThroughMCP: an agent taps Send in the virtual Messages; the
// policy asks. Approve while the call waits; deny; the approval_pending
// path with a retry by id; a reused, altered or foreign id is refused.
func TestApprovalsThroughMCP(t *testing.T) {
	e := newEnv(t)
	// The wait leaves the person (this test, through the CLI) time to
	// decide on a loaded machine; the approval_pending case below waits it out.
	e.Daemon("--sim", "--approval-wait", "3s")
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", "reply to Ben"), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	reply := func(text string) {
		t.Helper()
		h.OK("phone_type", with("field", "Text message", "text", text), text)
	}
	pending := func() api.Card {
		t.Helper()
		var cards []api.Card
		e.Eventually("a card opens", func() bool {
			e.JSON(&cards, "approvals")
			return len(cards) == 1
		})
		return cards[0]
	}

	// Approve while the call waits.
	reply("first")
	done := make(chan string, 1)
	go func() { text, _ := h.Tool("phone_tap", with("text", "Send")); done <- text }()
	card := pending()
	if card.Commit != "send_message" || card.Agent != "e2e-agent" || !strings.Contains(card.Target, `"Send"`) {
		t.Errorf("card: %+v", card)
	}
	if out, errs, code := e.Run("approve", card.ID); code != 0 || !strings.Contains(out, "approved") {
		t.Fatalf("pinky approve: %s%s", out, errs)
	}
	if text := <-done; !strings.Contains(text, "Me: first") {
		t.Errorf("approved send: %q", text)
	}

	// Deny while the call waits.
	reply("second")
	go func() { text, _ := h.Tool("phone_tap", with("text", "Send")); done <- text }()
	card = pending()
	e.Run("deny", card.ID, "--reason", "not that")
	if text := <-done; !strings.HasPrefix(text, "denied:") || !strings.Contains(text, "not that") {
		t.Errorf("denied send: %q", text)
	}

	// Nobody answers within the wait: approval_pending with the id.
	text, _ := h.Tool("phone_tap", with("text", "Send"))
	id := regexp.MustCompile(`ap_[0-9a-f]+`).FindString(text)
	if !strings.HasPrefix(text, "approval_pending:") || id == "" {
		t.Fatalf("unanswered send: %q; want approval_pending with an id", text)
	}
	h.Fails("phone_key", with("key", "back"), "approval_pending") // the phone waits for the person
	e.Run("approve", id)
	h.Fails("phone_tap", with("text", "Back", "approval_id", id), "invalid_argument") // altered
	other := e.StdioHost()
	other.Initialize()
	other.Fails("phone_tap", with("text", "Send", "approval_id", id), "lease_held") // foreign session
	h.OK("phone_tap", with("text", "Send", "approval_id", id), "Me: second")
	h.Fails("phone_tap", with("text", "Send", "approval_id", id), "invalid_argument") // reused

	var all []api.Card
	e.JSON(&all, "approvals", "--all")
	statuses := map[string]int{}
	for _, c := range all {
		statuses[c.Status]++
	}
	if statuses[api.ApprovalApproved] != 2 || statuses[api.ApprovalDenied] != 1 {
		b, _ := json.Marshal(all)
		t.Errorf("approvals: %s; want two approved and one denied", b)
	}
}

// TestApprovalExpiresAsADeny: nobody answers; the card expires (here after
// 2 s) and the waiting call answers denied; the message is not sent.
func TestApprovalExpiresAsADeny(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim", "--approval-ttl", "2s", "--approval-wait", "10s")
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", "reply to Ben"), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	h.OK("phone_type", with("field", "Text message", "text", "unanswered"), "unanswered")
	text, isErr := h.Tool("phone_tap", with("text", "Send"))
	if !isErr || !strings.HasPrefix(text, "denied:") || !strings.Contains(text, "did not answer") {
		t.Errorf("unanswered send: %q; want denied because nobody answered", text)
	}
	var all []api.Card
	e.JSON(&all, "approvals", "--all")
	if len(all) != 1 || all[0].Status != api.ApprovalExpired {
		t.Errorf("approvals: %+v; want one expired", all)
	}
	obs := h.OK("phone_observe", with("full", true), "")
	if strings.Contains(obs, "Me: unanswered") {
		t.Error("the message was sent without an approval")
	}
}

// TestApprovedOnAChangedScreenIsNotDone: while a card waits, the phone's
// screen changes under the target (here its driver restarts and comes
// back on another screen); the approved retry is refused, not executed.
func TestApprovedOnAChangedScreenIsNotDone(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim", "--approval-wait", "500ms")
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", "reply to Ben"), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	h.OK("phone_type", with("field", "Text message", "text", "late"), "late")
	text, _ := h.Tool("phone_tap", with("text", "Send"))
	id := regexp.MustCompile(`ap_[0-9a-f]+`).FindString(text)
	if !strings.HasPrefix(text, "approval_pending:") || id == "" {
		t.Fatalf("send: %q; want approval_pending", text)
	}
	// The screen changes under the target: the driver restarts.
	if _, errs, code := e.Run("driver", "restart", "sim"); code != 0 {
		t.Fatalf("driver restart: %s", errs)
	}
	e.Unlock("sim-android-1")
	e.Run("approve", id)
	text, isErr := h.Tool("phone_tap", with("text", "Send", "approval_id", id))
	if !isErr || !(strings.HasPrefix(text, "stale:") || strings.HasPrefix(text, "not_found:")) {
		t.Fatalf("approved send on a changed screen: %q; want stale (or not_found: the target is gone)", text)
	}
	t.Logf("approved send on a changed screen: %s", text)
	obs := h.OK("phone_observe", with("full", true), "")
	if strings.Contains(obs, "Me: late") {
		t.Error("the message was sent on a changed screen")
	}
}
