package android

import (
	"errors"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
)

// The checks the driver reports on stderr for `pinky doctor`: a line with
// the attribute check=NAME at WARN says what is wrong (its message) and
// what to do (its attribute fix); a later line with the same check at INFO
// says that it is fine again.
const (
	CheckADB    = "adb"
	CheckScrcpy = "scrcpy"
)

// The scrcpy check's problem, and what to do.
const (
	scrcpyProblem = "no scrcpy server: input goes through adb shell input and there is no video"
	scrcpyFix     = "install scrcpy 3.x or 4.x (Debian/Ubuntu: apt install scrcpy; macOS: brew install scrcpy), " +
		"or set SCRCPY_SERVER_PATH and SCRCPY_SERVER_VERSION for the android driver in drivers.yaml"
)

// adbProblem says, for the person, why no adb server answers at addr, and
// what to do.
func adbProblem(err error, addr string) (problem, fix string) {
	switch {
	case errors.Is(err, adb.ErrADBNotInstalled):
		return "adb is not installed, and no adb server answers at " + addr,
			"install Android's platform tools (Debian/Ubuntu: apt install adb; " +
				"macOS: brew install --cask android-platform-tools; Windows: winget install Google.PlatformTools), " +
				"or turn the android driver off in drivers.yaml (android: {enabled: false}) if you use no Android phone"
	case errors.Is(err, adb.ErrServerNotRunning):
		return "no adb server answers at " + addr, "start one with `adb start-server`"
	default:
		return "the adb server at " + addr + " does not answer", "restart it with `adb kill-server` and then `adb start-server`"
	}
}
