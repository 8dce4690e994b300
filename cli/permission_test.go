package cli_test

import (
	"testing"
)

// TestAndroidPermissionDialog: through pinky mcp and pinky-driver-android
// on a real adb server, an app asks for a permission; the permission
// controller's dialog (a window of its own over the app) is read, a tap on
// Allow asks the person, then answers the dialog, and the app shows the
// permission granted.
func TestAndroidPermissionDialog(t *testing.T) {
	e, _, h, dev := androidTask(t, "android: turn on Notes reminders")
	h.OK("phone_launch", dev("app", "com.google.android.keep"), "Reminders: off")
	h.OK("phone_tap", dev("text", "Get reminders"), "Allow Notes to send you notifications?")
	h.OK("phone_observe", dev("full", true), "Don't allow")
	e.approveNext(t) // granting a permission asks the person (grant_permission)
	h.OK("phone_tap", dev("text", "Allow"), "Reminders: on")
	h.OK("phone_release", dev(), "")
}
