package adb

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"
)

// maxSyncData is the largest DATA chunk the sync protocol allows.
const maxSyncData = 64 * 1024

// maxSyncPath is the longest path adbd accepts in a sync request.
const maxSyncPath = 1024

// FileInfo describes a file on the device, as the sync protocol v1 reports
// it: 32-bit size and mtime in seconds.
type FileInfo struct {
	Name    string
	Mode    fs.FileMode
	Size    int64
	ModTime time.Time
}

// IsDir reports whether the file is a directory.
func (f FileInfo) IsDir() bool { return f.Mode.IsDir() }

// Sync is a file sync session ("sync:") on one device: a single
// connection, one request at a time. Close it to end the session. A FAIL
// reply ends the session on adbd's side; later calls fail.
type Sync struct {
	cn     *conn
	broken error
}

// Sync opens a file sync session. Cancelling ctx closes it.
func (d *Device) Sync(ctx context.Context) (*Sync, error) {
	cn, err := d.c.transport(ctx, d.serial)
	if err != nil {
		return nil, err
	}
	if err := cn.request("sync:"); err != nil {
		cn.Close()
		return nil, err
	}
	return &Sync{cn: cn}, nil
}

// Close sends QUIT and closes the connection.
func (s *Sync) Close() error {
	if s.broken == nil {
		s.write("QUIT", nil)
	}
	return s.cn.Close()
}

func (s *Sync) write(id string, data []byte) error {
	buf := make([]byte, 8, 8+len(data))
	copy(buf, id)
	binary.LittleEndian.PutUint32(buf[4:], uint32(len(data)))
	buf = append(buf, data...)
	if _, err := s.cn.Write(buf); err != nil {
		return s.fail(s.cn.err(fmt.Errorf("adb sync %s: %w", id, err)))
	}
	return nil
}

// fail marks the session as unusable and returns err.
func (s *Sync) fail(err error) error {
	if s.broken == nil {
		s.broken = err
	}
	return err
}

func (s *Sync) check(path string) error {
	if s.broken != nil {
		return fmt.Errorf("adb sync: the session ended after an error: %w", s.broken)
	}
	if len(path) > maxSyncPath {
		return fmt.Errorf("adb sync: path of %d bytes is longer than %d", len(path), maxSyncPath)
	}
	return nil
}

// read reads n bytes of a reply.
func (s *Sync) read(op string, b []byte) error {
	if _, err := io.ReadFull(s.cn, b); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			err = protoErrorf("adb sync %s: the connection closed inside a reply", op)
		}
		return s.fail(s.cn.err(err))
	}
	return nil
}

// readFail reads the message of a FAIL whose length is n.
func (s *Sync) readFail(op, path string, n uint32) error {
	if n > 64*1024 {
		return s.fail(protoErrorf("adb sync %s: FAIL message of %d bytes", op, n))
	}
	msg := make([]byte, n)
	if err := s.read(op, msg); err != nil {
		return err
	}
	return s.fail(failError("sync "+op+" "+path, string(msg)))
}

// Stat returns the file at path (lstat). A missing file gives an error
// wrapping ErrFileNotFound.
func (s *Sync) Stat(path string) (FileInfo, error) {
	if err := s.check(path); err != nil {
		return FileInfo{}, err
	}
	if err := s.write("STAT", []byte(path)); err != nil {
		return FileInfo{}, err
	}
	var b [16]byte
	if err := s.read("STAT", b[:]); err != nil {
		return FileInfo{}, err
	}
	if string(b[:4]) != "STAT" {
		return FileInfo{}, s.fail(protoErrorf("adb sync STAT: unexpected reply %q", b[:4]))
	}
	mode, size, mtime := le(b[4:]), le(b[8:]), le(b[12:])
	if mode == 0 && size == 0 && mtime == 0 {
		return FileInfo{}, fmt.Errorf("%s on the device: %w", path, ErrFileNotFound)
	}
	name := path
	if i := strings.LastIndex(strings.TrimRight(path, "/"), "/"); i >= 0 {
		name = strings.TrimRight(path, "/")[i+1:]
	}
	return FileInfo{Name: name, Mode: fileMode(mode), Size: int64(size), ModTime: time.Unix(int64(mtime), 0)}, nil
}

// List returns the entries of the directory at path, without "." and "..".
// A missing directory gives an empty list, as adbd reports it.
func (s *Sync) List(path string) ([]FileInfo, error) {
	if err := s.check(path); err != nil {
		return nil, err
	}
	if err := s.write("LIST", []byte(path)); err != nil {
		return nil, err
	}
	var list []FileInfo
	for {
		var b [20]byte
		if err := s.read("LIST", b[:]); err != nil {
			return nil, err
		}
		switch string(b[:4]) {
		case "DONE":
			return list, nil
		case "FAIL":
			return nil, s.readFail("LIST", path, le(b[4:]))
		case "DENT":
		default:
			return nil, s.fail(protoErrorf("adb sync LIST: unexpected reply %q", b[:4]))
		}
		n := le(b[16:])
		if n > 4096 {
			return nil, s.fail(protoErrorf("adb sync LIST: name of %d bytes", n))
		}
		name := make([]byte, n)
		if err := s.read("LIST", name); err != nil {
			return nil, err
		}
		if strings.Contains(string(name), "/") { // CVE-2022-20128
			return nil, s.fail(protoErrorf("adb sync LIST: entry name %q has a slash", name))
		}
		if string(name) == "." || string(name) == ".." {
			continue
		}
		list = append(list, FileInfo{
			Name: string(name), Mode: fileMode(le(b[4:])), Size: int64(le(b[8:])),
			ModTime: time.Unix(int64(le(b[12:])), 0),
		})
	}
}

