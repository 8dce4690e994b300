package adbd

import (
	"bytes"
	"context"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// pinkyDir is where the phone's Pinky folder (sdk.Filer) appears.
const pinkyDir = "/sdcard/Pinky"

// fsys is the phone's file system: a temporary folder per phone, with
// /sdcard/Pinky served by the driver's sdk.Filer when it has one.
type fsys struct {
	root  string
	filer sdk.Filer
	id    string
}

// fileInfo is what sync and ls need of a file.
type fileInfo struct {
	name string
	dir  bool
	size int64
	mod  time.Time
	ino  uint64
}

// mode is the file's st_mode as Android would show it.
func (f fileInfo) mode() uint32 {
	if f.dir {
		return syscall.S_IFDIR | 0o771
	}
	return syscall.S_IFREG | 0o660
}

// clean makes p absolute and canonical; /storage/emulated/0 is /sdcard.
func clean(p string) string {
	p = path.Clean("/" + p)
	for _, alias := range []string{"/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard"} {
		if p == alias || strings.HasPrefix(p, alias+"/") {
			p = "/sdcard" + p[len(alias):]
		}
	}
	return p
}

// pinky returns p relative to the Pinky folder when the Filer serves it.
func (f *fsys) pinky(p string) (string, bool) {
	if f.filer == nil {
		return "", false
	}
	if p == pinkyDir {
		return "", true
	}
	if rel, ok := strings.CutPrefix(p, pinkyDir+"/"); ok {
		return rel, true
	}
	return "", false
}

func (f *fsys) host(p string) string { return filepath.Join(f.root, filepath.FromSlash(p)) }

func inode(p string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(p))
	return h.Sum64() >> 16
}

// filerErr turns the Filer's errors into the file system's.
func filerErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sdk.ErrFileNotFound):
		return fs.ErrNotExist
	case errors.Is(err, syscall.ENOTDIR): // a file where a folder of the path should be
		return syscall.ENOTDIR
	case errors.Is(err, sdk.ErrInvalidArgument):
		return fs.ErrPermission
	}
	return err
}

func (f *fsys) stat(ctx context.Context, p string) (fileInfo, error) {
	p = clean(p)
	if rel, ok := f.pinky(p); ok {
		if rel == "" {
			return fileInfo{name: "Pinky", dir: true, mod: time.Now(), ino: inode(p)}, nil
		}
		parent, name := path.Split(rel)
		list, err := f.filer.ListFiles(ctx, f.id, strings.TrimSuffix(parent, "/"))
		if err != nil {
			return fileInfo{}, filerErr(err)
		}
		for _, e := range list {
			if e.Name == name {
				return fileInfo{name: name, dir: e.Dir, size: e.Size, mod: e.Modified, ino: inode(p)}, nil
			}
		}
		return fileInfo{}, fs.ErrNotExist
	}
	st, err := os.Stat(f.host(p))
	if err != nil {
		return fileInfo{}, err
	}
	return fileInfo{name: path.Base(p), dir: st.IsDir(), size: st.Size(), mod: st.ModTime(), ino: inode(p)}, nil
}

func (f *fsys) list(ctx context.Context, p string) ([]fileInfo, error) {
	p = clean(p)
	var out []fileInfo
	if rel, ok := f.pinky(p); ok {
		list, err := f.filer.ListFiles(ctx, f.id, rel)
		if err != nil {
			return nil, filerErr(err)
		}
		for _, e := range list {
			out = append(out, fileInfo{name: e.Name, dir: e.Dir, size: e.Size, mod: e.Modified, ino: inode(path.Join(p, e.Name))})
		}
	} else {
		entries, err := os.ReadDir(f.host(p))
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			st, err := e.Info()
			if err != nil {
				continue
			}
			out = append(out, fileInfo{name: e.Name(), dir: e.IsDir(), size: st.Size(), mod: st.ModTime(), ino: inode(path.Join(p, e.Name()))})
		}
	}
	slices.SortFunc(out, func(a, b fileInfo) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

func (f *fsys) open(ctx context.Context, p string) (io.ReadCloser, error) {
	p = clean(p)
	if rel, ok := f.pinky(p); ok {
		var buf bytes.Buffer
		if err := f.filer.PullFile(ctx, f.id, rel, &buf); err != nil {
			if errors.Is(err, sdk.ErrInvalidArgument) {
				return nil, syscall.EISDIR
			}
			return nil, filerErr(err)
		}
		return io.NopCloser(&buf), nil
	}
	st, err := os.Stat(f.host(p))
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, syscall.EISDIR
	}
	return os.Open(f.host(p))
}

// create writes a file, making its folders; the file is complete on Close.
func (f *fsys) create(ctx context.Context, p string, mod time.Time) (io.WriteCloser, error) {
	p = clean(p)
	if rel, ok := f.pinky(p); ok {
		if rel == "" {
			return nil, syscall.EISDIR
		}
		return &filerWriter{ctx: ctx, f: f, rel: rel}, nil
	}
	if err := os.MkdirAll(filepath.Dir(f.host(p)), 0o755); err != nil {
		return nil, err
	}
	fh, err := os.Create(f.host(p))
	if err != nil {
		return nil, err
	}
	return &hostWriter{File: fh, mod: mod}, nil
}

type hostWriter struct {
	*os.File
	mod time.Time
}

func (w *hostWriter) Close() error {
	err := w.File.Close()
	if err == nil && !w.mod.IsZero() {
		err = os.Chtimes(w.Name(), w.mod, w.mod)
	}
	return err
}

type filerWriter struct {
	ctx context.Context
	f   *fsys
	rel string
	buf bytes.Buffer
}

func (w *filerWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *filerWriter) Close() error {
	_, err := w.f.filer.PushFile(w.ctx, w.f.id, w.rel, &w.buf)
	return filerErr(err)
}

func (f *fsys) mkdirAll(p string) error {
	p = clean(p)
	if _, ok := f.pinky(p); ok {
		return nil // the Pinky folder makes folders when files land in them
	}
	return os.MkdirAll(f.host(p), 0o755)
}

func (f *fsys) remove(ctx context.Context, p string, recursive bool) error {
	p = clean(p)
	if rel, ok := f.pinky(p); ok {
		if rel == "" {
			return fs.ErrPermission
		}
		return filerErr(f.filer.DeleteFile(ctx, f.id, rel, recursive))
	}
	if p == "/" {
		return fs.ErrPermission
	}
	if recursive {
		if _, err := os.Lstat(f.host(p)); err != nil {
			return err
		}
		return os.RemoveAll(f.host(p))
	}
	st, err := os.Lstat(f.host(p))
	if err != nil {
		return err
	}
	if st.IsDir() {
		return syscall.EISDIR
	}
	return os.Remove(f.host(p))
}

// errno is the Linux errno sync v2 sends for err.
func errno(err error) uint32 {
	var en syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.As(err, &en):
		return uint32(en)
	case errors.Is(err, fs.ErrNotExist):
		return uint32(syscall.ENOENT)
	case errors.Is(err, fs.ErrPermission):
		return uint32(syscall.EACCES)
	}
	return uint32(syscall.EIO)
}

// errText is the strerror text for err, as toybox prints it.
func errText(err error) string {
	switch errno(err) {
	case uint32(syscall.ENOENT):
		return "No such file or directory"
	case uint32(syscall.EACCES):
		return "Permission denied"
	case uint32(syscall.EISDIR):
		return "Is a directory"
	case uint32(syscall.ENOTDIR):
		return "Not a directory"
	}
	return err.Error()
}
