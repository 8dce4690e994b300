package attack_test

import (
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestMain builds pinky and the drivers once for every attack.
func TestMain(m *testing.M) { e2e.Main(m) }
