package scrcpy

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrUnsupportedVersion is returned for a scrcpy-server version whose
// protocol this package does not speak.
var ErrUnsupportedVersion = errors.New("unsupported scrcpy-server version (supported: 3.x, 4.x)")

// Version is a parsed scrcpy-server version such as "3.3.4" or "4.1". The
// server starts only when the client sends its exact version string, so
// String returns the text that was parsed, unchanged.
type Version struct {
	Major, Minor, Patch int
	raw                 string
}

// ParseVersion parses a scrcpy-server version ("MAJOR.MINOR" or
// "MAJOR.MINOR.PATCH"). A malformed version or a major other than 3 or 4 is
// ErrUnsupportedVersion.
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(s, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("version %q: want MAJOR.MINOR[.PATCH]: %w", s, ErrUnsupportedVersion)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return Version{}, fmt.Errorf("version %q: %q is not a number: %w", s, p, ErrUnsupportedVersion)
		}
		n[i] = v
	}
	if n[0] != 3 && n[0] != 4 {
		return Version{}, fmt.Errorf("version %q: %w", s, ErrUnsupportedVersion)
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2], raw: s}, nil
}

// String returns the version exactly as parsed.
func (v Version) String() string { return v.raw }

// atLeast reports whether v is major.minor.patch or newer.
func (v Version) atLeast(major, minor, patch int) bool {
	if v.Major != major {
		return v.Major > major
	}
	if v.Minor != minor {
		return v.Minor > minor
	}
	return v.Patch >= patch
}

// streamMeta is the name of the option that turns the codec id and size (3.x)
// or session packets (4.x) on and off.
func (v Version) streamMeta() string {
	if v.Major >= 4 {
		return "send_stream_meta"
	}
	return "send_codec_meta"
}
