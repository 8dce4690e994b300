package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// TestAskPersonStillWithPerson: a phone_ask_person that reaches its cap
// with the phone still in the person's hands sends progress while it
// waits, then answers with a result (not an error) that says how to go
// on, its structured content valid against the output schema.
func TestAskPersonStillWithPerson(t *testing.T) {
	const dev = "sim-android-1"
	const msg = "waiting for the person to hand the phone back"
	fake := newFake()
	fake.obs = &agent.Observation{Device: dev, WithPerson: true, Settled: true, Step: "st-2",
		Text: "The person still has sim-android-1: they have not handed it back within 50s. Call phone_ask_person again (the same message is fine) to keep waiting, or phone_observe later."}
	fake.wait = func(ctx context.Context, progress agent.Progress) error {
		if progress == nil {
			return fmt.Errorf("no progress func")
		}
		progress(0, agent.MaxWait.Seconds(), msg)
		progress(5, agent.MaxWait.Seconds(), msg)
		return nil
	}
	c := connectStream(t, fake, Options{})
	var (
		mu  sync.Mutex
		got []map[string]any
	)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/progress" {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, n.Params.AdditionalFields)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: agent.ToolAskPerson,
		Arguments: map[string]any{"device": dev, "message": "Please sign in."}, Meta: &mcp.Meta{ProgressToken: "tok-2"}}})
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	if res.IsError {
		t.Fatalf("got an error result %q; want a result that says the person still has the phone", text)
	}
	if !strings.HasPrefix(text, dev+" · with the person\n") || !strings.Contains(text, "phone_ask_person again") || !strings.Contains(text, "phone_observe") {
		t.Errorf("got text %q; want the with-the-person header and how to go on", text)
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if !ok || sc["with_person"] != true || sc["device"] != dev || sc["step"] != "st-2" {
		t.Errorf("got structured content %#v; want with_person, the device and the step", res.StructuredContent)
	}
	testkit.Poll(testkit.Limit, func() bool { // the check below says what is missing
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 2
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("got progress %v; want 2 notifications", got)
	}
	for i, n := range got {
		if n["progressToken"] != "tok-2" || n["total"] != agent.MaxWait.Seconds() || n["message"] != msg {
			t.Errorf("notification %d: got %v; want token tok-2, total %v, message %q", i, n, agent.MaxWait.Seconds(), msg)
		}
	}
}

// TestWaitCapInSchema: phone_wait_for's timeout_ms allows no more than the
// gateway waits.
func TestWaitCapInSchema(t *testing.T) {
	if maxWaitMillis != agent.MaxWait.Milliseconds() {
		t.Errorf("maxWaitMillis %d; want agent.MaxWait, %d", maxWaitMillis, agent.MaxWait.Milliseconds())
	}
	prop, _ := PhoneWaitFor().Def.InputSchema.Properties["timeout_ms"].(map[string]any)
	if got := fmt.Sprint(prop["maximum"]); got != fmt.Sprint(agent.MaxWait.Milliseconds()) {
		t.Errorf("timeout_ms maximum %s; want %d", got, agent.MaxWait.Milliseconds())
	}
}
