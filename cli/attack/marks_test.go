package attack_test

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen/marks"
)

// TestMarkOverSendAsks: a tap by mark is a tap at its cell's centre, judged
// on what is there. The agent asks for marks on the Messages thread, where
// the tree is complete, and taps the mark over Send: the person is asked,
// and nothing is sent.
func TestMarkOverSendAsks(t *testing.T) {
	e, h := gateEnv(t, askPolicy(), "reply to Ben")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	h.OK("phone_type", with("field", "Text message", "text", "harmless hello"), "harmless hello")
	r := h.Call("phone_observe", with("marks", true))
	if r.IsError || r.Images != 1 || !strings.Contains(r.Text, "phone_tap mark=N") {
		t.Fatalf("observe with marks: got %q with %d images; want the note and a marked screenshot", r.Text, r.Images)
	}
	s := screenOf(e)
	send := element(t, s, "Send")
	// The grid the gateway lays over the Pixel's screen below its status bar.
	g := marks.New(sdk.Rect{Top: (24*s.DensityDPI + 80) / 160, Right: s.Width, Bottom: s.Height}, s.Width, s.Height, s.DensityDPI)
	if n, _ := r.Structured["marks"].(float64); int(n) != g.Len() {
		t.Fatalf("got %v marks; want %d", r.Structured["marks"], g.Len())
	}
	mark := 0
	for n := 1; n <= g.Len() && mark == 0; n++ {
		if c, _ := g.Center(n); send.Bounds.Contains(c) {
			mark = n
		}
	}
	if mark == 0 {
		t.Fatalf("no mark's centre on Send %+v", send.Bounds)
	}
	if c := asks(t, e, h, "phone_tap", with("mark", mark)); c.Commit != "send_message" {
		t.Errorf("card commit %q; want send_message", c.Commit)
	}
	if shows(screenOf(e), "Me: harmless hello") {
		t.Fatal("the message was sent without the person")
	}
}
