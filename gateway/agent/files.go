package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// A phone's files live in two places: its Pinky folder on the phone (the
// driver's Filer) and $PINKY_HOME/files/<device> on the computer. phone_files
// lists both, pulls phone → computer and pushes computer → phone (asking
// the person, policy action files_push); phone_upload saves an agent's
// bytes on the computer for a later push.
//
// On the computer every path is opened through an os.Root on the device's
// folder, so nothing leaves it, and no path may go through a symbolic link.

// nameElement is what upload accepts for each element of a path.
var nameElement = regexp.MustCompile(`^[A-Za-z0-9._ -]{1,128}$`)

// Files lists, pulls or pushes a phone's files.
func (s *Session) Files(ctx context.Context, device string, req FilesRequest, progress Progress) (*FilesResult, error) {
	if req.Action == "" {
		req.Action = "list"
	}
	args := map[string]any{"device": device, "action": req.Action, "path": req.Path}
	c, err := s.begin(ctx, device, ToolFiles, args, progress)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*FilesResult, error) {
		return nil, c.fail(ctx, err)
	}
	if err := checkFilePath(req.Path, req.Action == "list"); err != nil {
		return fail(err)
	}
	if !s.m.serves(c.p, sdk.CapFiles) {
		return fail(s.m.unsupported(c.p, device, sdk.CapFiles, device+" has no Pinky folder"))
	}
	f := c.drv
	res := &FilesResult{Action: req.Action, Path: req.Path}
	switch req.Action {
	case "list":
		res.Files, err = s.listFiles(ctx, f, device, req.Path)
		if err != nil {
			return fail(err)
		}
		res.Step = c.done(ctx, fmt.Sprintf("%d entries", len(res.Files)))
	case "pull":
		root, err := s.filesRoot(device, true)
		if err != nil {
			return fail(err)
		}
		defer root.Close()
		if res.Size, err = pull(ctx, f, root, device, req.Path); err != nil {
			return fail(err)
		}
		res.Step = c.done(ctx, fmt.Sprintf("pulled %s (%d bytes)", req.Path, res.Size))
	case "push":
		if err := s.m.personHas(device); err != nil {
			return fail(err)
		}
		if book := s.m.cfg.Approvals; book != nil && req.ApprovalID == "" {
			if card, open := book.OpenFor(device); open {
				return fail(Errorf(CodeApprovalPending,
					"an approval is open on %s (%s: %s); wait with phone_approval (id %s) before acting again", device, card.Tool, card.Target, card.ID))
			}
		}
		root, err := s.filesRoot(device, false)
		if err != nil {
			return fail(err)
		}
		defer root.Close()
		// The file must be there before the person is asked.
		if err := regularFile(root, req.Path); err != nil {
			return fail(err)
		}
		c.p.act.Lock()
		defer c.p.act.Unlock()
		s.m.mu.Lock()
		view := c.task.last
		s.m.mu.Unlock()
		if view == nil {
			view = &screen.View{}
		}
		a := Action{Tool: ToolFiles, Kind: "files_push", Path: req.Path, ApprovalID: req.ApprovalID}
		target := &screen.Node{Role: "file", Label: req.Path}
		if _, err := s.guard(ctx, c, view, aim{start: touch{node: target}}, a); err != nil {
			return fail(err)
		}
		// The step is committed before the file reaches the phone (intent.go);
		// fail and done end it.
		if err := c.intend(ctx); err != nil {
			return nil, err
		}
		if res.Size, err = push(ctx, f, root, device, req.Path); err != nil {
			return fail(err)
		}
		res.Step = c.done(ctx, fmt.Sprintf("pushed %s (%d bytes)", req.Path, res.Size))
		if err := c.in.end(ctx, nil); err != nil {
			return nil, err
		}
	default:
		return fail(Errorf(CodeInvalidArgument, "action %q: want list, pull or push", req.Action))
	}
	return res, nil
}

// pushApproved runs a push the person approved while the agent waited with
// phone_approval.
func (s *Session) pushApproved(ctx context.Context, device string, a Action, progress Progress) (*Observation, error) {
	r, err := s.Files(ctx, device, FilesRequest{Action: "push", Path: a.Path, ApprovalID: a.ApprovalID}, progress)
	if err != nil {
		return nil, err
	}
	return &Observation{Device: device, Text: fmt.Sprintf("Pushed %s (%d bytes) to %s's Pinky folder.", r.Path, r.Size, device), Settled: true, Step: r.Step}, nil
}

