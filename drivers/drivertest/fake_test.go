package drivertest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// fakeID is the fake driver's one device.
const fakeID = "fake-1"

// fakePIN unlocks the fake phone.
const fakePIN = "1234"

// fake is a small phone that follows the contract: one device with a
// button that counts taps, every optional capability, starting locked. A
// bug knob makes it break one rule, to prove that a case can fail.
type fake struct {
	bug string

	mu        sync.Mutex
	locked    bool
	screenOn  bool
	taps      int
	files     map[string][]byte
	displays  map[int][2]int
	nextDisp  int
	keyReq    chan struct{}
	streaming bool
}

const fakeW, fakeH = 200, 400

func newFake(bug string) *fake {
	return &fake{bug: bug, locked: true, files: map[string][]byte{}, displays: map[int][2]int{}, nextDisp: 1, keyReq: make(chan struct{}, 1)}
}

var (
	_ sdk.Driver        = (*fake)(nil)
	_ sdk.Inputter      = (*fake)(nil)
	_ sdk.Streamer      = (*fake)(nil)
	_ sdk.FrameCapturer = (*fake)(nil)
	_ sdk.Waker         = (*fake)(nil)
	_ sdk.Unlocker      = (*fake)(nil)
	_ sdk.LockEventer   = (*fake)(nil)
	_ sdk.IdleWaiter    = (*fake)(nil)
	_ sdk.AppLister     = (*fake)(nil)
	_ sdk.Filer         = (*fake)(nil)
	_ sdk.Displayer     = (*fake)(nil)
)

// Pinches declares the pinch action.
func (f *fake) Pinches() bool { return true }

func (f *fake) dev(id string) error {
	if id == fakeID {
		return nil
	}
	if f.bug == "unknown-offline" {
		return fmt.Errorf("device %q: %w", id, sdk.ErrDeviceOffline)
	}
	return fmt.Errorf("device %q: %w", id, sdk.ErrDeviceNotFound)
}

func (f *fake) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "fake", Version: "0.0.1", Platforms: []sdk.Platform{sdk.PlatformAndroid}}, nil
}

func (f *fake) device() sdk.Device {
	f.mu.Lock()
	defer f.mu.Unlock()
	ls := sdk.LockUnlocked
	if f.locked {
		ls = sdk.LockLocked
	}
	return sdk.Device{ID: fakeID, Platform: sdk.PlatformAndroid, Connection: sdk.ConnVirtual, State: sdk.StateOnline, LockState: ls, ScreenOn: f.screenOn, Caps: f.caps()}
}

// caps is the device's own capabilities, by the bug knob: nil (the
// driver's) unless the knob is about them.
func (f *fake) caps() *sdk.DeviceCaps {
	all := sdk.Capabilities(f)
	without := func(c sdk.Capability) []sdk.Capability {
		return slices.DeleteFunc(slices.Clone(all), func(x sdk.Capability) bool { return x == c })
	}
	noVideo := []sdk.MissingCap{{Cap: sdk.CapVideo, Reason: "no encoder on this fake", Fix: "install one"}}
	switch f.bug {
	case "caps-video-unsupported": // declares video, then refuses it
		return &sdk.DeviceCaps{Served: all}
	case "caps-lacks-video", "caps-changed":
		return &sdk.DeviceCaps{Served: without(sdk.CapVideo), Missing: noVideo}
	case "caps-missing-served": // says it lacks files, and serves them
		return &sdk.DeviceCaps{Served: all, Missing: []sdk.MissingCap{{Cap: sdk.CapFiles, Reason: "no storage"}}}
	case "caps-no-reason":
		return &sdk.DeviceCaps{Served: without(sdk.CapVideo), Missing: []sdk.MissingCap{{Cap: sdk.CapVideo}}}
	}
	return nil
}

