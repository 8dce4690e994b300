package adbd

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"sync"
)

// Shell protocol v2 packet ids (protocols.md 6.6).
const (
	idStdin      = 0
	idStdout     = 1
	idStderr     = 2
	idExit       = 3
	idCloseStdin = 4
	idWindowSize = 5
)

// packetWriter writes one stream of shell v2 packets; wmu serializes the
// packets of stdout and stderr.
type packetWriter struct {
	wmu *sync.Mutex
	w   io.Writer
	id  byte
}

func (p packetWriter) Write(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	n := 0
	for len(b) > 0 {
		chunk := b[:min(len(b), 256<<10)]
		buf := make([]byte, 5+len(chunk))
		buf[0] = p.id
		binary.LittleEndian.PutUint32(buf[1:], uint32(len(chunk)))
		copy(buf[5:], chunk)
		if _, err := p.w.Write(buf); err != nil {
			return n, err
		}
		n += len(chunk)
		b = b[len(chunk):]
	}
	return n, nil
}

// lockedWriter serializes writes from stdout and stderr on a raw stream.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// serveShell runs a shell:, shell,ARGS: or exec: service. Without the
// shell protocol, stdout and stderr share the stream and there is no exit
// code; with it (v2), they are framed apart and an exit packet ends the run.
func (d *Device) serveShell(ctx context.Context, s *stream, args, cmd string, v2 bool) error {
	pty := cmd == ""
	for _, a := range strings.Split(args, ",") {
		switch a {
		case "raw":
			pty = false
		case "pty":
			pty = true
		}
	}
	var mu sync.Mutex
	sh := &shell{d: d, ctx: ctx, cwd: "/"}
	if !v2 {
		// A pty made raw: one stream, bytes as they are.
		sh.stdin = s
		sh.stdout = lockedWriter{&mu, s}
		sh.stderr = sh.stdout
		sh.tty = sh.stdout
		if cmd == "" {
			sh.interactive(pty)
		} else {
			sh.runLine(cmd)
		}
		return nil
	}
	pr, pw := io.Pipe()
	if pty {
		// A cooked pty: stderr joins stdout, "\n" leaves as "\r\n", and
		// what a command reads is echoed. An interactive shell echoes and
		// prompts itself, so only what its commands print is translated.
		raw := packetWriter{&mu, s, idStdout}
		term := onlcr{raw}
		sh.stdout, sh.stderr, sh.tty = term, term, term
		sh.stdin = pr
		if cmd != "" {
			sh.stdin = echoReader{pr, term}
		}
		sh.prompt = raw // an interactive shell writes its own "\r\n"
	} else {
		sh.stdout = packetWriter{&mu, s, idStdout}
		sh.stderr = packetWriter{&mu, s, idStderr}
		sh.stdin = pr
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		pw.CloseWithError(readStdin(s, pw, pty))
	}()
	if cmd == "" {
		sh.interactive(pty)
	} else {
		sh.runLine(cmd)
	}
	pr.Close() // unblocks the stdin reader if nothing read what it got
	if !sh.cut {
		packetWriter{&mu, s, idExit}.Write([]byte{byte(sh.status)})
	}
	s.Close() // ends readStdin
	<-done
	return nil
}

// readStdin copies the stdin packets of a v2 stream to w until close-stdin
// (ignored on a pty) or the end of the stream.
func readStdin(s io.Reader, w io.Writer, pty bool) error {
	r := bufio.NewReader(s)
	var h [5]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return nil
		}
		n := int64(binary.LittleEndian.Uint32(h[1:]))
		switch h[0] {
		case idStdin:
			if _, err := io.CopyN(w, r, n); err != nil {
				if _, err := io.CopyN(io.Discard, r, n); err != nil {
					return nil
				}
			}
		case idCloseStdin:
			if _, err := io.CopyN(io.Discard, r, n); err != nil {
				return nil
			}
			if !pty {
				return nil
			}
		default: // window size and unknown packets
			if _, err := io.CopyN(io.Discard, r, n); err != nil {
				return nil
			}
		}
	}
}
