package scrcpyd

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The list options print what Server.internalMain prints for them (from
// LogUtils.java) and end the server without a connection.

// videoEncoder is the virtual phone's one encoder, Android's software AVC
// encoder.
const videoEncoder = "c2.android.avc.encoder"

// lists holds which of list_encoders, list_displays, list_cameras,
// list_camera_sizes and list_apps were asked.
type lists struct {
	encoders, displays, cameras, cameraSizes, apps bool
}

func (l lists) any() bool {
	return l.encoders || l.displays || l.cameras || l.cameraSizes || l.apps
}

// displayLister is the adb face, which knows the displays it made.
type displayLister interface {
	Displays() []int
}

// printLists logs the lists asked for, as the real server does before it
// exits with status 0.
func (srv Server) printLists(ctx context.Context, l lists, disp sdk.Displayer, log *logger) {
	if l.encoders {
		line := "\n    --video-codec=h264 --video-encoder=" + videoEncoder
		if pad := 70 - len(line); pad > 0 {
			line += strings.Repeat(" ", pad)
		}
		log.log(levelInfo, "List of video encoders:%s (sw)", line)
		// The virtual phone captures no audio: it has no audio encoder.
		log.log(levelInfo, "List of audio encoders:")
	}
	if l.displays {
		ids := []int{0}
		if dl, ok := disp.(displayLister); ok {
			ids = append(ids, dl.Displays()...)
		}
		var b strings.Builder
		b.WriteString("List of displays:")
		for _, id := range ids {
			fmt.Fprintf(&b, "\n    --display-id=%d    (", id)
			if scr, err := srv.Driver.Screen(ctx, srv.Device, id); err == nil {
				fmt.Fprintf(&b, "%dx%d", scr.Width, scr.Height)
			} else {
				b.WriteString("size unknown")
			}
			b.WriteString(")")
		}
		log.log(levelInfo, "%s", b.String())
	}
	if l.cameras || l.cameraSizes {
		log.log(levelInfo, "List of cameras:\n    (none)")
	}
	if l.apps {
		log.log(levelInfo, "Processing Android apps... (this may take some time)")
		var apps []sdk.App
		if al, ok := srv.Driver.(sdk.AppLister); ok {
			apps, _ = al.ListApps(ctx, srv.Device)
		}
		log.log(levelInfo, "%s", appList(apps))
	}
}

// appList is LogUtils.buildAppListMessage: system apps first, then by
// name, then by package; names padded to 30 UTF-16 units, or the package
// on a line of its own after a longer name.
func appList(apps []sdk.App) string {
	apps = append([]sdk.App(nil), apps...)
	sort.SliceStable(apps, func(i, j int) bool {
		a, b := apps[i], apps[j]
		if a.System != b.System {
			return a.System
		}
		if a.Label != b.Label {
			return javaLess(a.Label, b.Label)
		}
		return javaLess(a.ID, b.ID)
	})
	const column = 30
	var b strings.Builder
	b.WriteString("List of apps:")
	for _, a := range apps {
		b.WriteString("\n ")
		if a.System {
			b.WriteString("* ")
		} else {
			b.WriteString("- ")
		}
		b.WriteString(a.Label)
		if pad := column - len(utf16.Encode([]rune(a.Label))); pad > 0 {
			b.WriteString(strings.Repeat(" ", pad))
		} else {
			b.WriteString("\n   " + strings.Repeat(" ", column))
		}
		b.WriteString(" " + a.ID)
	}
	return b.String()
}

// javaLess orders strings as Java's String.compareTo does, by UTF-16 code
// units.
func javaLess(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}
