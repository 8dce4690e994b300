package adbd

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// model is what a real phone of a model reports in its properties.
type model struct {
	device   string // ro.product.device, name and board: the code name
	platform string // ro.board.platform: the system on chip
	brand    string // ro.product.brand
}

// models are the phones whose real properties the face knows, by
// ro.product.model; any other model gets names made from its model.
var models = map[string]model{
	"Pixel 6":     {"oriole", "gs101", "google"},
	"Pixel 6 Pro": {"raven", "gs101", "google"},
	"Pixel 6a":    {"bluejay", "gs101", "google"},
	"Pixel 7":     {"panther", "gs201", "google"},
	"Pixel 7 Pro": {"cheetah", "gs201", "google"},
	"Pixel 7a":    {"lynx", "gs201", "google"},
	"Pixel 8":     {"shiba", "zuma", "google"},
	"Pixel 8 Pro": {"husky", "zuma", "google"},
	"Pixel 8a":    {"akita", "zuma", "google"},
	"Pixel 9":     {"tokay", "zumapro", "google"},
	"Pixel 9 Pro": {"caiman", "zumapro", "google"},
}

// systemFeatures are a phone's system features as pm list features prints
// them (PackageManager.getSystemAvailableFeatures): a touch-screen phone
// with a camera, telephony and Wi-Fi.
var systemFeatures = []string{
	"reqGlEsVersion=0x30002",
	"android.hardware.audio.output",
	"android.hardware.bluetooth",
	"android.hardware.bluetooth_le",
	"android.hardware.camera",
	"android.hardware.camera.any",
	"android.hardware.camera.autofocus",
	"android.hardware.camera.flash",
	"android.hardware.camera.front",
	"android.hardware.faketouch",
	"android.hardware.fingerprint",
	"android.hardware.location",
	"android.hardware.location.gps",
	"android.hardware.location.network",
	"android.hardware.microphone",
	"android.hardware.nfc",
	"android.hardware.ram.normal",
	"android.hardware.screen.landscape",
	"android.hardware.screen.portrait",
	"android.hardware.sensor.accelerometer",
	"android.hardware.sensor.compass",
	"android.hardware.sensor.gyroscope",
	"android.hardware.sensor.light",
	"android.hardware.sensor.proximity",
	"android.hardware.telephony",
	"android.hardware.telephony.gsm",
	"android.hardware.touchscreen",
	"android.hardware.touchscreen.multitouch",
	"android.hardware.touchscreen.multitouch.distinct",
	"android.hardware.touchscreen.multitouch.jazzhand",
	"android.hardware.usb.accessory",
	"android.hardware.usb.host",
	"android.hardware.wifi",
	"android.hardware.wifi.direct",
	"android.software.app_widgets",
	"android.software.autofill",
	"android.software.backup",
	"android.software.device_admin",
	"android.software.home_screen",
	"android.software.input_methods",
	"android.software.live_wallpaper",
	"android.software.managed_users",
	"android.software.midi",
	"android.software.print",
	"android.software.verified_boot",
	"android.software.webview",
}

// hasFeature reports whether the phone has the feature NAME.
func hasFeature(name string) bool {
	return slices.Contains(systemFeatures, name)
}

// pmListFeatures prints "feature:NAME" lines, as pm list features does.
func pmListFeatures(io3 stdio) int {
	for _, f := range systemFeatures {
		fmt.Fprintf(io3.out, "feature:%s\n", f)
	}
	return 0
}

// cmdHasFeature is cmd package has-feature NAME [VERSION]: it prints true
// or false and exits 0 or 1 (PackageManagerShellCommand.runHasFeature).
func cmdHasFeature(args []string, io3 stdio) int {
	if len(args) == 0 {
		fmt.Fprintln(io3.err, "Error: must specify feature name")
		return 1
	}
	has := hasFeature(args[0])
	fmt.Fprintln(io3.out, has)
	if has {
		return 0
	}
	return 1
}

// dumpsysPackage is dumpsys package PKG: the package's entry, with the
// fields tools read (versionName, versionCode, codePath, userId, flags), or
// "Unable to find package" as a real phone prints for one it does not have.
func dumpsysPackage(ctx context.Context, d *Device, args []string, io3 stdio) int {
	var pkg string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") && strings.Contains(a, ".") {
			pkg = a
		}
	}
	apps, err := d.apps(ctx)
	if err != nil {
		return reportErr(io3, err)
	}
	out := io3.out
	if pkg == "" {
		fmt.Fprintln(out, "Packages:")
		for _, a := range apps {
			fmt.Fprintf(out, "  Package [%s] (%s):\n", a.ID, hashOf(a.ID))
		}
		return 0
	}
	i := slices.IndexFunc(apps, func(a sdk.App) bool { return a.ID == pkg })
	if i < 0 {
		fmt.Fprintf(out, "Dexopt state:\n  Unable to find package: %s\n\nCompiler stats:\n  Unable to find package: %s\n", pkg, pkg)
		return 0
	}
	a := apps[i]
	version := a.Version
	if version == "" {
		version = "1.0"
	}
	flags := "[ HAS_CODE ALLOW_CLEAR_USER_DATA ]"
	codePath := "/data/app/~~" + hashOf(pkg) + "==/" + pkg + "-1"
	if a.System {
		flags = "[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ]"
		codePath = "/system/priv-app/" + pkg
	}
	fmt.Fprintf(out, "Activity Resolver Table:\n  Non-Data Actions:\n      android.intent.action.MAIN:\n        %s %s filter %s\n          Action: \"android.intent.action.MAIN\"\n          Category: \"android.intent.category.LAUNCHER\"\n\n",
		hashOf(pkg+"/a"), component(pkg), hashOf(pkg+"/f"))
	fmt.Fprintf(out, "Packages:\n  Package [%s] (%s):\n    userId=10%03d\n    pkg=Package{%s %s}\n    codePath=%s\n    resourcePath=%s\n",
		pkg, hashOf(pkg), i, hashOf(pkg+"/p"), pkg, codePath, codePath)
	fmt.Fprintf(out, "    versionCode=%d minSdk=26 targetSdk=%s\n    versionName=%s\n    flags=%s\n", i+1, d.prop("ro.build.version.sdk"), version, flags)
	fmt.Fprintf(out, "    timeStamp=2025-01-05 10:00:00\n    firstInstallTime=2025-01-05 10:00:00\n    lastUpdateTime=2025-01-05 10:00:00\n    installerPackageName=com.android.vending\n")
	fmt.Fprintf(out, "    User 0: ceDataInode=0 installed=true hidden=false suspended=false distractionFlags=0 stopped=false notLaunched=false enabled=0 instant=false virtual=false\n")
	return 0
}

