package history_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that closed stores and writers leave no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
