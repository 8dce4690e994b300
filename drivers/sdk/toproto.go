package sdk

import (
	"time"
	"unicode/utf8"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// This file converts SDK types to proto messages; fromproto.go goes back.
// Each pair has a table test in convert_test.go.

var (
	platformToProto = map[Platform]pb.Platform{
		PlatformAndroid: pb.Platform_PLATFORM_ANDROID, PlatformIOS: pb.Platform_PLATFORM_IOS, PlatformOther: pb.Platform_PLATFORM_OTHER,
	}
	connectionToProto = map[Connection]pb.Connection{
		ConnUSB: pb.Connection_CONNECTION_USB, ConnWiFi: pb.Connection_CONNECTION_WIFI,
		ConnVirtual: pb.Connection_CONNECTION_VIRTUAL, ConnNetwork: pb.Connection_CONNECTION_NETWORK,
	}
	stateToProto = map[DeviceState]pb.DeviceState{
		StateOnline: pb.DeviceState_DEVICE_STATE_ONLINE, StateOffline: pb.DeviceState_DEVICE_STATE_OFFLINE,
		StateUnauthorized: pb.DeviceState_DEVICE_STATE_UNAUTHORIZED, StateBooting: pb.DeviceState_DEVICE_STATE_BOOTING,
	}
	lockToProto = map[LockState]pb.LockState{
		LockUnlocked: pb.LockState_LOCK_STATE_UNLOCKED, LockLocked: pb.LockState_LOCK_STATE_LOCKED,
	}
	eventKindToProto = map[DeviceEventKind]pb.DeviceEventKind{
		DeviceAdded: pb.DeviceEventKind_DEVICE_EVENT_KIND_ADDED, DeviceChanged: pb.DeviceEventKind_DEVICE_EVENT_KIND_CHANGED,
		DeviceRemoved: pb.DeviceEventKind_DEVICE_EVENT_KIND_REMOVED, DevicesSynced: pb.DeviceEventKind_DEVICE_EVENT_KIND_SYNCED,
	}
	orientationToProto = map[Orientation]pb.Orientation{
		OrientationPortrait: pb.Orientation_ORIENTATION_PORTRAIT, OrientationLandscape: pb.Orientation_ORIENTATION_LANDSCAPE,
		OrientationPortraitUpsideDown: pb.Orientation_ORIENTATION_PORTRAIT_UPSIDE_DOWN, OrientationLandscapeRight: pb.Orientation_ORIENTATION_LANDSCAPE_RIGHT,
	}
	formatToProto = map[ImageFormat]pb.ImageFormat{FormatPNG: pb.ImageFormat_IMAGE_FORMAT_PNG, FormatJPEG: pb.ImageFormat_IMAGE_FORMAT_JPEG}
	codecToProto  = map[Codec]pb.Codec{CodecH264: pb.Codec_CODEC_H264, CodecH265: pb.Codec_CODEC_H265}
	scrollToProto = map[ScrollDirection]pb.ScrollDirection{
		ScrollUp: pb.ScrollDirection_SCROLL_DIRECTION_UP, ScrollDown: pb.ScrollDirection_SCROLL_DIRECTION_DOWN,
		ScrollLeft: pb.ScrollDirection_SCROLL_DIRECTION_LEFT, ScrollRight: pb.ScrollDirection_SCROLL_DIRECTION_RIGHT,
	}
	pointerToProto = map[PointerAction]pb.PointerAction{
		PointerDown: pb.PointerAction_POINTER_ACTION_DOWN, PointerMove: pb.PointerAction_POINTER_ACTION_MOVE,
		PointerUp: pb.PointerAction_POINTER_ACTION_UP, PointerCancel: pb.PointerAction_POINTER_ACTION_CANCEL,
	}
	keyActionToProto = map[KeyAction]pb.KeyAction{KeyDown: pb.KeyAction_KEY_ACTION_DOWN, KeyUp: pb.KeyAction_KEY_ACTION_UP}
	capToProto       = map[Capability]pb.Capability{
		CapInput: pb.Capability_CAPABILITY_INPUT, CapVideo: pb.Capability_CAPABILITY_VIDEO,
		CapFrameCapture: pb.Capability_CAPABILITY_FRAME_CAPTURE, CapWake: pb.Capability_CAPABILITY_WAKE,
		CapUnlock: pb.Capability_CAPABILITY_UNLOCK, CapLockEvents: pb.Capability_CAPABILITY_LOCK_EVENTS,
		CapWaitIdle: pb.Capability_CAPABILITY_WAIT_IDLE, CapApps: pb.Capability_CAPABILITY_APPS,
		CapFiles: pb.Capability_CAPABILITY_FILES, CapDisplays: pb.Capability_CAPABILITY_DISPLAYS,
		CapNotifications: pb.Capability_CAPABILITY_NOTIFICATIONS, CapPinch: pb.Capability_CAPABILITY_PINCH,
	}
	keyToProto = func() map[Key]pb.Key {
		m := make(map[Key]pb.Key, len(AllKeys))
		for i, k := range AllKeys {
			m[k] = pb.Key(i + 1) // AllKeys is in the proto's order
		}
		return m
	}()
)

func infoToProto(i Info) *pb.GetInfoResponse {
	r := &pb.GetInfoResponse{Name: i.Name, Version: i.Version, Description: i.Description}
	for _, p := range i.Platforms {
		r.Platforms = append(r.Platforms, platformToProto[p])
	}
	for _, c := range i.Capabilities {
		r.Capabilities = append(r.Capabilities, capToProto[c])
	}
	return r
}

func deviceToProto(d Device) *pb.Device {
	return &pb.Device{
		Id: d.ID, Name: d.Name, Model: d.Model, Manufacturer: d.Manufacturer,
		Platform: platformToProto[d.Platform], OsVersion: d.OSVersion,
		Connection: connectionToProto[d.Connection], State: stateToProto[d.State],
		LockState: lockToProto[d.LockState], ScreenOn: d.ScreenOn,
		StateDetail:  clipUTF8(d.StateDetail, MaxStateDetail),
		Capabilities: deviceCapsToProto(d.Caps),
	}
}

func deviceCapsToProto(c *DeviceCaps) *pb.DeviceCapabilities {
	if c == nil {
		return nil
	}
	out := &pb.DeviceCapabilities{}
	for _, x := range c.Served {
		out.Served = append(out.Served, capToProto[x])
	}
	for _, m := range c.Missing {
		out.Missing = append(out.Missing, &pb.MissingCapability{
			Capability: capToProto[m.Cap], Reason: clipUTF8(m.Reason, MaxStateDetail), Fix: clipUTF8(m.Fix, MaxStateDetail),
		})
	}
	return out
}

// clipUTF8 cuts s to at most n bytes, on a rune boundary.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func deviceEventToProto(e DeviceEvent) *pb.WatchDevicesResponse {
	r := &pb.WatchDevicesResponse{Kind: eventKindToProto[e.Kind]}
	if e.Kind != DevicesSynced {
		r.Device = deviceToProto(e.Device)
	}
	return r
}

