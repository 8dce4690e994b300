//go:build !(linux || darwin)

package doctor

import "errors"

// FreeBytes measures the bytes free on path's file system; it is not
// measured on this system yet.
func FreeBytes(string) (uint64, error) {
	return 0, errors.New("free space is not measured on this system")
}
