//go:build race

package testkit

// Race reports whether the tests run under the race detector, which makes
// everything some times slower.
const Race = true
