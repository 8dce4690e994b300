package sdk

import (
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// Fully populated values: every field set, so a field that a conversion
// forgets shows up in the round trips below.
var (
	fullDevice = Device{
		ID: "d1", Name: "Anna's phone", Model: "Pixel 8", Manufacturer: "Google", Platform: PlatformAndroid,
		OSVersion: "15", Connection: ConnUSB, State: StateOnline, LockState: LockLocked, ScreenOn: true,
		StateDetail: "accept the prompt on the phone",
		Caps: &DeviceCaps{Served: []Capability{CapInput, CapApps}, Missing: []MissingCap{
			{Cap: CapVideo, Reason: "no scrcpy server was found", Fix: "install scrcpy 3.x"},
			{Cap: CapDisplays, Reason: "Android 12 has no virtual displays"},
		}},
	}
	fullElement = Element{
		ID: 3, ParentID: 1, Class: "android.widget.Button", Text: "Send", ContentDescription: "send",
		ResourceID: "app:id/send", Hint: "hint", Value: "1", Bounds: Rect{1, 2, 30, 40},
		Clickable: true, LongClickable: true, Focusable: true, Focused: true, Editable: true, Password: true,
		Scrollable: true, Checkable: true, Checked: true, Enabled: true, Selected: true, Visible: true,
	}
	fullScreen = Screen{
		App: App{ID: "com.x", Label: "X", Version: "1.0", System: true}, LockState: LockUnlocked, ScreenOn: true,
		Width: 1080, Height: 2400, DensityDPI: 420, Orientation: OrientationLandscape, KeyboardShown: true,
		Elements: []Element{fullElement}, CapturedAt: time.UnixMilli(1700000000123),
	}
	fullImage      = Image{Format: FormatJPEG, Width: 10, Height: 20, Data: []byte{1, 2, 3}, Blanked: true}
	fullScreenshot = ScreenshotRequest{DeviceID: "d1", DisplayID: 2, Format: FormatJPEG, MaxSide: 640, Quality: 80}
	fullVideoReq   = VideoRequest{DeviceID: "d1", DisplayID: 1, Codec: CodecH265, MaxSide: 1280, MaxFPS: 30, BitRate: 8000000}
	fullPacket     = VideoPacket{Codec: CodecH264, Config: true, KeyFrame: true, PTS: 1500 * time.Microsecond, Width: 720, Height: 1600, Data: []byte{0, 0, 0, 1}}
	fullFile       = FileInfo{Name: "a.txt", Size: 12, Dir: true, Modified: time.UnixMilli(1700000000456)}
	fullNote       = Notification{ID: "n1", AppID: "com.x", Title: "Code", Text: "Your code is 123456", Posted: time.UnixMilli(1700000000789)}
	fullInfo       = Info{Name: "sim", Version: "1.2.3", Description: "virtual", Platforms: []Platform{PlatformAndroid, PlatformIOS}, Capabilities: AllCapabilities}
)

// eachField returns, for a struct value v, one copy per exported field that
// holds only that field. It fails when v leaves a field at its zero value.
func eachField[T any](t *testing.T, v T) map[string]T {
	t.Helper()
	rv := reflect.ValueOf(v)
	out := map[string]T{}
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Type().Field(i)
		if rv.Field(i).IsZero() {
			t.Fatalf("%s.%s is zero in the full fixture; set it so its conversion is tested", rv.Type().Name(), f.Name)
		}
		var one T
		reflect.ValueOf(&one).Elem().Field(i).Set(rv.Field(i))
		out[f.Name] = one
	}
	return out
}