// refusesVideo is the bug knobs whose device answers UNSUPPORTED for video.
func (f *fake) refusesVideo() error {
	switch f.bug {
	case "caps-video-unsupported", "caps-lacks-video", "caps-no-reason", "caps-changed":
		return fmt.Errorf("device %q: no encoder: %w", fakeID, sdk.ErrUnsupported)
	}
	return nil
}

func (f *fake) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	if err := send(sdk.DeviceEvent{Kind: sdk.DeviceAdded, Device: f.device()}); err != nil {
		return err
	}
	if f.bug != "no-synced" {
		if err := send(sdk.DeviceEvent{Kind: sdk.DevicesSynced}); err != nil {
			return err
		}
	}
	if f.bug == "caps-changed" { // after SYNCED, the device loses wake
		d := f.device()
		d.Caps.Served = slices.DeleteFunc(d.Caps.Served, func(c sdk.Capability) bool { return c == sdk.CapWake })
		d.Caps.Missing = append(d.Caps.Missing, sdk.MissingCap{Cap: sdk.CapWake, Reason: "the power button is taped over"})
		if err := send(sdk.DeviceEvent{Kind: sdk.DeviceChanged, Device: d}); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

func (f *fake) Screen(_ context.Context, id string, display int) (*sdk.Screen, error) {
	if err := f.dev(id); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if display != 0 {
		d, ok := f.displays[display]
		if !ok {
			return nil, sdk.Invalid("no display %d", display)
		}
		return &sdk.Screen{LockState: sdk.LockUnlocked, ScreenOn: true, Width: d[0], Height: d[1], Orientation: sdk.OrientationLandscape}, nil
	}
	sc := &sdk.Screen{
		App: sdk.App{ID: "com.example.fake"}, LockState: sdk.LockUnlocked, ScreenOn: f.screenOn,
		Width: fakeW, Height: fakeH, DensityDPI: 160, Orientation: sdk.OrientationPortrait, CapturedAt: time.Now(),
	}
	if f.locked {
		sc.LockState = sdk.LockLocked
	}
	if !f.screenOn || f.locked {
		return sc, nil
	}
	sc.Elements = []sdk.Element{
		{ID: 10, Class: "android.widget.FrameLayout", Bounds: sdk.Rect{Right: fakeW, Bottom: fakeH}, Enabled: true, Visible: true},
		{ID: 11, ParentID: 10, Class: "android.widget.Button", Text: "Hello", ResourceID: "fake:id/hello",
			Bounds: sdk.Rect{Left: 20, Top: 20, Right: 180, Bottom: 80}, Clickable: true, Enabled: true, Visible: true},
		{ID: 12, ParentID: 10, Class: "android.widget.TextView", Text: fmt.Sprintf("Taps: %d", f.taps),
			Bounds: sdk.Rect{Left: 20, Top: 100, Right: 180, Bottom: 140}, Enabled: true, Visible: true},
	}
	switch f.bug {
	case "duplicate-ids":
		sc.Elements[2].ID = 11
	case "off-screen":
		sc.Elements[1].Bounds.Right = fakeW + 10
	case "parent-after-child":
		sc.Elements[0], sc.Elements[1] = sc.Elements[1], sc.Elements[0]
	}
	return sc, nil
}

// encode draws a w×h image in format.
func encode(w, h int, format sdk.ImageFormat) ([]byte, error) {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			m.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var b bytes.Buffer
	var err error
	if format == sdk.FormatJPEG {
		err = jpeg.Encode(&b, m, nil)
	} else {
		err = png.Encode(&b, m)
	}
	return b.Bytes(), err
}

func (f *fake) image(req sdk.ScreenshotRequest, def sdk.ImageFormat) (*sdk.Image, error) {
	if err := f.dev(req.DeviceID); err != nil {
		return nil, err
	}
	if req.MaxSide < 0 || req.Quality < 0 || req.Quality > 100 {
		return nil, sdk.Invalid("max side %d, quality %d", req.MaxSide, req.Quality)
	}
	if req.DisplayID != 0 {
		f.mu.Lock()
		_, ok := f.displays[req.DisplayID]
		f.mu.Unlock()
		if !ok {
			return nil, sdk.Invalid("no display %d", req.DisplayID)
		}
	}
	format := req.Format
	if format == "" {
		format = def
	}
	w, h := fakeW, fakeH
	if m := req.MaxSide; m > 0 && m < h && f.bug != "max-side-ignored" {
		w, h = (w*m+h/2)/h, m
	}
	data, err := encode(w, h, format)
	if err != nil {
		return nil, err
	}
	img := &sdk.Image{Format: format, Width: w, Height: h, Data: data}
	if f.bug == "screenshot-size" {
		img.Width++
	}
	return img, nil
}

func (f *fake) Screenshot(_ context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return f.image(req, sdk.FormatPNG)
}

func (f *fake) CaptureFrame(_ context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return f.image(req, sdk.FormatJPEG)
}

func inside(p sdk.Point) bool { return p.X >= 0 && p.Y >= 0 && p.X < fakeW && p.Y < fakeH }

func (f *fake) Act(_ context.Context, id string, a sdk.Action) (sdk.ActResult, error) {
	if err := f.dev(id); err != nil {
		return sdk.ActResult{}, err
	}
	if a.Duration > 10*time.Second {
		return sdk.ActResult{}, sdk.Invalid("duration %v is over 10s", a.Duration)
	}
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress:
		if !inside(a.Point) {
			return sdk.ActResult{}, sdk.Invalid("point %v is outside the screen", a.Point)
		}
	case sdk.ActSwipe:
		if !inside(a.Point) || !inside(a.To) {
			return sdk.ActResult{}, sdk.Invalid("swipe %v → %v leaves the screen", a.Point, a.To)
		}
	case sdk.ActScroll:
		if a.Direction == "" || a.Amount < 0 || a.Amount > 1000 || (a.HasPoint && !inside(a.Point)) {
			return sdk.ActResult{}, sdk.Invalid("bad scroll")
		}
	case sdk.ActType:
		if n := utf8.RuneCountInString(a.Text); n < 1 || n > 4096 {
			return sdk.ActResult{}, sdk.Invalid("text of %d characters", n)
		}
	case sdk.ActKey:
		if a.Key == "" {
			return sdk.ActResult{}, sdk.Invalid("no key")
		}
	case sdk.ActLaunch, sdk.ActStop:
		if a.AppID == "" {
			return sdk.ActResult{}, sdk.Invalid("no app id")
		}
		if a.AppID != "com.example.fake" {
			return sdk.ActResult{}, sdk.Errorf(sdk.ErrAppNotFound, "app %q", a.AppID)
		}
	case sdk.ActPinch:
		if (!inside(a.Point) && f.bug != "pinch-off-screen") || a.Scale < 100 || a.Scale > 10000 || a.Scale == 1000 {
			return sdk.ActResult{}, sdk.Invalid("bad pinch")
		}
	case sdk.ActOpenURL:
		if u, err := url.Parse(a.URL); err != nil || !u.IsAbs() || len(a.URL) > 8192 {
			return sdk.ActResult{}, sdk.Invalid("url %q", a.URL)
		}
	case "":
		return sdk.ActResult{}, sdk.Invalid("no action")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.locked {
		return sdk.ActResult{}, sdk.Errorf(sdk.ErrLocked, "device %q", id)
	}
	if a.Kind == sdk.ActTap && (sdk.Rect{Left: 20, Top: 20, Right: 180, Bottom: 80}).Contains(a.Point) && f.bug != "tap-no-effect" {
		f.taps++
	}
	return sdk.ActResult{}, nil
}

func (f *fake) Input(_ context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	var n int64
	for {
		e, err := next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if err := f.dev(e.DeviceID); err != nil {
			return n, err
		}
		if e.Pointer != nil && !inside(e.Pointer.Point) {
			return n, sdk.Invalid("pointer at %v is outside the screen", e.Pointer.Point)
		}
		n++
	}
}

func (f *fake) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	if err := f.dev(req.DeviceID); err != nil {
		return err
	}
	if err := f.refusesVideo(); err != nil {
		return err
	}
	f.mu.Lock()
	busy := f.streaming
	f.streaming = true
	f.mu.Unlock()
	if busy && f.bug != "second-stream" {
		return sdk.Errorf(sdk.ErrBusy, "a stream is running")
	}
	defer func() {
		f.mu.Lock()
		f.streaming = false
		f.mu.Unlock()
	}()
	cfg := sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Width: fakeW, Height: fakeH, Data: []byte{0, 0, 0, 1, 0x67, 0, 0, 0, 1, 0x68}}
	if f.bug != "video-no-config" {
		if err := send(cfg); err != nil {
			return err
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	key := true
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return nil
		case <-f.keyReq:
			key = true
		case <-tick.C:
		}
		p := sdk.VideoPacket{Codec: sdk.CodecH264, KeyFrame: key, PTS: time.Duration(i) * 20 * time.Millisecond, Width: fakeW, Height: fakeH, Data: []byte{0, 0, 0, 1, 0x65}}
		if !key {
			p.Data = []byte{0, 0, 0, 1, 0x41}
		}
		if err := send(p); err != nil {
			return err
		}
		key = false
	}
}

