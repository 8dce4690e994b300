package android

import (
	"context"
	"errors"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// StreamVideo implements sdk.Streamer: the phone's scrcpy session's
// video, which also carries the input (a display gives one stream at a
// time; the gateway's hub shares it). A background display streams its own
// session's video, at the display's size whatever MaxSide asks: its server
// cannot be started again at another size without ending the display.
func (d *Driver) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	if req.Codec != "" && req.Codec != sdk.CodecH264 {
		return sdk.Errorf(sdk.ErrUnsupported, "codec %q: this driver streams H.264", req.Codec)
	}
	if req.MaxSide < 0 || req.MaxFPS < 0 || req.BitRate < 0 {
		return sdk.Invalid("max side, max fps and bit rate must not be negative")
	}
	p, dev, err := d.phone(ctx, req.DeviceID)
	if err != nil {
		return err
	}
	if err := d.lacks(req.DeviceID, sdk.CapVideo); err != nil {
		return err
	}
	if req.DisplayID != 0 {
		ds, err := d.display(p, req.DisplayID)
		if err != nil {
			return err
		}
		ended, stop, err := ds.s.watch(send)
		if err != nil {
			return err
		}
		defer stop()
		return d.streamed(ctx, req, ds.s, ended)
	}
	p.ctlMu.Lock()
	s, err := d.control(ctx, p, dev, req.MaxSide)
	if err != nil {
		p.ctlMu.Unlock()
		return err
	}
	ended, stop, err := s.watch(send)
	p.ctlMu.Unlock()
	if err != nil {
		return err
	}
	defer stop()
	return d.streamed(ctx, req, s, ended)
}

// streamed waits for the end of a stream that watches s.
func (d *Driver) streamed(ctx context.Context, req sdk.VideoRequest, s *session, ended <-chan error) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-ended:
		if ctx.Err() != nil {
			return nil
		}
		if !s.alive() || errors.Is(err, io.EOF) {
			return sdk.Errorf(sdk.ErrDeviceOffline, "%s: the scrcpy server ended: %s", req.DeviceID, s.lastWords())
		}
		return err
	}
}

// RequestKeyFrame implements sdk.Streamer with scrcpy's reset-video; with
// no stream running there is nothing to do.
func (d *Driver) RequestKeyFrame(ctx context.Context, serial string, display int) error {
	p, _, err := d.phone(ctx, serial)
	if err != nil {
		return err
	}
	if err := d.lacks(serial, sdk.CapVideo); err != nil {
		return err
	}
	var s *session
	if display != 0 {
		ds, err := d.display(p, display)
		if err != nil {
			return err
		}
		s = ds.s
	} else {
		p.ctlMu.Lock()
		s = p.ctl
		p.ctlMu.Unlock()
	}
	if s == nil || !s.alive() {
		return nil
	}
	return s.c.ResetVideo()
}

// ListApps implements sdk.AppLister: the packages with a launcher
// activity. Their labels are their package names: reading labels needs
// more than the shell gives.
func (d *Driver) ListApps(ctx context.Context, serial string) ([]sdk.App, error) {
	_, dev, err := d.phone(ctx, serial)
	if err != nil {
		return nil, err
	}
	all, err := shell(ctx, dev, "pm list packages")
	if err != nil {
		return nil, err
	}
	third, err := shell(ctx, dev, "pm list packages -3")
	if err != nil {
		return nil, err
	}
	user := map[string]bool{}
	for _, p := range ParsePackages(third) {
		user[p] = true
	}
	var apps []sdk.App
	for _, p := range ParsePackages(all) {
		apps = append(apps, sdk.App{ID: p, Label: p, System: !user[p]})
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].ID < apps[j].ID })
	return apps, nil
}

// pinkyDir is the phone's Pinky folder.
const pinkyDir = "/sdcard/Pinky"

// onPhone turns a Pinky-folder path into the phone's path.
func onPhone(p string) (string, error) {
	if err := sdk.CheckPath(p); err != nil {
		return "", err
	}
	return path.Join(pinkyDir, p), nil
}