func appToProto(a App) *pb.App {
	return &pb.App{Id: a.ID, Label: a.Label, Version: a.Version, System: a.System}
}

func rectToProto(r Rect) *pb.Rect {
	return &pb.Rect{Left: int32(r.Left), Top: int32(r.Top), Right: int32(r.Right), Bottom: int32(r.Bottom)}
}

func pointToProto(p Point) *pb.Point { return &pb.Point{X: int32(p.X), Y: int32(p.Y)} }

func elementToProto(e Element) *pb.Element {
	return &pb.Element{
		Id: int32(e.ID), ParentId: int32(e.ParentID), ClassName: e.Class, Text: e.Text,
		ContentDescription: e.ContentDescription, ResourceId: e.ResourceID, Hint: e.Hint, Value: e.Value,
		Bounds: rectToProto(e.Bounds), Clickable: e.Clickable, LongClickable: e.LongClickable,
		Focusable: e.Focusable, Focused: e.Focused, Editable: e.Editable, Password: e.Password,
		Scrollable: e.Scrollable, Checkable: e.Checkable, Checked: e.Checked, Enabled: e.Enabled,
		Selected: e.Selected, Visible: e.Visible,
	}
}

func screenToProto(s *Screen) *pb.Screen {
	if s == nil {
		return nil
	}
	r := &pb.Screen{
		ForegroundApp: appToProto(s.App), LockState: lockToProto[s.LockState], ScreenOn: s.ScreenOn,
		WidthPx: int32(s.Width), HeightPx: int32(s.Height), DensityDpi: int32(s.DensityDPI),
		Orientation: orientationToProto[s.Orientation], KeyboardShown: s.KeyboardShown,
		Elements: make([]*pb.Element, len(s.Elements)),
	}
	if !s.CapturedAt.IsZero() {
		r.CapturedAtMs = s.CapturedAt.UnixMilli()
	}
	for i, e := range s.Elements {
		r.Elements[i] = elementToProto(e)
	}
	return r
}

func imageToProto(i *Image) *pb.Image {
	if i == nil {
		return nil
	}
	return &pb.Image{Format: formatToProto[i.Format], Width: int32(i.Width), Height: int32(i.Height), Data: i.Data, Blanked: i.Blanked}
}

func screenshotRequestToProto(r ScreenshotRequest) *pb.ScreenshotRequest {
	return &pb.ScreenshotRequest{
		DeviceId: r.DeviceID, DisplayId: int32(r.DisplayID), Format: formatToProto[r.Format],
		MaxSide: int32(r.MaxSide), Quality: int32(r.Quality),
	}
}

