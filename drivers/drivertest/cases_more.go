package drivertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Cases about video, files, apps and displays.

var mediaCases = []Case{
	{Name: "video-stream", Capability: sdk.CapVideo, NeedsDevice: true, Doc: "StreamVideo starts with a config packet, then a key frame, PTS never goes back, a requested key frame comes, cancel ends it cleanly", run: checkVideo},
	{Name: "files-bad-paths", Capability: sdk.CapFiles, NeedsDevice: true, Doc: "ListFiles, PullFile, PushFile and DeleteFile refuse absolute paths and paths with .. with INVALID_ARGUMENT", run: checkFilesBadPaths},
	{Name: "files-round-trip", Capability: sdk.CapFiles, NeedsDevice: true, Doc: "a pushed file (small, and over 1 MiB) is listed with its size and pulled back byte for byte; a push replaces; everything is deleted after", run: checkFilesRoundTrip},
	{Name: "files-delete", Capability: sdk.CapFiles, NeedsDevice: true, Doc: "DeleteFile removes a file, refuses a full folder without recursive, removes it with; a missing path answers FILE_NOT_FOUND", run: checkFilesDelete},
	{Name: "files-a-file-in-the-path", Capability: sdk.CapFiles, NeedsDevice: true, Doc: "ListFiles of a file answers that one file; a push to a path through a file (FILE/x) answers INVALID_ARGUMENT and leaves the file", run: checkFilesFileInPath},
	{Name: "files-missing", Capability: sdk.CapFiles, NeedsDevice: true, Doc: "pulling a missing file, or listing a missing folder, answers NOT_FOUND (FILE_NOT_FOUND)", run: checkFilesMissing},
	{Name: "notifications-list", Capability: sdk.CapNotifications, NeedsDevice: true, Doc: "ListNotifications answers with unique, non-empty ids, newest first", run: checkNotifications},
	{Name: "apps-list", Capability: sdk.CapApps, NeedsDevice: true, Doc: "ListApps is not empty and its ids are set and unique", run: checkApps},
	{Name: "displays", Capability: sdk.CapDisplays, NeedsDevice: true, Doc: "a created display has a positive id, reads at its size, and is removed; bad sizes answer INVALID_ARGUMENT", run: checkDisplays},
}

// packets collects a video stream's packets for a case.
type packets struct {
	mu   sync.Mutex
	pkts []sdk.VideoPacket
	more chan struct{} // signalled on every packet
}

func (p *packets) add(v sdk.VideoPacket) error {
	p.mu.Lock()
	p.pkts = append(p.pkts, v)
	p.mu.Unlock()
	select {
	case p.more <- struct{}{}:
	default:
	}
	return nil
}

func (p *packets) snapshot() []sdk.VideoPacket {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sdk.VideoPacket(nil), p.pkts...)
}

// waitFor waits until ok holds for the packets so far, or d passes.
func (p *packets) waitFor(ctx context.Context, d time.Duration, ok func([]sdk.VideoPacket) bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		if ok(p.snapshot()) {
			return true
		}
		select {
		case <-p.more:
		case <-deadline.C:
			return ok(p.snapshot())
		case <-ctx.Done():
			return false
		}
	}
}

func frames(ps []sdk.VideoPacket) (n, keys int) {
	for _, p := range ps {
		if !p.Config {
			n++
			if p.KeyFrame {
				keys++
			}
		}
	}
	return n, keys
}

