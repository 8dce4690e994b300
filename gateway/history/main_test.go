package history_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// TestMain checks that closed stores and writers leave no goroutine behind,
// and stops the PostgreSQL test server after the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(pgtest.Main(m))
}
