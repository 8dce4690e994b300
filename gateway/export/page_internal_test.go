package export

import (
	"testing"

	"github.com/pinky-gateway/pinky/internal/safetext"
)

// TestPageSourceIsPlain checks that the template has no control character
// (tabs and newlines aside) and no bidirectional control of its own: write
// escapes every one left in the page, so the template must not need any.
func TestPageSourceIsPlain(t *testing.T) {
	if safetext.Text(pageSource) != pageSource {
		t.Error("pageSource holds a control character or a bidirectional control")
	}
}