// Upload saves a file an agent sends into the phone's folder on the
// computer, for a later push. Names are strict: each element of the path
// matches [A-Za-z0-9._ -]{1,128}.
func (s *Session) Upload(ctx context.Context, device, p string, data []byte) (int64, error) {
	args := map[string]any{"device": device, "path": p, "bytes": len(data)}
	return s.upload(ctx, device, p, bytes.NewReader(data), -1, args)
}

// UploadFrom saves what r holds, at most max bytes, into the phone's folder
// on the computer, through the same checks and write path as Upload (MCP
// over HTTP's one-time upload links). A stream longer than max is refused
// with ErrUploadTooLarge and nothing is written. The step recorded is a
// phone_upload's, without the content.
func (s *Session) UploadFrom(ctx context.Context, device, p string, r io.Reader, max int64) (int64, error) {
	args := map[string]any{"device": device, "path": p, "via": "upload_link"}
	return s.upload(ctx, device, p, r, max, args)
}

// CheckUpload checks, without writing or recording anything, that the
// session holds device and that p is a name Upload accepts: an upload link
// is refused when its upload would be.
func (s *Session) CheckUpload(device, p string) error {
	if _, err := s.hold(device); err != nil {
		return err
	}
	return checkUploadPath(p)
}

// ErrUploadTooLarge is UploadFrom's failure for a stream over its limit.
var ErrUploadTooLarge = errors.New("the file is larger than allowed")

func checkUploadPath(p string) error {
	if err := checkFilePath(p, false); err != nil {
		return err
	}
	for _, el := range strings.Split(p, "/") {
		if !nameElement.MatchString(el) || el == "." {
			return Errorf(CodeInvalidArgument, "path %q: each name must be 1 to 128 of A-Z a-z 0-9 . _ - and space", p)
		}
	}
	return nil
}

// upload writes r (at most max bytes when max ≥ 0) to p and records the
// step; args["bytes"] is set to what was written.
func (s *Session) upload(ctx context.Context, device, p string, r io.Reader, max int64, args map[string]any) (int64, error) {
	c, err := s.held(time.Now(), device, ToolUpload, args)
	if err != nil {
		return 0, err
	}
	fail := func(err error) (int64, error) {
		return 0, c.fail(ctx, err)
	}
	if err := checkUploadPath(p); err != nil {
		return fail(err)
	}
	if err := s.mayUpload(c.task, p); err != nil {
		return fail(err)
	}
	root, err := s.filesRoot(device, true)
	if err != nil {
		return fail(err)
	}
	defer root.Close()
	if max >= 0 {
		r = &capReader{r: r, left: max}
	}
	n, err := writeFile(root, p, r)
	if errors.Is(err, ErrUploadTooLarge) {
		return fail(fmt.Errorf("%w: %w", ErrUploadTooLarge,
			Errorf(CodeInvalidArgument, "the file is larger than %d bytes; nothing was saved", max)))
	}
	if err != nil {
		return fail(err)
	}
	args["bytes"] = n
	c.done(ctx, fmt.Sprintf("saved %d bytes as %s on the computer", n, p))
	return n, nil
}

// capReader fails with ErrUploadTooLarge once more than left bytes come.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(b []byte) (int, error) {
	if c.left < 0 {
		return 0, ErrUploadTooLarge
	}
	if int64(len(b)) > c.left+1 {
		b = b[:c.left+1]
	}
	n, err := c.r.Read(b)
	c.left -= int64(n)
	if c.left < 0 {
		return n, ErrUploadTooLarge
	}
	return n, err
}

// checkFilePath refuses what sdk.CheckPath refuses, and "" unless the
// folder itself is meant.
func checkFilePath(p string, folderOK bool) error {
	if err := sdk.CheckPath(p); err != nil {
		return Errorf(CodeInvalidArgument, "%s", strings.TrimPrefix(err.Error(), sdk.ErrInvalidArgument.Error()+": "))
	}
	if strings.Trim(p, "/") == "" && !folderOK {
		return Errorf(CodeInvalidArgument, "path is required: a file relative to the Pinky folder")
	}
	return nil
}

