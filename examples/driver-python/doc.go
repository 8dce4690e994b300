// Package driverpython holds the tests of the example driver in Python
// beside it: they generate its protobuf code, run it through `pinky driver
// check` as a third party would, and check that it ends as SPEC.md asks, so
// that the contract's path for drivers in other languages stays true.
package driverpython