func checkVideo(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	// Without a running stream, RequestKeyFrame succeeds and does nothing.
	if err := s.drv.RequestKeyFrame(ctx, dev, 0); err != nil {
		t.Errorf("RequestKeyFrame on device %q with no stream running: got %s; want success", dev, errText(err))
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &packets{more: make(chan struct{}, 1)}
	var streamErr error
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		streamErr = s.drv.StreamVideo(sctx, sdk.VideoRequest{DeviceID: dev}, p.add)
	}()
	// A still screen may send a single frame: ask for a key frame if none came.
	first, more := s.opts.within(2*time.Second), s.opts.within(5*time.Second)
	if !p.waitFor(ctx, first, func(ps []sdk.VideoPacket) bool { n, _ := frames(ps); return n > 0 }) {
		if err := s.drv.RequestKeyFrame(ctx, dev, 0); err != nil {
			t.Errorf("RequestKeyFrame on device %q: %s", dev, errText(err))
		}
	}
	if !p.waitFor(ctx, more, func(ps []sdk.VideoPacket) bool { n, _ := frames(ps); return n > 0 }) {
		select {
		case <-ended:
			t.Fatalf("StreamVideo on device %q ended after %d packets, none a frame: %s", dev, len(p.snapshot()), errText(streamErr))
		default:
		}
		t.Fatalf("StreamVideo on device %q: no frame within %v (%d packets)", dev, first+more, len(p.snapshot()))
	}
	_, keysBefore := frames(p.snapshot())
	if err := s.drv.RequestKeyFrame(ctx, dev, 0); err != nil {
		t.Errorf("RequestKeyFrame on device %q during a stream: %s", dev, errText(err))
	} else if wait := s.opts.within(1500 * time.Millisecond); !p.waitFor(ctx, wait, func(ps []sdk.VideoPacket) bool { _, k := frames(ps); return k > keysBefore }) {
		t.Errorf("RequestKeyFrame on device %q: no key frame within %s; want one within 1s", dev, wait)
	}
	// One stream per display: a second one is BUSY.
	second, cancel2 := context.WithTimeout(ctx, 3*time.Second)
	err := s.drv.StreamVideo(second, sdk.VideoRequest{DeviceID: dev}, func(sdk.VideoPacket) error { return errStop })
	cancel2()
	if !errors.Is(err, sdk.ErrBusy) {
		t.Errorf("a second StreamVideo on display 0 of device %q while one runs: got %s; want BUSY (RESOURCE_EXHAUSTED)", dev, errText(err))
	}
	cancel()
	select {
	case <-ended:
		if streamErr != nil {
			t.Errorf("StreamVideo on device %q after cancel: got %s; want it to return without error", dev, errText(streamErr))
		}
	case <-time.After(2 * time.Second):
		t.Errorf("StreamVideo on device %q did not return within 2s of its context being canceled", dev)
	}
	ps := p.snapshot()
	if !ps[0].Config {
		t.Errorf("video packet 0 of device %q: not a config packet; want the stream to start with one (SPS/PPS)", dev)
	}
	var lastPTS time.Duration
	var sawFrame, afterConfig bool
	for i, v := range ps {
		if v.Codec != sdk.CodecH264 && v.Codec != sdk.CodecH265 {
			t.Errorf("video packet %d of device %q: codec %q; want %q or %q", i, dev, v.Codec, sdk.CodecH264, sdk.CodecH265)
		}
		if v.Width <= 0 || v.Height <= 0 {
			t.Errorf("video packet %d of device %q: size %dx%d; want both > 0", i, dev, v.Width, v.Height)
		}
		if len(v.Data) == 0 {
			t.Errorf("video packet %d of device %q: no data", i, dev)
		}
		if v.Config {
			afterConfig = true
			continue
		}
		if afterConfig && !v.KeyFrame {
			t.Errorf("video packet %d of device %q: the first frame after a config packet is not a key frame", i, dev)
		}
		afterConfig = false
		if sawFrame && v.PTS < lastPTS {
			t.Errorf("video packet %d of device %q: PTS %v after %v; want it monotonic", i, dev, v.PTS, lastPTS)
		}
		sawFrame, lastPTS = true, v.PTS
	}
	n, k := frames(ps)
	t.Logf("device %q: %d packets, %d frames, %d key frames", dev, len(ps), n, k)
}

// uniqueName is a file name no other run uses.
func uniqueName(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b) //nolint:errcheck // never fails
	return fmt.Sprintf("pinky-drivertest-%s-%s", prefix, hex.EncodeToString(b))
}

