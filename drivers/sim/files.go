package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// ListFiles lists a folder inside the phone's Pinky folder; "" is the folder itself.
func (d *Driver) ListFiles(ctx context.Context, deviceID, name string) ([]sdk.FileInfo, error) {
	var out []sdk.FileInfo
	err := d.with(ctx, "list_files", deviceID, "", func(p *phone) error {
		full, err := p.path(name)
		if err != nil {
			return err
		}
		st, err := os.Stat(full)
		if err != nil {
			return fileErr(deviceID, name, err)
		}
		if !st.IsDir() { // a file lists as itself, as ls FILE does
			out = append(out, sdk.FileInfo{Name: st.Name(), Size: st.Size(), Modified: st.ModTime()})
			return nil
		}
		entries, err := os.ReadDir(full)
		if err != nil {
			return fileErr(deviceID, name, err)
		}
		for _, e := range entries {
			info, err := e.Info()
			if err != nil {
				return fileErr(deviceID, name, err)
			}
			out = append(out, sdk.FileInfo{Name: e.Name(), Size: info.Size(), Dir: e.IsDir(), Modified: info.ModTime()})
		}
		return nil
	})
	return out, err
}

// PullFile copies a file of the Pinky folder to w.
func (d *Driver) PullFile(ctx context.Context, deviceID, name string, w io.Writer) error {
	return d.with(ctx, "pull_file", deviceID, "", func(p *phone) error {
		full, err := p.path(name)
		if err != nil {
			return err
		}
		f, err := os.Open(full)
		if err != nil {
			return fileErr(deviceID, name, err)
		}
		defer f.Close()
		if st, err := f.Stat(); err == nil && st.IsDir() {
			return sdk.Invalid("%q is a folder", name)
		}
		_, err = io.Copy(w, f)
		return err
	})
}

// PushFile writes r to a file of the Pinky folder, making folders on the way.
func (d *Driver) PushFile(ctx context.Context, deviceID, name string, r io.Reader) (int64, error) {
	var n int64
	err := d.with(ctx, "push_file", deviceID, "", func(p *phone) error {
		full, err := p.path(name)
		if err != nil {
			return err
		}
		if name == "" || name == "." {
			return sdk.Invalid("a file name is required")
		}
		if st, err := os.Stat(full); err == nil && st.IsDir() {
			return sdk.Invalid("%q is a folder", name)
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
				// ENOTDIR too, for the adb face to answer as adbd does.
				return fmt.Errorf("%q: a file stands where a folder of the path should be: %w: %w", name, syscall.ENOTDIR, sdk.ErrInvalidArgument)
			}
			return err
		}
		// Write beside the target and rename over it, so that a push that
		// fails half-way leaves the old file as it was.
		f, err := os.CreateTemp(filepath.Dir(full), ".push-*")
		if err != nil {
			return err
		}
		defer os.Remove(f.Name())
		n, err = io.Copy(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return os.Rename(f.Name(), full)
	})
	return n, err
}

// DeleteFile removes a file or an empty folder of the Pinky folder, or with
// recursive a folder and everything in it.
func (d *Driver) DeleteFile(ctx context.Context, deviceID, name string, recursive bool) error {
	return d.with(ctx, "delete_file", deviceID, "", func(p *phone) error {
		full, err := p.path(name)
		if err != nil {
			return err
		}
		root, _ := p.pinkyFolder()
		if full == root {
			return sdk.Invalid("path %q is the Pinky folder itself", name)
		}
		st, err := os.Lstat(full)
		if err != nil {
			return fileErr(deviceID, name, err)
		}
		if st.IsDir() && recursive {
			return os.RemoveAll(full)
		}
		if err := os.Remove(full); err != nil {
			if st.IsDir() {
				return sdk.Invalid("folder %q is not empty; delete it with recursive", name)
			}
			return fileErr(deviceID, name, err)
		}
		return nil
	})
}

func fileErr(id, name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) { // a/b where a is a file: no such file
		return fmt.Errorf("device %q: %q: %w", id, name, sdk.ErrFileNotFound)
	}
	return fmt.Errorf("device %q: %q: %w", id, name, err)
}

// path checks a slash-separated relative path and returns it inside the
// Pinky folder. It refuses absolute paths, "..", and symbolic links on the way.
func (p *phone) path(name string) (string, error) {
	if err := sdk.CheckPath(name); err != nil {
		return "", err
	}
	root, err := p.pinkyFolder()
	if err != nil {
		return "", err
	}
	full := root
	for _, part := range strings.Split(path.Clean("/" + name)[1:], "/") {
		if part == "" {
			continue
		}
		full = filepath.Join(full, part)
		if st, err := os.Lstat(full); err == nil && st.Mode()&fs.ModeSymlink != 0 {
			return "", sdk.Invalid("path %q goes through a symbolic link", name)
		}
	}
	return full, nil
}

// pinkyFolder makes the phone's folder on first use, with the world's files in it.
func (p *phone) pinkyFolder() (string, error) {
	if p.folder != "" {
		return p.folder, nil
	}
	dir, err := os.MkdirTemp("", "pinky-sim-"+p.spec.ID+"-")
	if err != nil {
		return "", err
	}
	for name, content := range p.spec.Files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(full, []byte(content), 0o600); err != nil {
			return "", err
		}
	}
	p.folder = dir
	return dir, nil
}
