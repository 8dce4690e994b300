package sim

import (
	"context"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestPermissionDialog: Notes asks for the notification permission, the
// permission controller's dialog shows over it (its elements of its own
// package, on top), and each answer closes it and tells Notes.
func TestPermissionDialog(t *testing.T) {
	for _, tt := range []struct {
		tap, want string
	}{
		{"Allow", "Reminders: on"},
		{"Don't allow", "Reminders: denied"},
	} {
		t.Run(tt.tap, func(t *testing.T) {
			d := newDefault(t)
			unlock(t, d, android)
			if _, err := d.Act(context.Background(), android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep"}); err != nil {
				t.Fatal(err)
			}
			if _, ok := find(screen(t, d, android), "Reminders: off"); !ok {
				t.Fatal("Notes: no \"Reminders: off\"")
			}
			tapOn(t, d, android, "Get reminders")
			s := screen(t, d, android)
			msg, ok := find(s, "Allow Notes to send you notifications?")
			if !ok {
				t.Fatal("the permission dialog is not on the screen")
			}
			if got, want := msg.ResourceID, "com.google.android.permissioncontroller:id/permission_message"; got != want {
				t.Errorf("message resource id: got %q; want %q", got, want)
			}
			allow, _ := find(s, "Allow")
			remind, _ := find(s, "Get reminders")
			if allow.ID < remind.ID {
				t.Errorf("Allow (%d) comes before the app's Get reminders (%d); want the dialog on top", allow.ID, remind.ID)
			}
			if s.App.ID != "com.google.android.keep" {
				t.Errorf("app in front: got %q; want Notes under its dialog", s.App.ID)
			}
			tapOn(t, d, android, tt.tap)
			s = screen(t, d, android)
			if _, ok := find(s, "Allow Notes to send you notifications?"); ok {
				t.Error("the dialog is still shown after an answer")
			}
			if _, ok := find(s, tt.want); !ok {
				t.Errorf("after %q: no %q", tt.tap, tt.want)
			}
		})
	}
}

// TestHiddenAppOffLauncher: the permission controller has no icon.
func TestHiddenAppOffLauncher(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	s := screen(t, d, android)
	if _, ok := find(s, "Permission controller"); ok {
		t.Error("the permission controller has a launcher icon")
	}
	if _, ok := find(s, "Notes"); !ok {
		t.Error("Notes has no launcher icon")
	}
}