func durationMS(d time.Duration) int32 { return int32(d / time.Millisecond) }

// actionToProto returns nil for an unknown kind; the server answers that with INVALID_ARGUMENT.
func actionToProto(deviceID string, a Action) *pb.ActRequest {
	r := &pb.ActRequest{DeviceId: deviceID, DisplayId: int32(a.DisplayID)}
	switch a.Kind {
	case ActTap:
		r.Action = &pb.ActRequest_Tap{Tap: &pb.Tap{Point: pointToProto(a.Point)}}
	case ActDoubleTap:
		r.Action = &pb.ActRequest_DoubleTap{DoubleTap: &pb.DoubleTap{Point: pointToProto(a.Point)}}
	case ActLongPress:
		r.Action = &pb.ActRequest_LongPress{LongPress: &pb.LongPress{Point: pointToProto(a.Point), DurationMs: durationMS(a.Duration)}}
	case ActSwipe:
		r.Action = &pb.ActRequest_Swipe{Swipe: &pb.Swipe{From: pointToProto(a.Point), To: pointToProto(a.To), DurationMs: durationMS(a.Duration)}}
	case ActScroll:
		s := &pb.Scroll{Direction: scrollToProto[a.Direction], AmountPermille: int32(a.Amount)}
		if a.HasPoint {
			s.Point = pointToProto(a.Point)
		}
		r.Action = &pb.ActRequest_Scroll{Scroll: s}
	case ActType:
		r.Action = &pb.ActRequest_TypeText{TypeText: &pb.TypeText{Text: a.Text, Replace: a.Replace, Submit: a.Submit}}
	case ActKey:
		r.Action = &pb.ActRequest_PressKey{PressKey: &pb.PressKey{Key: keyToProto[a.Key]}}
	case ActLaunch:
		r.Action = &pb.ActRequest_LaunchApp{LaunchApp: &pb.LaunchApp{AppId: a.AppID}}
	case ActStop:
		r.Action = &pb.ActRequest_StopApp{StopApp: &pb.StopApp{AppId: a.AppID}}
	case ActOpenURL:
		r.Action = &pb.ActRequest_OpenUrl{OpenUrl: &pb.OpenUrl{Url: a.URL}}
	case ActPinch:
		r.Action = &pb.ActRequest_Pinch{Pinch: &pb.Pinch{Center: pointToProto(a.Point), ScalePermille: int32(a.Scale), DurationMs: durationMS(a.Duration)}}
	}
	return r
}

func inputEventToProto(e InputEvent) *pb.InputRequest {
	r := &pb.InputRequest{DeviceId: e.DeviceID, DisplayId: int32(e.DisplayID)}
	switch {
	case e.Pointer != nil:
		r.Event = &pb.InputRequest_Pointer{Pointer: &pb.PointerEvent{
			Action: pointerToProto[e.Pointer.Action], PointerId: int32(e.Pointer.PointerID), Point: pointToProto(e.Pointer.Point),
		}}
	case e.Key != nil:
		r.Event = &pb.InputRequest_Key{Key: &pb.KeyEvent{Action: keyActionToProto[e.Key.Action], Key: keyToProto[e.Key.Key]}}
	case e.Text != "":
		r.Event = &pb.InputRequest_Text{Text: e.Text}
	}
	return r
}

func videoRequestToProto(r VideoRequest) *pb.StreamVideoRequest {
	return &pb.StreamVideoRequest{
		DeviceId: r.DeviceID, DisplayId: int32(r.DisplayID), Codec: codecToProto[r.Codec],
		MaxSide: int32(r.MaxSide), MaxFps: int32(r.MaxFPS), BitRate: int32(r.BitRate),
	}
}

func videoPacketToProto(p VideoPacket) *pb.VideoPacket {
	return &pb.VideoPacket{
		Codec: codecToProto[p.Codec], Config: p.Config, KeyFrame: p.KeyFrame, PtsUs: p.PTS.Microseconds(),
		Width: int32(p.Width), Height: int32(p.Height), Data: p.Data,
	}
}

func fileInfoToProto(f FileInfo) *pb.FileInfo {
	r := &pb.FileInfo{Name: f.Name, Size: f.Size, Dir: f.Dir}
	if !f.Modified.IsZero() {
		r.ModifiedMs = f.Modified.UnixMilli()
	}
	return r
}

func notificationToProto(n Notification) *pb.Notification {
	r := &pb.Notification{Id: n.ID, AppId: n.AppID, Title: n.Title, Text: n.Text}
	if !n.Posted.IsZero() {
		r.PostedAtMs = n.Posted.UnixMilli()
	}
	return r
}
