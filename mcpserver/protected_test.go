package mcpserver

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/pinky-gateway/pinky/gateway/agent"
)

// An observation of a screen the app will not let be captured is shown as
// text with its note and no image; any other keeps its screenshot.
func TestObservationResultOfASecureScreen(t *testing.T) {
	for _, tt := range []struct {
		name   string
		obs    agent.Observation
		images int
	}{
		{"protected", agent.Observation{Device: "sim-android-1", Full: true, Settled: true, Protected: true,
			Text: agent.NoteScreenProtected + ": the app in front blocks screenshots.\napp Films (com.pinky.sim.films) · unlocked · 1080x2400"}, 0},
		{"with a screenshot", agent.Observation{Device: "sim-android-1", Full: true, Settled: true, Screenshot: []byte{0xff, 0xd8},
			Text: "app Settings (com.android.settings) · unlocked · 1080x2400"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := observationResult(&tt.obs)
			images, text := 0, ""
			for _, c := range res.Content {
				switch c := c.(type) {
				case mcp.ImageContent:
					images++
				case mcp.TextContent:
					text += c.Text
				}
			}
			if images != tt.images {
				t.Errorf("images: got %d; want %d", images, tt.images)
			}
			if got := strings.Contains(text, agent.NoteScreenProtected+": "); got != tt.obs.Protected {
				t.Errorf("the note in the text: got %v; want %v (%q)", got, tt.obs.Protected, text)
			}
		})
	}
}