// filesRoot opens the device's folder on the computer, creating it (0700)
// when create is set.
func (s *Session) filesRoot(device string, create bool) (*os.Root, error) {
	base := s.m.cfg.Files
	if base == "" {
		return nil, Errorf(CodeUnsupported, "this gateway keeps no files on the computer")
	}
	if device == "" || device == "." || device == ".." || strings.ContainsAny(device, "/\\\x00") {
		return nil, Errorf(CodeInvalidArgument, "device %q cannot name a folder", device)
	}
	dir := filepath.Join(base, device)
	if create {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("files folder: %w", err)
		}
	}
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, Errorf(CodeInvalidArgument, "the files folder of %s is a symbolic link; refused", device)
	}
	r, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Errorf(CodeNotFound, "nothing of %s is on the computer yet: pull a file or upload one first", device)
	}
	if err != nil {
		return nil, fmt.Errorf("files folder: %w", err)
	}
	return r, nil
}

// noLinks refuses a path whose elements, on the computer, include a
// symbolic link. A missing element ends the check (it may be created).
func noLinks(root *os.Root, p string) error {
	cur := ""
	for _, el := range strings.Split(strings.Trim(p, "/"), "/") {
		if el == "" || el == "." {
			continue
		}
		cur = path.Join(cur, el)
		fi, err := root.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return Errorf(CodeInvalidArgument, "path %q: %v", p, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return Errorf(CodeInvalidArgument, "path %q goes through a symbolic link on the computer; refused", p)
		}
	}
	return nil
}

func rootPath(p string) string {
	if p = strings.Trim(p, "/"); p == "" {
		return "."
	}
	return p
}

// regularFile checks that p is a regular file on the computer.
func regularFile(root *os.Root, p string) error {
	if err := noLinks(root, p); err != nil {
		return err
	}
	fi, err := root.Lstat(rootPath(p))
	if errors.Is(err, fs.ErrNotExist) {
		return Errorf(CodeNotFound, "%s is not on the computer; pull it or upload it first", p)
	}
	if err != nil {
		return Errorf(CodeInvalidArgument, "path %q: %v", p, err)
	}
	if !fi.Mode().IsRegular() {
		return Errorf(CodeInvalidArgument, "%s on the computer is not a regular file", p)
	}
	return nil
}

// writeFile writes r to p through a temporary file renamed into place:
// never through a link, never a half-written file.
func writeFile(root *os.Root, p string, r io.Reader) (int64, error) {
	p = rootPath(p)
	if err := noLinks(root, p); err != nil {
		return 0, err
	}
	if dir := path.Dir(p); dir != "." {
		if err := root.MkdirAll(dir, 0o700); err != nil {
			return 0, Errorf(CodeInvalidArgument, "path %q: %v", p, err)
		}
	}
	if fi, err := root.Lstat(p); err == nil && !fi.Mode().IsRegular() {
		return 0, Errorf(CodeInvalidArgument, "%s on the computer is not a regular file", p)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(p), ".pinky-"+hex.EncodeToString(rnd[:])+".tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, fmt.Errorf("files folder: %w", err)
	}
	n, err := io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, p)
	}
	if err != nil {
		root.Remove(tmp)
		return 0, err
	}
	return n, nil
}