func roundTrip[T any](t *testing.T, name string, v T, there func(T) T) {
	t.Helper()
	cases := eachField(t, v)
	cases["full"] = v
	var zero T
	cases["zero"] = zero
	for field, in := range cases {
		t.Run(name+"/"+field, func(t *testing.T) {
			if diff := cmp.Diff(in, there(in)); diff != "" {
				t.Errorf("round trip changed the value (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRoundTrips(t *testing.T) {
	roundTrip(t, "Device", fullDevice, func(d Device) Device { return deviceFromProto(deviceToProto(d)) })
	roundTrip(t, "Element", fullElement, func(e Element) Element { return elementFromProto(elementToProto(e)) })
	roundTrip(t, "Screen", fullScreen, func(s Screen) Screen { return *screenFromProto(screenToProto(&s)) })
	roundTrip(t, "Image", fullImage, func(i Image) Image { return *imageFromProto(imageToProto(&i)) })
	roundTrip(t, "ScreenshotRequest", fullScreenshot, func(r ScreenshotRequest) ScreenshotRequest {
		return screenshotRequestFromProto(screenshotRequestToProto(r))
	})
	roundTrip(t, "VideoRequest", fullVideoReq, func(r VideoRequest) VideoRequest { return videoRequestFromProto(videoRequestToProto(r)) })
	roundTrip(t, "VideoPacket", fullPacket, func(p VideoPacket) VideoPacket { return videoPacketFromProto(videoPacketToProto(p)) })
	roundTrip(t, "FileInfo", fullFile, func(f FileInfo) FileInfo { return fileInfoFromProto(fileInfoToProto(f)) })
	roundTrip(t, "Info", fullInfo, func(i Info) Info { return infoFromProto(infoToProto(i)) })
	roundTrip(t, "Notification", fullNote, func(n Notification) Notification { return notificationFromProto(notificationToProto(n)) })
	roundTrip(t, "App", fullScreen.App, func(a App) App { return appFromProto(appToProto(a)) })
}

func TestDeviceEvents(t *testing.T) {
	for _, e := range []DeviceEvent{
		{Kind: DeviceAdded, Device: fullDevice},
		{Kind: DeviceChanged, Device: fullDevice},
		{Kind: DeviceRemoved, Device: Device{ID: "d1"}},
		{Kind: DevicesSynced},
	} {
		if got := deviceEventFromProto(deviceEventToProto(e)); !cmp.Equal(got, e) {
			t.Errorf("event %s: got %+v; want %+v", e.Kind, got, e)
		}
	}
	if got := deviceEventToProto(DeviceEvent{Kind: DevicesSynced}); got.Device != nil {
		t.Errorf("synced event carries a device: %v", got.Device)
	}
}

func TestActions(t *testing.T) {
	p, q := Point{X: 10, Y: 20}, Point{X: 30, Y: 40}
	for _, a := range []Action{
		{Kind: ActTap, Point: p, DisplayID: 1},
		{Kind: ActDoubleTap, Point: p},
		{Kind: ActLongPress, Point: p, Duration: 800 * time.Millisecond},
		{Kind: ActSwipe, Point: p, To: q, Duration: 300 * time.Millisecond},
		{Kind: ActScroll, Direction: ScrollDown, Amount: 500},
		{Kind: ActScroll, Direction: ScrollLeft, Point: p, HasPoint: true},
		{Kind: ActType, Text: "héllo 世界", Replace: true, Submit: true},
		{Kind: ActLaunch, AppID: "com.x"},
		{Kind: ActStop, AppID: "com.x"},
		{Kind: ActOpenURL, URL: "https://example.com/a?b=c"},
		{Kind: ActPinch, Point: p, Scale: 2000, Duration: 400 * time.Millisecond},
		{Kind: ActPinch, Point: q, Scale: 500},
	} {
		got, ok := actionFromProto(actionToProto("d1", a))
		if !ok || !cmp.Equal(got, a) {
			t.Errorf("action %s: got %+v (ok %v); want %+v", a.Kind, got, ok, a)
		}
	}
	for _, k := range AllKeys {
		a := Action{Kind: ActKey, Key: k}
		if got, _ := actionFromProto(actionToProto("d1", a)); got.Key != k {
			t.Errorf("key %s: got %q", k, got.Key)
		}
	}
	if _, ok := actionFromProto(&pb.ActRequest{DeviceId: "d1"}); ok {
		t.Error("a request without an action converted")
	}
	if r := actionToProto("d1", Action{Kind: "bogus"}); r.Action != nil {
		t.Errorf("an unknown kind converted to %v", r.Action)
	}
}

func TestKeysMatchProtoOrder(t *testing.T) {
	for i, k := range AllKeys {
		name := pb.Key(i + 1).String()
		if want := "KEY_" + upper(string(k)); name != want {
			t.Errorf("AllKeys[%d] = %q maps to %s; want %s", i, k, name, want)
		}
	}
	if n := len(pb.Key_name) - 1; n != len(AllKeys) {
		t.Errorf("proto has %d keys; AllKeys has %d", n, len(AllKeys))
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func TestEnumsCoverProto(t *testing.T) {
	// Every proto enum value except UNSPECIFIED has an SDK counterpart.
	for _, tt := range []struct {
		name  string
		proto map[int32]string
		sdk   int
	}{
		{"Platform", pb.Platform_name, len(platformToProto)},
		{"Connection", pb.Connection_name, len(connectionToProto)},
		{"DeviceState", pb.DeviceState_name, len(stateToProto)},
		{"LockState", pb.LockState_name, len(lockToProto)},
		{"DeviceEventKind", pb.DeviceEventKind_name, len(eventKindToProto)},
		{"Orientation", pb.Orientation_name, len(orientationToProto)},
		{"ImageFormat", pb.ImageFormat_name, len(formatToProto)},
		{"Codec", pb.Codec_name, len(codecToProto)},
		{"ScrollDirection", pb.ScrollDirection_name, len(scrollToProto)},
		{"PointerAction", pb.PointerAction_name, len(pointerToProto)},
		{"KeyAction", pb.KeyAction_name, len(keyActionToProto)},
		{"Capability", pb.Capability_name, len(capToProto)},
	} {
		if got, want := tt.sdk, len(tt.proto)-1; got != want {
			t.Errorf("%s: SDK maps %d values; want %d", tt.name, got, want)
		}
	}
}

func TestInputEvents(t *testing.T) {
	for _, e := range []InputEvent{
		{DeviceID: "d1", DisplayID: 1, Pointer: &PointerEvent{Action: PointerMove, PointerID: 2, Point: Point{X: 5, Y: 6}}},
		{DeviceID: "d1", Key: &KeyEvent{Action: KeyUp, Key: KeyVolumeDown}},
		{DeviceID: "d1", Text: "hi"},
	} {
		got, ok := inputEventFromProto(inputEventToProto(e))
		if !ok || !cmp.Equal(got, e) {
			t.Errorf("got %+v (ok %v); want %+v", got, ok, e)
		}
	}
	if _, ok := inputEventFromProto(&pb.InputRequest{DeviceId: "d1"}); ok {
		t.Error("an input message without an event converted")
	}
}

func TestNilMessages(t *testing.T) {
	if screenToProto(nil) != nil || screenFromProto(nil) != nil || imageToProto(nil) != nil || imageFromProto(nil) != nil {
		t.Error("nil did not convert to nil")
	}
	// Nil sub-messages read as zero values.
	if got := elementFromProto(&pb.Element{Id: 1}); got.Bounds != (Rect{}) {
		t.Errorf("nil bounds: got %v", got.Bounds)
	}
	if got := deviceFromProto(nil); got != (Device{}) {
		t.Errorf("nil device: got %+v", got)
	}
}

func TestUnknownEnumValues(t *testing.T) {
	// A newer peer may send values this SDK does not know: they read as zero.
	got := deviceFromProto(&pb.Device{Id: "d", Platform: 99, Connection: 99, State: 99})
	want := Device{ID: "d"}
	if got != want {
		t.Errorf("got %+v; want %+v", got, want)
	}
	info := infoFromProto(&pb.GetInfoResponse{Capabilities: []pb.Capability{99, pb.Capability_CAPABILITY_WAKE}})
	if !cmp.Equal(info.Capabilities, []Capability{CapWake}) {
		t.Errorf("capabilities: got %v", info.Capabilities)
	}
}

func TestScreenProtoShape(t *testing.T) {
	got := screenToProto(&Screen{Width: 2, Height: 3, Elements: []Element{{ID: 1, Bounds: Rect{0, 0, 2, 3}}}})
	want := &pb.Screen{
		ForegroundApp: &pb.App{}, WidthPx: 2, HeightPx: 3,
		Elements: []*pb.Element{{Id: 1, Bounds: &pb.Rect{Right: 2, Bottom: 3}}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestDeviceCaps: a device without Caps serves its driver's capabilities;
// with Caps, exactly those it serves that its driver declares; an empty
// Served (a device that serves nothing optional now) stays empty over the
// wire, not "the driver's".
func TestDeviceCaps(t *testing.T) {
	driver := []Capability{CapInput, CapVideo, CapApps}
	old := Device{ID: "old"}
	if !old.Serves(CapVideo, driver) || old.Serves(CapFiles, driver) {
		t.Error("a device without Caps: want its driver's capabilities")
	}
	d := fullDevice
	for c, want := range map[Capability]bool{CapInput: true, CapApps: true, CapVideo: false, CapDisplays: false, CapFiles: false} {
		if got := d.Serves(c, driver); got != want {
			t.Errorf("Serves(%s) = %v; want %v", c, got, want)
		}
	}
	if m, ok := d.Missing(CapVideo); !ok || m.Fix != "install scrcpy 3.x" {
		t.Errorf("Missing(video) = %+v, %v", m, ok)
	}
	none := deviceFromProto(deviceToProto(Device{ID: "d", Caps: &DeviceCaps{}}))
	if none.Caps == nil || len(none.Caps.Served) != 0 || none.Serves(CapInput, driver) {
		t.Errorf("a device serving nothing optional, over the wire: %+v", none.Caps)
	}
}

func TestStateDetailClipped(t *testing.T) {
	long := strings.Repeat("é", MaxStateDetail) // two bytes each
	got := deviceFromProto(deviceToProto(Device{ID: "d", StateDetail: long})).StateDetail
	if len(got) > MaxStateDetail || !utf8.ValidString(got) || !strings.HasPrefix(long, got) || len(got) < MaxStateDetail-1 {
		t.Errorf("a %d-byte detail arrives as %d bytes (valid UTF-8: %v); want it cut to at most %d on a rune boundary",
			len(long), len(got), utf8.ValidString(got), MaxStateDetail)
	}
}