func checkFilesBadPaths(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	for _, path := range []string{"..", "../x", "a/../x", "a/..", "/etc/passwd", "/x", `a\b`, "a\x00b"} {
		_, err := s.drv.ListFiles(ctx, dev, path)
		wantErr(t, fmt.Sprintf("ListFiles(%q) on device %q", path, dev), err, sdk.ErrInvalidArgument)
		err = s.drv.PullFile(ctx, dev, path, io.Discard)
		wantErr(t, fmt.Sprintf("PullFile(%q) on device %q", path, dev), err, sdk.ErrInvalidArgument)
		_, err = s.drv.PushFile(ctx, dev, path, bytes.NewReader([]byte("x")))
		if !wantErr(t, fmt.Sprintf("PushFile(%q) on device %q", path, dev), err, sdk.ErrInvalidArgument) && err == nil {
			t.Logf("PushFile(%q) was accepted: a file may be left on device %q; remove it by hand", path, dev)
		}
		err = s.drv.DeleteFile(ctx, dev, path, false)
		wantErr(t, fmt.Sprintf("DeleteFile(%q) on device %q", path, dev), err, sdk.ErrInvalidArgument)
	}
}

func (s *suite) push(t T, ctx context.Context, name string, data []byte) bool {
	t.Helper()
	dev := s.device.ID
	n, err := s.drv.PushFile(ctx, dev, name, bytes.NewReader(data))
	if err != nil {
		t.Errorf("PushFile(%q, %d bytes) on device %q: %s", name, len(data), dev, errText(err))
		return false
	}
	if n != int64(len(data)) {
		t.Errorf("PushFile(%q) on device %q: wrote %d bytes; want %d", name, dev, n, len(data))
	}
	return true
}

func (s *suite) pullEquals(t T, ctx context.Context, name string, want []byte) {
	t.Helper()
	dev := s.device.ID
	var got bytes.Buffer
	if err := s.drv.PullFile(ctx, dev, name, &got); err != nil {
		t.Errorf("PullFile(%q) on device %q: %s", name, dev, errText(err))
		return
	}
	if !bytes.Equal(got.Bytes(), want) {
		at := 0
		for at < min(got.Len(), len(want)) && got.Bytes()[at] == want[at] {
			at++
		}
		t.Errorf("PullFile(%q) on device %q: got %d bytes, first difference at byte %d; want the %d bytes pushed", name, dev, got.Len(), at, len(want))
	}
}

// deleteLater removes path from the device when the case ends.
func (s *suite) deleteLater(t T, dev, path string, recursive bool) {
	t.Cleanup(func() {
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := s.drv.DeleteFile(ctx, dev, path, recursive); err != nil && !errors.Is(err, sdk.ErrFileNotFound) {
			t.Logf("cleanup: DeleteFile(%q) on device %q: %s; remove it by hand", path, dev, errText(err))
		}
	})
}

func checkFilesRoundTrip(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	small := []byte("pinky drivertest: hello, phone\n")
	big := make([]byte, 1<<20+300<<10) // more than one 1 MiB chunk
	rand.Read(big)                     //nolint:errcheck // never fails
	for _, f := range []struct {
		name string
		data []byte
	}{{uniqueName("small") + ".txt", small}, {uniqueName("big") + ".bin", big}} {
		s.deleteLater(t, dev, f.name, false)
		if !s.push(t, ctx, f.name, f.data) {
			continue
		}
		list, err := s.drv.ListFiles(ctx, dev, "")
		if err != nil {
			t.Errorf("ListFiles(\"\") on device %q: %s", dev, errText(err))
		} else {
			found := false
			for _, fi := range list {
				if fi.Name == f.name {
					found = true
					if fi.Dir || fi.Size != int64(len(f.data)) {
						t.Errorf("ListFiles(\"\") on device %q: %q has size %d, dir %v; want size %d, not a dir", dev, f.name, fi.Size, fi.Dir, len(f.data))
					}
				}
			}
			if !found {
				t.Errorf("ListFiles(\"\") on device %q: %q is missing after PushFile (%d entries)", dev, f.name, len(list))
			}
		}
		s.pullEquals(t, ctx, f.name, f.data)
	}
	// A push creates missing parent folders; a folder cannot be pulled.
	dir := uniqueName("dir")
	nested := dir + "/sub/file.txt"
	s.deleteLater(t, dev, dir, true)
	if s.push(t, ctx, nested, small) {
		list, err := s.drv.ListFiles(ctx, dev, dir)
		switch {
		case err != nil:
			t.Errorf("ListFiles(%q) on device %q: %s", dir, dev, errText(err))
		case len(list) != 1 || list[0].Name != "sub" || !list[0].Dir:
			t.Errorf("ListFiles(%q) on device %q: got %+v; want one folder \"sub\"", dir, dev, list)
		}
		s.pullEquals(t, ctx, nested, small)
		err = s.drv.PullFile(ctx, dev, dir+"/sub", io.Discard)
		wantErr(t, fmt.Sprintf("PullFile(%q), a folder, on device %q", dir+"/sub", dev), err, sdk.ErrInvalidArgument)
	}
	// A push replaces what is there.
	name := uniqueName("replace") + ".txt"
	s.deleteLater(t, dev, name, false)
	if s.push(t, ctx, name, []byte("a longer first version")) && s.push(t, ctx, name, []byte("second")) {
		s.pullEquals(t, ctx, name, []byte("second"))
	}
}

