package screen

import (
	"testing"

	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// TestSize holds the compact text to its budget: at most a third of a flat
// JSON list of the elements, and a tenth of the raw UI Automator XML.
func TestSize(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			s, raw := loadFixture(t, name)
			text := len(NewModel().Read(s).Text())
			flat := len(flatJSON(t, s))
			if text*3 > flat {
				t.Errorf("compact text %d bytes; want at most a third of the flat JSON (%d bytes)", text, flat)
			}
			if isUIAutomator(raw) && text*10 > len(raw) {
				t.Errorf("compact text %d bytes; want at most a tenth of the raw XML (%d bytes)", text, len(raw))
			}
		})
	}
	for _, tt := range simScreens {
		t.Run("sim-"+tt.name, func(t *testing.T) {
			p := simtest.NewPhone(t, tt.id)
			tt.setup(p)
			s := p.Screen()
			text := len(NewModel().Read(s).Text())
			if flat := len(flatJSON(t, s)); text*3 > flat {
				t.Errorf("compact text %d bytes; want at most a third of the flat JSON (%d bytes)", text, flat)
			}
		})
	}
}
