package mcpclients

import (
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

func TestMain(m *testing.M) { e2e.Main(m) }