func checkFilesDelete(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	dir := uniqueName("del")
	s.deleteLater(t, dev, dir, true)
	if !s.push(t, ctx, dir+"/a/file.txt", []byte("x")) || !s.push(t, ctx, dir+"/b.txt", []byte("y")) {
		return
	}
	err := s.drv.DeleteFile(ctx, dev, dir, false)
	wantErr(t, fmt.Sprintf("DeleteFile(%q), a folder that is not empty, without recursive, on device %q", dir, dev), err, sdk.ErrInvalidArgument)
	if err := s.drv.DeleteFile(ctx, dev, dir+"/a/file.txt", false); err != nil {
		t.Errorf("DeleteFile(%q) on device %q: %s", dir+"/a/file.txt", dev, errText(err))
	}
	err = s.drv.PullFile(ctx, dev, dir+"/a/file.txt", io.Discard)
	wantErr(t, fmt.Sprintf("PullFile(%q) after DeleteFile on device %q", dir+"/a/file.txt", dev), err, sdk.ErrFileNotFound)
	if err := s.drv.DeleteFile(ctx, dev, dir, true); err != nil {
		t.Errorf("DeleteFile(%q, recursive) on device %q: %s", dir, dev, errText(err))
	}
	_, err = s.drv.ListFiles(ctx, dev, dir)
	wantErr(t, fmt.Sprintf("ListFiles(%q) after a recursive DeleteFile on device %q", dir, dev), err, sdk.ErrFileNotFound)
	err = s.drv.DeleteFile(ctx, dev, dir, true)
	wantErr(t, fmt.Sprintf("DeleteFile(%q), already deleted, on device %q", dir, dev), err, sdk.ErrFileNotFound)
	for _, p := range []string{"", ".", "../x", "/x"} {
		err = s.drv.DeleteFile(ctx, dev, p, true)
		wantErr(t, fmt.Sprintf("DeleteFile(%q) on device %q", p, dev), err, sdk.ErrInvalidArgument)
	}
}

func checkFilesFileInPath(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	name := uniqueName("plain") + ".txt"
	data := []byte("a file, not a folder\n")
	s.deleteLater(t, dev, name, false)
	if !s.push(t, ctx, name, data) {
		return
	}
	list, err := s.drv.ListFiles(ctx, dev, name)
	switch {
	case err != nil:
		t.Errorf("ListFiles(%q), a file, on device %q: %s; want that one file", name, dev, errText(err))
	case len(list) != 1 || list[0].Name != name || list[0].Dir || list[0].Size != int64(len(data)):
		t.Errorf("ListFiles(%q), a file, on device %q: got %+v; want one entry %q of %d bytes, not a folder", name, dev, list, name, len(data))
	}
	_, err = s.drv.PushFile(ctx, dev, name+"/inside.txt", bytes.NewReader(data))
	wantErr(t, fmt.Sprintf("PushFile(%q), through a file, on device %q", name+"/inside.txt", dev), err, sdk.ErrInvalidArgument)
	s.pullEquals(t, ctx, name, data)
}

func checkFilesMissing(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	name := uniqueName("missing")
	err := s.drv.PullFile(ctx, dev, name, io.Discard)
	wantErr(t, fmt.Sprintf("PullFile(%q), a missing file, on device %q", name, dev), err, sdk.ErrFileNotFound)
	_, err = s.drv.ListFiles(ctx, dev, name)
	wantErr(t, fmt.Sprintf("ListFiles(%q), a missing folder, on device %q", name, dev), err, sdk.ErrFileNotFound)
}