// pull copies a file from the phone to the computer.
func pull(ctx context.Context, f sdk.Filer, root *os.Root, device, p string) (int64, error) {
	if err := noLinks(root, p); err != nil {
		return 0, err // refused before the driver sees it
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := f.PullFile(ctx, device, p, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	n, err := writeFile(root, p, pr)
	pr.CloseWithError(errors.New("stopped"))
	derr := <-done
	if derr != nil {
		return 0, fromDriver(device, derr, false)
	}
	return n, err
}

// push copies a file from the computer to the phone.
func push(ctx context.Context, f sdk.Filer, root *os.Root, device, p string) (int64, error) {
	if err := regularFile(root, p); err != nil {
		return 0, err
	}
	file, err := root.OpenFile(rootPath(p), os.O_RDONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("files folder: %w", err)
	}
	defer file.Close()
	n, err := f.PushFile(ctx, device, p, file)
	if err != nil {
		return 0, fromDriver(device, err, true)
	}
	return n, nil
}

// listFiles lists a folder on both sides and says where each entry is. A
// path that names a file lists that one file, as ls does.
func (s *Session) listFiles(ctx context.Context, f sdk.Filer, device, p string) ([]File, error) {
	onPhone, perr := f.ListFiles(ctx, device, p)
	phoneMissing := errors.Is(perr, sdk.ErrFileNotFound)
	// Drivers answer a file path differently: an error (reading a folder
	// that is a file), or the file as the folder's only entry. The parent
	// folder tells which.
	if name := strings.Trim(p, "/"); name != "" && ((perr != nil && !phoneMissing) ||
		(len(onPhone) == 1 && !onPhone[0].Dir && onPhone[0].Name == path.Base(name)) || s.fileOnComputer(device, p)) {
		e, err := s.oneFile(ctx, f, device, name)
		if err != nil {
			return nil, err
		}
		if e != nil {
			return []File{*e}, nil
		}
	}
	if perr != nil && !phoneMissing {
		return nil, fromDriver(device, perr, false)
	}
	byName := map[string]*File{}
	var out []*File
	for _, fi := range onPhone {
		e := &File{Name: fi.Name, Size: fi.Size, Dir: fi.Dir, Modified: fi.Modified, Where: WherePhone}
		byName[fi.Name] = e
		out = append(out, e)
	}
	computerMissing := true
	if s.m.cfg.Files != "" {
		if root, err := s.filesRoot(device, false); err == nil {
			defer root.Close()
			if err := noLinks(root, p); err != nil {
				return nil, err
			}
			if d, err := root.Open(rootPath(p)); err == nil {
				ents, rerr := d.ReadDir(-1)
				d.Close()
				if rerr == nil {
					computerMissing = false
				}
				for _, de := range ents {
					if strings.HasPrefix(de.Name(), ".pinky-") || (!de.Type().IsRegular() && !de.IsDir()) {
						continue // temporary files, links and devices are not listed
					}
					info, err := de.Info()
					if err != nil {
						continue
					}
					if e := byName[de.Name()]; e != nil {
						switch {
						case e.Dir != de.IsDir() || (!e.Dir && e.Size != info.Size()):
							e.Where = WhereDiffers
						default:
							e.Where = WhereBoth
						}
						continue
					}
					e := &File{Name: de.Name(), Dir: de.IsDir(), Modified: info.ModTime(), Where: WhereComputer}
					if !e.Dir {
						e.Size = info.Size()
					}
					out = append(out, e)
				}
			}
		}
	}
	if phoneMissing && computerMissing {
		return nil, fromDriver(device, perr, false)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	files := make([]File, len(out))
	for i, e := range out {
		files[i] = *e
	}
	return files, nil
}

// fileOnComputer reports whether p is a regular file in the device's
// folder on the computer.
func (s *Session) fileOnComputer(device, p string) bool {
	if s.m.cfg.Files == "" {
		return false
	}
	root, err := s.filesRoot(device, false)
	if err != nil {
		return false
	}
	defer root.Close()
	return regularFile(root, p) == nil
}

// oneFile returns the entry of the file name (a clean path, not the
// folder) on both sides, or nil when neither side has a file there or the
// phone has a folder there.
func (s *Session) oneFile(ctx context.Context, f sdk.Filer, device, name string) (*File, error) {
	dir, base := path.Split(name)
	var e *File
	siblings, err := f.ListFiles(ctx, device, strings.TrimSuffix(dir, "/"))
	switch {
	case errors.Is(err, sdk.ErrFileNotFound):
	case err != nil:
		return nil, fromDriver(device, err, false)
	}
	for _, fi := range siblings {
		switch {
		case fi.Name != base:
		case fi.Dir:
			return nil, nil // a folder on the phone: it is listed as one
		default:
			e = &File{Name: base, Size: fi.Size, Modified: fi.Modified, Where: WherePhone}
		}
	}
	if s.fileOnComputer(device, name) {
		root, err := s.filesRoot(device, false)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		info, err := root.Lstat(name)
		if err != nil {
			return nil, fmt.Errorf("files folder: %w", err)
		}
		switch {
		case e == nil:
			e = &File{Name: base, Size: info.Size(), Modified: info.ModTime(), Where: WhereComputer}
		case e.Size != info.Size():
			e.Where = WhereDiffers
		default:
			e.Where = WhereBoth
		}
	}
	return e, nil
}