// hashOf is a stable seven-digit hexadecimal object id for s, like those
// dumpsys prints.
func hashOf(s string) string {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return fmt.Sprintf("%07x", h&0xfffffff)
}

// dumpsysSurfaceFlinger is dumpsys SurfaceFlinger --display-id: one line
// per physical display (a phone has one), as Android 10 and later print.
func dumpsysSurfaceFlinger(d *Device, args []string, io3 stdio) int {
	if !slices.Contains(args, "--display-id") {
		fmt.Fprintln(io3.out, "SurfaceFlinger state dump is not available in the Pinky sim; try --display-id")
		return 0
	}
	fmt.Fprintf(io3.out, "Display 4619827259835644672 (HWC display 0): port=0 pnpId=GGL displayName=\"%s\"\n", d.prop("ro.product.model"))
	return 0
}

// dumpsysInputMethod is dumpsys input_method: the default keyboard, and
// whether it shows (mInputShown), which tools read to tell whether a
// field has the keyboard up.
func dumpsysInputMethod(shown bool, io3 stdio) int {
	const ime = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
	fmt.Fprintf(io3.out, "Current Input Method Manager state:\n  Input Methods:\n    InputMethod #0:\n      mId=%s mSettingsActivityName=com.android.inputmethod.latin.settings.SettingsActivity\n", ime)
	fmt.Fprintf(io3.out, "  mCurMethodId=%s\n  mCurId=%s\n  mInputShown=%t\n  mShowRequested=%t\n  mIsInputViewShown=%t\n", ime, ime, shown, shown, shown)
	return 0
}

// clipboarder is a driver that keeps the phone's clipboard (the virtual
// phones do).
type clipboarder interface {
	Clipboard(ctx context.Context, deviceID string) (string, error)
}

// cmdClipboard is cmd clipboard get text: the clipboard's text as the
// shell reads it. Without a clipboard the driver can read, it prints an
// empty line.
func cmdClipboard(ctx context.Context, d *Device, args []string, io3 stdio) int {
	if len(args) < 1 || args[0] != "get" {
		fmt.Fprintln(io3.err, "Error: the Pinky sim has cmd clipboard get text only")
		return 255
	}
	text := ""
	if c, ok := d.cfg.Driver.(clipboarder); ok {
		var err error
		if text, err = c.Clipboard(ctx, d.id); err != nil {
			return reportErr(io3, err)
		}
	}
	fmt.Fprintln(io3.out, text)
	return 0
}

// cmdBroadcast is am broadcast: a real phone delivers the intent to
// whichever receivers it has and reports completion even when none took it
// (result 0), exiting 0. The virtual phone's apps have no receivers.
func cmdBroadcast(args []string, io3 stdio) int {
	var parts []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-a":
			if i+1 < len(args) {
				i++
				parts = append(parts, "act="+args[i])
			}
		case "-n":
			if i+1 < len(args) {
				i++
				parts = append(parts, "cmp="+args[i])
			}
		case "-p":
			if i+1 < len(args) {
				i++
				parts = append(parts, "pkg="+args[i])
			}
		case "-e", "--es", "--ez", "--ei", "--el", "--ef", "--eu":
			i += 2
		case "--user", "-f", "-c", "-d", "-t":
			i++
		}
	}
	parts = append(parts, "flg=0x400000")
	fmt.Fprintf(io3.out, "Broadcasting: Intent { %s }\nBroadcast completed: result=0\n", strings.Join(parts, " "))
	return 0
}

// cmdRunAs answers run-as as a user build does for the sim's apps, none of
// which is debuggable: "run-as: unknown package" for a package the phone
// does not have, "run-as: package not debuggable" for one it has, exit 1
// either way (AOSP's run-as.cpp). Peers use it to read an app's private
// files; on a phone with release builds it fails the same way.
func cmdRunAs(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 {
		fmt.Fprintln(io3.err, "usage: run-as <package-name> [--user <uid>] <command> [<args>]")
		return 1
	}
	if !sh.d.hasApp(sh.ctx, args[0]) {
		fmt.Fprintf(io3.err, "run-as: unknown package: %s\n", args[0])
		return 1
	}
	fmt.Fprintf(io3.err, "run-as: package not debuggable: %s\n", args[0])
	return 1
}