func checkApps(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	apps, err := s.drv.ListApps(ctx, dev)
	if err != nil {
		t.Fatalf("ListApps on device %q: %s", dev, errText(err))
	}
	if len(apps) == 0 {
		t.Errorf("ListApps on device %q: got no apps; want the launchable apps (a phone has some)", dev)
	}
	seen := map[string]bool{}
	for i, a := range apps {
		if a.ID == "" {
			t.Errorf("ListApps on device %q: app %d (%q) has no id", dev, i, a.Label)
		}
		if seen[a.ID] {
			t.Errorf("ListApps on device %q: app id %q appears twice; want unique ids", dev, a.ID)
		}
		seen[a.ID] = true
	}
	t.Logf("device %q: %d apps", dev, len(apps))
}

func checkNotifications(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	ns, err := s.drv.ListNotifications(ctx, dev)
	if err != nil {
		t.Fatalf("ListNotifications on device %q: %s", dev, errText(err))
	}
	seen := map[string]bool{}
	for i, n := range ns {
		if n.ID == "" || seen[n.ID] {
			t.Errorf("ListNotifications on device %q: notification %d has id %q; want a unique, non-empty id", dev, i, n.ID)
		}
		seen[n.ID] = true
		if i > 0 && !n.Posted.IsZero() && !ns[i-1].Posted.IsZero() && n.Posted.After(ns[i-1].Posted) {
			t.Errorf("ListNotifications on device %q: %q (posted %v) comes after %q (posted %v); want newest first", dev, n.ID, n.Posted, ns[i-1].ID, ns[i-1].Posted)
		}
	}
	t.Logf("device %q: %d notifications", dev, len(ns))
}

func checkDisplays(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	for _, size := range [][2]int{{63, 480}, {640, 4097}, {0, 0}} {
		id, err := s.drv.CreateDisplay(ctx, dev, size[0], size[1], 0)
		if err == nil {
			t.Cleanup(func() {
				ctx, cancel := cleanupCtx()
				defer cancel()
				s.drv.RemoveDisplay(ctx, dev, id) //nolint:errcheck // best effort
			})
		}
		wantErr(t, fmt.Sprintf("CreateDisplay(%dx%d) on device %q", size[0], size[1], dev), err, sdk.ErrInvalidArgument)
	}
	const w, h = 640, 480
	id, err := s.drv.CreateDisplay(ctx, dev, w, h, 0)
	if err != nil {
		t.Fatalf("CreateDisplay(%dx%d) on device %q: %s", w, h, dev, errText(err))
	}
	removed := false
	t.Cleanup(func() {
		if removed {
			return
		}
		ctx, cancel := cleanupCtx()
		defer cancel()
		if err := s.drv.RemoveDisplay(ctx, dev, id); err != nil {
			t.Logf("removing display %d of device %q: %s", id, dev, errText(err))
		}
	})
	if id <= 0 {
		t.Fatalf("CreateDisplay(%dx%d) on device %q: display id %d; want > 0", w, h, dev, id)
	}
	sc, err := s.drv.Screen(ctx, dev, id)
	switch {
	case err != nil:
		t.Errorf("GetScreen of display %d of device %q: %s", id, dev, errText(err))
	case sc == nil:
		t.Errorf("GetScreen of display %d of device %q: the reply has no screen", id, dev)
	default:
		if sc.Width*sc.Height != w*h || max(sc.Width, sc.Height) != max(w, h) {
			t.Errorf("GetScreen of display %d of device %q: %dx%d; want %dx%d", id, dev, sc.Width, sc.Height, w, h)
		}
		for _, p := range screenProblems(sc) {
			t.Errorf("screen of display %d of device %q: %s", id, dev, p)
		}
	}
	// RemoveDisplay is idempotent: the second succeeds too.
	for i := range 2 {
		if err := s.drv.RemoveDisplay(ctx, dev, id); err != nil {
			t.Errorf("RemoveDisplay(%d) #%d on device %q: got %s; want success", id, i+1, dev, errText(err))
		} else {
			removed = true
		}
	}
	_, err = s.drv.Screen(ctx, dev, id)
	wantErr(t, fmt.Sprintf("GetScreen of removed display %d of device %q", id, dev), err, sdk.ErrInvalidArgument)
}
