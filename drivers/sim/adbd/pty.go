package adbd

import (
	"bytes"
	"fmt"
	"io"
)

// The three terminals adbd gives a command (daemon/shell_service.cpp):
//
//   - shell: and exec: (no shell protocol) run on a pty made raw
//     (make_pty_raw): stdout and stderr share the stream, bytes pass as they
//     are, /dev/tty works.
//   - shell,v2,raw: runs on pipes: stdout and stderr apart, no controlling
//     terminal, so /dev/tty cannot be opened and `tty` says "not a tty".
//   - shell,v2,pty: runs on a pty left in its default (cooked) mode: stderr
//     reaches the client as stdout packets, the line discipline turns each
//     "\n" written into "\r\n" (ONLCR) and echoes what is read from stdin
//     (ECHO, with "\r" read as "\n": ICRNL), and close-stdin is ignored
//     ("PTYs can't close just input").

// onlcr writes through w with every "\n" turned into "\r\n", as a cooked
// pty's output processing does.
type onlcr struct{ w io.Writer }

func (o onlcr) Write(b []byte) (int, error) {
	if bytes.IndexByte(b, '\n') < 0 {
		return o.w.Write(b)
	}
	if _, err := o.w.Write(bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// echoReader reads stdin through a cooked pty: "\r" arrives as "\n" and
// what is read is echoed to the terminal.
type echoReader struct {
	r    io.Reader
	echo io.Writer
}

func (e echoReader) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	for i := range p[:n] {
		if p[i] == '\r' {
			p[i] = '\n'
		}
	}
	if n > 0 {
		e.echo.Write(p[:n])
	}
	return n, err
}

// cmdTty prints the terminal's name, as toybox tty does.
func cmdTty(sh *shell, _ []string, io3 stdio) int {
	if sh.tty == nil {
		fmt.Fprintln(io3.out, "not a tty")
		return 1
	}
	fmt.Fprintln(io3.out, "/dev/pts/0")
	return 0
}