func (f *fake) RequestKeyFrame(_ context.Context, id string, _ int) error {
	if err := f.dev(id); err != nil {
		return err
	}
	if err := f.refusesVideo(); err != nil {
		return err
	}
	select {
	case f.keyReq <- struct{}{}:
	default:
	}
	return nil
}

func (f *fake) Wake(_ context.Context, id string) error {
	if f.bug == "wake-unsupported" {
		return sdk.Errorf(sdk.ErrUnsupported, "no wake here")
	}
	if err := f.dev(id); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.screenOn = true
	return nil
}

func (f *fake) Unlock(_ context.Context, id, pin string) error {
	if err := f.dev(id); err != nil {
		return err
	}
	if len(pin) < 4 || len(pin) > 16 || strings.Trim(pin, "0123456789") != "" {
		return sdk.Invalid("a PIN is 4 to 16 digits")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if pin != fakePIN && f.bug != "any-pin" {
		if f.locked {
			return sdk.Errorf(sdk.ErrWrongPIN, "device %q", id)
		}
		return nil
	}
	f.locked = false
	return nil
}

func (f *fake) LockEvents() bool { return true }

func (f *fake) WaitIdle(_ context.Context, id string, _ time.Duration) (bool, error) {
	return true, f.dev(id)
}

func (f *fake) ListNotifications(_ context.Context, id string) ([]sdk.Notification, error) {
	if err := f.dev(id); err != nil {
		return nil, err
	}
	now := time.Now()
	ns := []sdk.Notification{
		{ID: "2", AppID: "com.example.chat", Title: "Ana", Text: "Lunch?", Posted: now},
		{ID: "1", AppID: "com.example.bank", Title: "Code", Text: "Your code is 123456", Posted: now.Add(-time.Minute)},
	}
	if f.bug == "notes-oldest-first" {
		ns[0], ns[1] = ns[1], ns[0]
	}
	return ns, nil
}

func (f *fake) ListApps(_ context.Context, id string) ([]sdk.App, error) {
	if err := f.dev(id); err != nil {
		return nil, err
	}
	return []sdk.App{{ID: "com.example.fake", Label: "Fake"}, {ID: "com.android.settings", Label: "Settings", System: true}}, nil
}

func (f *fake) checkPath(p string) error {
	if path.IsAbs(p) || strings.ContainsAny(p, "\\\x00") || slices.Contains(strings.Split(p, "/"), "..") {
		return sdk.Invalid("path %q leaves the Pinky folder", p)
	}
	return nil
}

// isDir reports whether some file lies under p. f.mu is held.
func (f *fake) isDir(p string) bool {
	if p == "" {
		return true
	}
	for name := range f.files {
		if strings.HasPrefix(name, p+"/") {
			return true
		}
	}
	return false
}

func (f *fake) ListFiles(_ context.Context, id, p string) ([]sdk.FileInfo, error) {
	if err := f.dev(id); err != nil {
		return nil, err
	}
	if err := f.checkPath(p); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if data, ok := f.files[p]; ok {
		// A file lists as itself, as ls FILE does (SPEC.md 5.13).
		return []sdk.FileInfo{{Name: path.Base(p), Size: int64(len(data))}}, nil
	}
	if !f.isDir(p) {
		return nil, sdk.Errorf(sdk.ErrFileNotFound, "folder %q", p)
	}
	prefix := p
	if prefix != "" {
		prefix += "/"
	}
	seen := map[string]bool{}
	var out []sdk.FileInfo
	for name, data := range f.files {
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok {
			continue
		}
		if first, _, sub := strings.Cut(rest, "/"); sub {
			if !seen[first] {
				seen[first] = true
				out = append(out, sdk.FileInfo{Name: first, Dir: true})
			}
			continue
		}
		out = append(out, sdk.FileInfo{Name: rest, Size: int64(len(data))})
	}
	return out, nil
}

func (f *fake) PullFile(_ context.Context, id, p string, w io.Writer) error {
	if err := f.dev(id); err != nil {
		return err
	}
	if err := f.checkPath(p); err != nil {
		return err
	}
	f.mu.Lock()
	data, ok := f.files[p]
	dir := f.isDir(p)
	f.mu.Unlock()
	if dir {
		return sdk.Invalid("%q is a folder", p)
	}
	if !ok {
		return sdk.Errorf(sdk.ErrFileNotFound, "file %q", p)
	}
	_, err := w.Write(data)
	return err
}

func (f *fake) PushFile(_ context.Context, id, p string, r io.Reader) (int64, error) {
	if err := f.dev(id); err != nil {
		return 0, err
	}
	if err := f.checkPath(p); err != nil {
		return 0, err
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	if f.bug == "push-truncates" && len(data) > 1<<20 {
		data = data[:1<<20]
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.isDir(p) {
		return 0, sdk.Invalid("%q is a folder", p)
	}
	for dir := path.Dir(p); dir != "." && dir != "/"; dir = path.Dir(dir) {
		if _, isFile := f.files[dir]; isFile {
			return 0, sdk.Invalid("%q: %q is a file, not a folder", p, dir)
		}
	}
	f.files[p] = data
	return int64(len(data)), nil
}

func (f *fake) DeleteFile(_ context.Context, id, p string, recursive bool) error {
	if err := f.dev(id); err != nil {
		return err
	}
	if err := f.checkPath(p); err != nil {
		return err
	}
	if p == "" || p == "." {
		return sdk.Invalid("path %q is the Pinky folder itself", p)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[p]; ok {
		delete(f.files, p)
		return nil
	}
	if !f.isDir(p) {
		return sdk.Errorf(sdk.ErrFileNotFound, "file %q", p)
	}
	if !recursive || f.bug == "delete-keeps" {
		return sdk.Invalid("folder %q is not empty", p)
	}
	for name := range f.files {
		if strings.HasPrefix(name, p+"/") {
			delete(f.files, name)
		}
	}
	return nil
}

func (f *fake) CreateDisplay(_ context.Context, id string, w, h, _ int) (int, error) {
	if err := f.dev(id); err != nil {
		return 0, err
	}
	if w < 64 || h < 64 || w > 4096 || h > 4096 {
		return 0, sdk.Invalid("display size %dx%d is outside 64..4096", w, h)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.nextDisp
	f.nextDisp++
	f.displays[d] = [2]int{w, h}
	return d, nil
}

func (f *fake) RemoveDisplay(_ context.Context, id string, d int) error {
	if err := f.dev(id); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.displays[d]; !ok && f.bug == "remove-display-strict" {
		return sdk.Invalid("no display %d", d)
	}
	delete(f.displays, d)
	return nil
}
