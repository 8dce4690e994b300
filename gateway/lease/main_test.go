package lease_test

import (
	"os"
	"testing"

	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// TestMain stops the PostgreSQL test server after the tests.
func TestMain(m *testing.M) {
	os.Exit(pgtest.Main(m).Run())
}
