package sdk

import (
	"slices"
	"time"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

func invert[K comparable, V comparable](m map[K]V) map[V]K {
	r := make(map[V]K, len(m))
	for k, v := range m {
		r[v] = k
	}
	return r
}

// Unknown enum values (a newer peer) map to the zero value of the SDK type.
var (
	platformFromProto    = invert(platformToProto)
	connectionFromProto  = invert(connectionToProto)
	stateFromProto       = invert(stateToProto)
	lockFromProto        = invert(lockToProto)
	eventKindFromProto   = invert(eventKindToProto)
	orientationFromProto = invert(orientationToProto)
	formatFromProto      = invert(formatToProto)
	codecFromProto       = invert(codecToProto)
	scrollFromProto      = invert(scrollToProto)
	pointerFromProto     = invert(pointerToProto)
	keyActionFromProto   = invert(keyActionToProto)
	capFromProto         = invert(capToProto)
	keyFromProto         = invert(keyToProto)
)

func infoFromProto(r *pb.GetInfoResponse) Info {
	i := Info{Name: r.GetName(), Version: r.GetVersion(), Description: r.GetDescription()}
	for _, p := range r.GetPlatforms() {
		i.Platforms = append(i.Platforms, platformFromProto[p])
	}
	for _, c := range r.GetCapabilities() {
		if x, ok := capFromProto[c]; ok {
			i.Capabilities = append(i.Capabilities, x)
		}
	}
	return i
}

func deviceFromProto(d *pb.Device) Device {
	return Device{
		ID: d.GetId(), Name: d.GetName(), Model: d.GetModel(), Manufacturer: d.GetManufacturer(),
		Platform: platformFromProto[d.GetPlatform()], OSVersion: d.GetOsVersion(),
		Connection: connectionFromProto[d.GetConnection()], State: stateFromProto[d.GetState()],
		LockState: lockFromProto[d.GetLockState()], ScreenOn: d.GetScreenOn(),
		StateDetail: d.GetStateDetail(),
		Caps:        deviceCapsFromProto(d.GetCapabilities()),
	}
}

// deviceCapsFromProto reads a device's capabilities; nil when it sent none
// (its driver's apply). Unknown capabilities (of a newer contract) are
// dropped, as in Info.
func deviceCapsFromProto(c *pb.DeviceCapabilities) *DeviceCaps {
	if c == nil {
		return nil
	}
	out := &DeviceCaps{Served: []Capability{}}
	for _, x := range c.GetServed() {
		if v, ok := capFromProto[x]; ok && !slices.Contains(out.Served, v) {
			out.Served = append(out.Served, v)
		}
	}
	for _, m := range c.GetMissing() {
		if v, ok := capFromProto[m.GetCapability()]; ok {
			out.Missing = append(out.Missing, MissingCap{Cap: v, Reason: m.GetReason(), Fix: m.GetFix()})
		}
	}
	return out
}

func deviceEventFromProto(r *pb.WatchDevicesResponse) DeviceEvent {
	e := DeviceEvent{Kind: eventKindFromProto[r.GetKind()]}
	if r.GetDevice() != nil {
		e.Device = deviceFromProto(r.GetDevice())
	}
	return e
}

func appFromProto(a *pb.App) App {
	return App{ID: a.GetId(), Label: a.GetLabel(), Version: a.GetVersion(), System: a.GetSystem()}
}

func rectFromProto(r *pb.Rect) Rect {
	return Rect{Left: int(r.GetLeft()), Top: int(r.GetTop()), Right: int(r.GetRight()), Bottom: int(r.GetBottom())}
}

func pointFromProto(p *pb.Point) Point { return Point{X: int(p.GetX()), Y: int(p.GetY())} }

func elementFromProto(e *pb.Element) Element {
	return Element{
		ID: int(e.GetId()), ParentID: int(e.GetParentId()), Class: e.GetClassName(), Text: e.GetText(),
		ContentDescription: e.GetContentDescription(), ResourceID: e.GetResourceId(), Hint: e.GetHint(), Value: e.GetValue(),
		Bounds: rectFromProto(e.GetBounds()), Clickable: e.GetClickable(), LongClickable: e.GetLongClickable(),
		Focusable: e.GetFocusable(), Focused: e.GetFocused(), Editable: e.GetEditable(), Password: e.GetPassword(),
		Scrollable: e.GetScrollable(), Checkable: e.GetCheckable(), Checked: e.GetChecked(), Enabled: e.GetEnabled(),
		Selected: e.GetSelected(), Visible: e.GetVisible(),
	}
}

func screenFromProto(s *pb.Screen) *Screen {
	if s == nil {
		return nil
	}
	r := &Screen{
		App: appFromProto(s.GetForegroundApp()), LockState: lockFromProto[s.GetLockState()], ScreenOn: s.GetScreenOn(),
		Width: int(s.GetWidthPx()), Height: int(s.GetHeightPx()), DensityDPI: int(s.GetDensityDpi()),
		Orientation: orientationFromProto[s.GetOrientation()], KeyboardShown: s.GetKeyboardShown(),
	}
	if ms := s.GetCapturedAtMs(); ms != 0 {
		r.CapturedAt = time.UnixMilli(ms)
	}
	if n := len(s.GetElements()); n > 0 {
		r.Elements = make([]Element, n)
		for i, e := range s.GetElements() {
			r.Elements[i] = elementFromProto(e)
		}
	}
	return r
}

func imageFromProto(i *pb.Image) *Image {
	if i == nil {
		return nil
	}
	return &Image{Format: formatFromProto[i.GetFormat()], Width: int(i.GetWidth()), Height: int(i.GetHeight()), Data: i.GetData(), Blanked: i.GetBlanked()}
}

func screenshotRequestFromProto(r *pb.ScreenshotRequest) ScreenshotRequest {
	return ScreenshotRequest{
		DeviceID: r.GetDeviceId(), DisplayID: int(r.GetDisplayId()), Format: formatFromProto[r.GetFormat()],
		MaxSide: int(r.GetMaxSide()), Quality: int(r.GetQuality()),
	}
}

func msDuration(ms int32) time.Duration { return time.Duration(ms) * time.Millisecond }

// actionFromProto returns ok=false when the request carries no known action.
func actionFromProto(r *pb.ActRequest) (Action, bool) {
	a := Action{DisplayID: int(r.GetDisplayId())}
	switch x := r.GetAction().(type) {
	case *pb.ActRequest_Tap:
		a.Kind, a.Point = ActTap, pointFromProto(x.Tap.GetPoint())
	case *pb.ActRequest_DoubleTap:
		a.Kind, a.Point = ActDoubleTap, pointFromProto(x.DoubleTap.GetPoint())
	case *pb.ActRequest_LongPress:
		a.Kind, a.Point, a.Duration = ActLongPress, pointFromProto(x.LongPress.GetPoint()), msDuration(x.LongPress.GetDurationMs())
	case *pb.ActRequest_Swipe:
		a.Kind, a.Point, a.To, a.Duration = ActSwipe, pointFromProto(x.Swipe.GetFrom()), pointFromProto(x.Swipe.GetTo()), msDuration(x.Swipe.GetDurationMs())
	case *pb.ActRequest_Scroll:
		a.Kind, a.Direction, a.Amount = ActScroll, scrollFromProto[x.Scroll.GetDirection()], int(x.Scroll.GetAmountPermille())
		if x.Scroll.GetPoint() != nil {
			a.Point, a.HasPoint = pointFromProto(x.Scroll.GetPoint()), true
		}
	case *pb.ActRequest_TypeText:
		a.Kind, a.Text, a.Replace, a.Submit = ActType, x.TypeText.GetText(), x.TypeText.GetReplace(), x.TypeText.GetSubmit()
	case *pb.ActRequest_PressKey:
		a.Kind, a.Key = ActKey, keyFromProto[x.PressKey.GetKey()]
	case *pb.ActRequest_LaunchApp:
		a.Kind, a.AppID = ActLaunch, x.LaunchApp.GetAppId()
	case *pb.ActRequest_StopApp:
		a.Kind, a.AppID = ActStop, x.StopApp.GetAppId()
	case *pb.ActRequest_OpenUrl:
		a.Kind, a.URL = ActOpenURL, x.OpenUrl.GetUrl()
	case *pb.ActRequest_Pinch:
		a.Kind, a.Point, a.Scale, a.Duration = ActPinch, pointFromProto(x.Pinch.GetCenter()), int(x.Pinch.GetScalePermille()), msDuration(x.Pinch.GetDurationMs())
	default:
		return a, false
	}
	return a, true
}

// inputEventFromProto returns ok=false when the message carries no event.
func inputEventFromProto(r *pb.InputRequest) (InputEvent, bool) {
	e := InputEvent{DeviceID: r.GetDeviceId(), DisplayID: int(r.GetDisplayId())}
	switch x := r.GetEvent().(type) {
	case *pb.InputRequest_Pointer:
		e.Pointer = &PointerEvent{Action: pointerFromProto[x.Pointer.GetAction()], PointerID: int(x.Pointer.GetPointerId()), Point: pointFromProto(x.Pointer.GetPoint())}
	case *pb.InputRequest_Key:
		e.Key = &KeyEvent{Action: keyActionFromProto[x.Key.GetAction()], Key: keyFromProto[x.Key.GetKey()]}
	case *pb.InputRequest_Text:
		e.Text = x.Text
	default:
		return e, false
	}
	return e, true
}

func videoRequestFromProto(r *pb.StreamVideoRequest) VideoRequest {
	return VideoRequest{
		DeviceID: r.GetDeviceId(), DisplayID: int(r.GetDisplayId()), Codec: codecFromProto[r.GetCodec()],
		MaxSide: int(r.GetMaxSide()), MaxFPS: int(r.GetMaxFps()), BitRate: int(r.GetBitRate()),
	}
}

func videoPacketFromProto(p *pb.VideoPacket) VideoPacket {
	return VideoPacket{
		Codec: codecFromProto[p.GetCodec()], Config: p.GetConfig(), KeyFrame: p.GetKeyFrame(),
		PTS: time.Duration(p.GetPtsUs()) * time.Microsecond, Width: int(p.GetWidth()), Height: int(p.GetHeight()), Data: p.GetData(),
	}
}

func fileInfoFromProto(f *pb.FileInfo) FileInfo {
	r := FileInfo{Name: f.GetName(), Size: f.GetSize(), Dir: f.GetDir()}
	if ms := f.GetModifiedMs(); ms != 0 {
		r.Modified = time.UnixMilli(ms)
	}
	return r
}

func notificationFromProto(n *pb.Notification) Notification {
	r := Notification{ID: n.GetId(), AppID: n.GetAppId(), Title: n.GetTitle(), Text: n.GetText()}
	if ms := n.GetPostedAtMs(); ms != 0 {
		r.Posted = time.UnixMilli(ms)
	}
	return r
}