// Send writes r to path on the device with the permission bits of mode
// (0644 if none) and the modification time mtime (now if zero), in DATA
// chunks of 64 KiB.
func (s *Sync) Send(path string, mode fs.FileMode, mtime time.Time, r io.Reader) error {
	if err := s.check(path); err != nil {
		return err
	}
	if mtime.IsZero() {
		mtime = time.Now()
	}
	// adb sends st_mode in decimal, with the file-type bits.
	if err := s.write("SEND", fmt.Appendf(nil, "%s,%d", path, unixMode(mode))); err != nil {
		return s.sendFailure(path, err)
	}
	buf := make([]byte, 8+maxSyncData)
	copy(buf, "DATA")
	for {
		n, rerr := io.ReadFull(r, buf[8:])
		if n > 0 {
			binary.LittleEndian.PutUint32(buf[4:], uint32(n))
			if _, err := s.cn.Write(buf[:8+n]); err != nil {
				return s.sendFailure(path, s.fail(s.cn.err(fmt.Errorf("adb sync SEND %s: %w", path, err))))
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			// Ending the session without DONE makes adbd delete the
			// partial file.
			s.fail(rerr)
			return fmt.Errorf("adb push %s: reading the source: %w", path, rerr)
		}
	}
	var done [8]byte
	copy(done[:], "DONE")
	binary.LittleEndian.PutUint32(done[4:], uint32(mtime.Unix()))
	if _, err := s.cn.Write(done[:]); err != nil {
		return s.sendFailure(path, s.fail(s.cn.err(fmt.Errorf("adb sync SEND %s: %w", path, err))))
	}
	return s.sendReply(path)
}

// sendFailure returns the FAIL that made a write fail, if adbd sent one
// before closing, else err.
func (s *Sync) sendFailure(path string, err error) error {
	if s.cn.ctx.Err() != nil {
		return err
	}
	var fe *ServerError
	if rerr := s.sendReply(path); errors.As(rerr, &fe) {
		return rerr
	}
	return err
}

func (s *Sync) sendReply(path string) error {
	var b [8]byte
	if err := s.read("SEND", b[:]); err != nil {
		return err
	}
	switch string(b[:4]) {
	case "OKAY":
		return nil
	case "FAIL":
		return s.readFail("SEND", path, le(b[4:]))
	}
	return s.fail(protoErrorf("adb sync SEND: unexpected reply %q", b[:4]))
}

// Recv copies the file at path on the device to w and returns the number of
// bytes written. A missing file gives an error wrapping ErrFileNotFound.
func (s *Sync) Recv(path string, w io.Writer) (int64, error) {
	if err := s.check(path); err != nil {
		return 0, err
	}
	if err := s.write("RECV", []byte(path)); err != nil {
		return 0, err
	}
	var total int64
	for {
		var b [8]byte
		if err := s.read("RECV", b[:]); err != nil {
			return total, err
		}
		n := le(b[4:])
		switch string(b[:4]) {
		case "DONE":
			return total, nil
		case "FAIL":
			return total, s.readFail("RECV", path, n)
		case "DATA":
		default:
			return total, s.fail(protoErrorf("adb sync RECV: unexpected reply %q", b[:4]))
		}
		if n > maxSyncData {
			return total, s.fail(protoErrorf("adb sync RECV: DATA of %d bytes", n))
		}
		m, err := io.CopyN(w, s.cn, int64(n))
		total += m
		if err != nil {
			if err == io.EOF {
				err = protoErrorf("adb sync RECV: the connection closed inside DATA")
			}
			return total, s.fail(s.cn.err(err))
		}
	}
}

func le(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// The Linux st_mode type bits.
const (
	sIFMT   = 0o170000
	sIFSOCK = 0o140000
	sIFLNK  = 0o120000
	sIFREG  = 0o100000
	sIFBLK  = 0o060000
	sIFDIR  = 0o040000
	sIFCHR  = 0o020000
	sIFIFO  = 0o010000
	sISUID  = 0o4000
	sISGID  = 0o2000
	sISVTX  = 0o1000
)

// fileMode converts a Linux st_mode to an fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & sIFMT {
	case sIFDIR:
		mode |= fs.ModeDir
	case sIFLNK:
		mode |= fs.ModeSymlink
	case sIFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case sIFBLK:
		mode |= fs.ModeDevice
	case sIFIFO:
		mode |= fs.ModeNamedPipe
	case sIFSOCK:
		mode |= fs.ModeSocket
	}
	if m&sISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&sISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&sISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// unixMode converts the permission bits of m to a regular file's st_mode.
func unixMode(m fs.FileMode) uint32 {
	perm := uint32(m.Perm())
	if perm == 0 {
		perm = 0o644
	}
	return sIFREG | perm
}

// Stat returns the file at path on the device; see Sync.Stat.
func (d *Device) Stat(ctx context.Context, path string) (FileInfo, error) {
	s, err := d.Sync(ctx)
	if err != nil {
		return FileInfo{}, err
	}
	defer s.Close()
	return s.Stat(path)
}

// List returns the entries of a directory on the device; see Sync.List.
func (d *Device) List(ctx context.Context, path string) ([]FileInfo, error) {
	s, err := d.Sync(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.List(path)
}

// Push writes r to path on the device (adb push); see Sync.Send.
func (d *Device) Push(ctx context.Context, r io.Reader, path string, mode fs.FileMode, mtime time.Time) error {
	s, err := d.Sync(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Send(path, mode, mtime, r)
}

// Pull copies the file at path on the device to w (adb pull); see Sync.Recv.
func (d *Device) Pull(ctx context.Context, path string, w io.Writer) (int64, error) {
	s, err := d.Sync(ctx)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	return s.Recv(path, w)
}