// ListFiles implements sdk.Filer.
func (d *Driver) ListFiles(ctx context.Context, serial, p string) ([]sdk.FileInfo, error) {
	_, dev, err := d.phone(ctx, serial)
	if err != nil {
		return nil, err
	}
	full, err := onPhone(p)
	if err != nil {
		return nil, err
	}
	st, err := dev.Stat(ctx, full)
	if p == "" && err == nil && st.Mode == 0 {
		// The folder exists from the first use on.
		if _, err := shell(ctx, dev, "mkdir -p "+pinkyDir); err != nil {
			return nil, err
		}
		st, err = dev.Stat(ctx, full)
	}
	if err != nil || st.Mode == 0 {
		return nil, sdk.Errorf(sdk.ErrFileNotFound, "%s: no %q in the Pinky folder", serial, p)
	}
	if !st.IsDir() {
		return []sdk.FileInfo{{Name: path.Base(full), Size: st.Size, Modified: st.ModTime}}, nil
	}
	list, err := dev.List(ctx, full)
	if err != nil {
		return nil, fileErr(err, serial, p)
	}
	var out []sdk.FileInfo
	for _, f := range list {
		if f.Name == "." || f.Name == ".." {
			continue
		}
		out = append(out, sdk.FileInfo{Name: f.Name, Size: f.Size, Dir: f.IsDir(), Modified: f.ModTime})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// PullFile implements sdk.Filer.
func (d *Driver) PullFile(ctx context.Context, serial, p string, w io.Writer) error {
	_, dev, err := d.phone(ctx, serial)
	if err != nil {
		return err
	}
	full, err := onPhone(p)
	if err != nil || p == "" {
		return sdk.Invalid("path %q: name a file in the Pinky folder", p)
	}
	if st, err := dev.Stat(ctx, full); err == nil && st.IsDir() {
		return sdk.Invalid("%q is a folder: pull its files one by one", p)
	}
	_, err = dev.Pull(ctx, full, w)
	return fileErr(err, serial, p)
}

// PushFile implements sdk.Filer.
func (d *Driver) PushFile(ctx context.Context, serial, p string, r io.Reader) (int64, error) {
	_, dev, err := d.phone(ctx, serial)
	if err != nil {
		return 0, err
	}
	full, err := onPhone(p)
	if err != nil || p == "" {
		return 0, sdk.Invalid("path %q: name a file in the Pinky folder", p)
	}
	cr := &countReader{r: r}
	if err := dev.Push(ctx, cr, full, 0o644, time.Now()); err != nil {
		if strings.Contains(err.Error(), "Not a directory") { // adbd's "couldn't create file: Not a directory"
			return cr.n, sdk.Invalid("path %q: a file stands where a folder of the path should be", p)
		}
		return cr.n, mapErr(err)
	}
	return cr.n, nil
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// DeleteFile implements sdk.Filer.
func (d *Driver) DeleteFile(ctx context.Context, serial, p string, recursive bool) error {
	_, dev, err := d.phone(ctx, serial)
	if err != nil {
		return err
	}
	full, err := onPhone(p)
	if err != nil || p == "" {
		return sdk.Invalid("path %q: name a file or folder in the Pinky folder", p)
	}
	st, err := dev.Stat(ctx, full)
	if err != nil || st.Mode == 0 {
		return sdk.Errorf(sdk.ErrFileNotFound, "%s: no %q in the Pinky folder", serial, p)
	}
	cmd := "rm " + adb.Quote(full)
	if st.IsDir() {
		if !recursive {
			list, err := dev.List(ctx, full)
			if err != nil {
				return fileErr(err, serial, p)
			}
			for _, f := range list {
				if f.Name != "." && f.Name != ".." {
					return sdk.Invalid("folder %q is not empty: delete it with recursive", p)
				}
			}
		}
		cmd = "rm -r " + adb.Quote(full)
	}
	_, err = shell(ctx, dev, cmd)
	return err
}

// fileErr names a missing file in the contract's terms.
func fileErr(err error, serial, p string) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, adb.ErrFileNotFound) || strings.Contains(strings.ToLower(err.Error()), "no such file") {
		return sdk.Errorf(sdk.ErrFileNotFound, "%s: no %q in the Pinky folder", serial, p)
	}
	return mapErr(err)
}
