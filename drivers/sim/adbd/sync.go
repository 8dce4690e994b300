package adbd

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// syncID reads a 4-letter sync id as the little-endian word on the wire.
func syncID(s string) uint32 { return binary.LittleEndian.Uint32([]byte(s)) }

var (
	idSTAT = syncID("STAT")
	idSTA2 = syncID("STA2")
	idLST2 = syncID("LST2")
	idLIST = syncID("LIST")
	idLIS2 = syncID("LIS2")
	idSEND = syncID("SEND")
	idRECV = syncID("RECV")
	idQUIT = syncID("QUIT")
	idDATA = syncID("DATA")
	idDONE = syncID("DONE")
)

const syncMaxChunk = 64 << 10

// syncSession is one sync: stream (protocols.md 6.7).
type syncSession struct {
	d   *Device
	ctx context.Context
	r   *bufio.Reader
	w   *bufio.Writer
}

func (d *Device) serveSync(ctx context.Context, s *stream) error {
	ss := &syncSession{d: d, ctx: ctx, r: bufio.NewReaderSize(s, 128<<10), w: bufio.NewWriterSize(s, syncMaxChunk+8)}
	for {
		id, n, err := ss.header()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if id == idQUIT {
			return nil
		}
		if n > 1024 {
			return ss.fail("path too long")
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(ss.r, buf); err != nil {
			return err
		}
		arg := string(buf)
		switch id {
		case idSTAT:
			err = ss.statV1(arg)
		case idSTA2, idLST2:
			err = ss.statV2(id, arg)
		case idLIST:
			err = ss.list(arg, false)
		case idLIS2:
			err = ss.list(arg, true)
		case idSEND:
			err = ss.send(arg)
		case idRECV:
			err = ss.recv(arg)
		default:
			return ss.fail(fmt.Sprintf("unknown command %08x", id))
		}
		if err != nil {
			return err
		}
		if err := ss.w.Flush(); err != nil {
			return err
		}
	}
}

func (ss *syncSession) header() (id, n uint32, err error) {
	var h [8]byte
	if _, err := io.ReadFull(ss.r, h[:]); err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint32(h[0:]), binary.LittleEndian.Uint32(h[4:]), nil
}

func (ss *syncSession) put(vals ...any) {
	for _, v := range vals {
		binary.Write(ss.w, binary.LittleEndian, v)
	}
}

// fail sends FAIL with a message and flushes.
func (ss *syncSession) fail(msg string) error {
	ss.w.WriteString("FAIL")
	ss.put(uint32(len(msg)))
	ss.w.WriteString(msg)
	return ss.w.Flush()
}

func (ss *syncSession) statV1(p string) error {
	fi, err := ss.d.fs.stat(ss.ctx, p)
	ss.put(idSTAT)
	if err != nil {
		ss.put(uint32(0), uint32(0), uint32(0))
		return nil
	}
	ss.put(fi.mode(), uint32(fi.size), uint32(fi.mod.Unix()))
	return nil
}

// statBody is the 68 bytes after a v2 id: error, dev, ino, mode, nlink,
// uid, gid, size, atime, mtime, ctime.
func (ss *syncSession) statBody(fi fileInfo, err error) {
	if err != nil {
		ss.put(errno(err), uint64(0), uint64(0), uint32(0), uint32(0), uint32(0), uint32(0), uint64(0), int64(0), int64(0), int64(0))
		return
	}
	t := fi.mod.Unix()
	ss.put(uint32(0), uint64(0xfd00), fi.ino, fi.mode(), uint32(1), uint32(2000), uint32(1015), uint64(fi.size), t, t, t)
}

func (ss *syncSession) statV2(id uint32, p string) error {
	fi, err := ss.d.fs.stat(ss.ctx, p)
	ss.put(id)
	ss.statBody(fi, err)
	return nil
}

func (ss *syncSession) list(p string, v2 bool) error {
	entries, err := ss.d.fs.list(ss.ctx, p)
	if err != nil {
		entries = nil // like adbd: an unreadable folder lists as empty
	} else {
		// adbd lists what readdir gives, "." and ".." first.
		var dots []fileInfo
		for _, d := range []struct{ name, path string }{{".", p}, {"..", parent(p)}} {
			if fi, err := ss.d.fs.stat(ss.ctx, d.path); err == nil {
				fi.name = d.name
				dots = append(dots, fi)
			}
		}
		entries = append(dots, entries...)
	}
	for _, fi := range entries {
		if v2 {
			ss.put(syncID("DNT2"))
			ss.statBody(fi, nil)
		} else {
			ss.put(syncID("DENT"), fi.mode(), uint32(fi.size), uint32(fi.mod.Unix()))
		}
		ss.put(uint32(len(fi.name)))
		ss.w.WriteString(fi.name)
	}
	ss.put(idDONE)
	if v2 {
		ss.statBody(fileInfo{}, nil)
		ss.put(uint32(0))
		return nil
	}
	ss.put(uint32(0), uint32(0), uint32(0), uint32(0))
	return nil
}

// send receives a file: "path,mode", then DATA chunks and DONE mtime; it
// answers once, after DONE.
func (ss *syncSession) send(arg string) error {
	i := strings.LastIndexByte(arg, ',')
	p, modeText := arg, ""
	if i >= 0 {
		p, modeText = arg[:i], arg[i+1:]
	}
	var failed string
	if mode, err := strconv.ParseUint(modeText, 0, 32); err == nil && mode&syscall.S_IFMT == syscall.S_IFLNK {
		failed = "symbolic links are not supported"
	}
	var w io.WriteCloser
	if failed == "" {
		if fi, err := ss.d.fs.stat(ss.ctx, p); err == nil && fi.dir {
			failed = "couldn't create file: Is a directory"
		}
	}
	var werr error
	for {
		id, n, err := ss.header()
		if err != nil {
			return err
		}
		switch id {
		case idDATA:
			if n > syncMaxChunk {
				return ss.fail("data chunk too large")
			}
			buf := make([]byte, n)
			if _, err := io.ReadFull(ss.r, buf); err != nil {
				return err
			}
			if failed != "" || werr != nil {
				continue
			}
			if w == nil {
				w, werr = ss.d.fs.create(ss.ctx, p, time.Time{})
				if werr != nil {
					w = nil
					continue
				}
			}
			_, werr = w.Write(buf)
		case idDONE:
			mtime := time.Unix(int64(n), 0)
			if failed == "" && werr == nil && w == nil {
				w, werr = ss.d.fs.create(ss.ctx, p, mtime)
			}
			if w != nil {
				if hw, ok := w.(*hostWriter); ok {
					hw.mod = mtime
				}
				if err := w.Close(); werr == nil {
					werr = err
				}
			}
			switch {
			case failed != "":
				return ss.fail(failed)
			case werr != nil:
				return ss.fail("couldn't create file: " + errText(werr))
			}
			ss.put(syncID("OKAY"), uint32(0))
			return nil
		default:
			return ss.fail(fmt.Sprintf("invalid data message %08x", id))
		}
	}
}

func (ss *syncSession) recv(p string) error {
	r, err := ss.d.fs.open(ss.ctx, p)
	if err != nil {
		return ss.fail("open failed: " + errText(err))
	}
	defer r.Close()
	buf := make([]byte, syncMaxChunk)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			ss.put(idDATA, uint32(n))
			ss.w.Write(buf[:n])
			if err := ss.w.Flush(); err != nil {
				return err
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return ss.fail("read failed: " + errText(err))
		}
	}
	ss.put(idDONE, uint32(0))
	return nil
}
