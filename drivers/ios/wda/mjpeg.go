package wda

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"strconv"
	"strings"
)

// Limits on an MJPEG stream.
const (
	// MaxFrameSize bounds one MJPEG frame. A full-resolution JPEG of an
	// iPad Pro screen at top quality stays well below it.
	MaxFrameSize = 16 << 20
	maxLine      = 4096 // one header or boundary line
	maxHeaders   = 64   // header lines of the stream or of a frame
	maxSkip      = 64   // blank lines between frames
)

// MJPEG reads WDA's MJPEG server at addr ("host:port"; a bare host means
// port 9100) and calls fn with each JPEG frame until ctx ends or fn returns
// an error, which MJPEG returns. fn owns the frame it gets; empty parts are
// skipped. When ctx ends
// MJPEG returns ctx.Err(); when the stream ends it returns an error that
// wraps io.EOF.
//
// WDA's server (FBMjpegServer.m) declares "boundary=--BoundaryString" but
// delimits frames with "--BoundaryString", so a MIME multipart reader given
// the declared boundary finds nothing. MJPEG accepts either form and reads
// each frame by its Content-Length, up to MaxFrameSize.
func MJPEG(ctx context.Context, addr string, fn func(jpeg []byte) error) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(strings.Trim(addr, "[]"), strconv.Itoa(DefaultMJPEGPort))
	}
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("wda mjpeg %s: %w: %w", addr, ErrUnreachable, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()

	err = readMJPEG(conn, addr, fn)
	var fe fnError
	if errors.As(err, &fe) {
		return fe.err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("wda mjpeg %s: %w", addr, err) // readMJPEG ends only with an error
}

// errStop ends a stream from OneMJPEGFrame's callback.
var errStop = errors.New("stop")

// OneMJPEGFrame returns the next frame of WDA's MJPEG stream at addr: a
// screenshot, faster than /screenshot, when no video stream runs. Without a
// deadline on ctx it waits at most DefaultSlowTimeout; a deadline that
// passes gives ErrTimeout.
func OneMJPEGFrame(ctx context.Context, addr string) ([]byte, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultSlowTimeout)
		defer cancel()
	}
	var frame []byte
	err := MJPEG(ctx, addr, func(jpeg []byte) error {
		frame = jpeg
		return errStop
	})
	switch {
	case err == errStop:
		return frame, nil
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("wda mjpeg %s: no frame in time: %w", addr, ErrTimeout)
	}
	return nil, err
}

// fnError carries the callback's error out of readMJPEG unchanged.
type fnError struct{ err error }

func (e fnError) Error() string { return e.err.Error() }

// readMJPEG sends the request line WDA waits for, then reads the stream's
// header and its frames.
func readMJPEG(conn net.Conn, addr string, fn func([]byte) error) error {
	if _, err := fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", addr); err != nil {
		return err
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	boundary, err := readStreamHeader(br)
	if err != nil {
		return err
	}
	for {
		frame, err := readFrame(br, boundary)
		if err != nil {
			return err
		}
		if len(frame) == 0 {
			continue // not a JPEG; WDA does not send these
		}
		if err := fn(frame); err != nil {
			return fnError{err}
		}
	}
}

// readStreamHeader reads the HTTP response header and returns the boundary
// without its leading dashes, "" if none was declared. A stream that starts
// with a delimiter and no header is accepted too.
func readStreamHeader(br *bufio.Reader) (string, error) {
	b, err := br.Peek(2)
	if err != nil {
		return "", streamEnded(err, "before the header")
	}
	if string(b) == "--" {
		return "", nil
	}
	line, err := readLine(br)
	if err != nil {
		return "", streamEnded(err, "before the header")
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return "", fmt.Errorf("not an HTTP answer: %s: %w", quotePrefix([]byte(line), 32), ErrProtocol)
	}
	if f[1] != "200" {
		return "", fmt.Errorf("HTTP status %s: %w", f[1], ErrProtocol)
	}
	h, err := readHeader(br)
	if err != nil {
		return "", err
	}
	_, params, _ := mime.ParseMediaType(h["content-type"])
	return strings.TrimLeft(params["boundary"], "-"), nil
}

// readFrame reads one part: its delimiter, its header and Content-Length
// bytes of JPEG. boundary is without leading dashes; "" accepts any.
func readFrame(br *bufio.Reader, boundary string) ([]byte, error) {
	for skipped := 0; ; skipped++ {
		line, err := readLine(br)
		if err != nil {
			return nil, streamEnded(err, "between frames")
		}
		if line == "" && skipped < maxSkip {
			continue // the blank lines after the previous frame
		}
		name, ok := strings.CutPrefix(line, "--")
		name = strings.TrimLeft(name, "-")
		if !ok || (boundary != "" && strings.TrimSuffix(name, "--") != boundary) {
			return nil, fmt.Errorf("want a boundary line, got %s: %w", quotePrefix([]byte(line), 32), ErrProtocol)
		}
		if strings.HasSuffix(name, "--") {
			return nil, fmt.Errorf("stream closed by the server: %w", io.EOF)
		}
		break
	}
	h, err := readHeader(br)
	if err != nil {
		return nil, err
	}
	cl, ok := h["content-length"]
	if !ok {
		return nil, fmt.Errorf("frame without Content-Length: %w", ErrProtocol)
	}
	n, err := strconv.ParseInt(cl, 10, 64)
	switch {
	case err != nil || n < 0:
		return nil, fmt.Errorf("bad Content-Length %s: %w", quotePrefix([]byte(cl), 32), ErrProtocol)
	case n > MaxFrameSize:
		return nil, fmt.Errorf("frame of %d bytes is over the %d-byte limit: %w", n, MaxFrameSize, ErrProtocol)
	}
	frame := make([]byte, n)
	if got, err := io.ReadFull(br, frame); err != nil {
		return nil, fmt.Errorf("frame cut after %d of %d bytes: %w", got, n, io.ErrUnexpectedEOF)
	}
	return frame, nil
}

// readHeader reads header lines up to a blank line; names are lower case.
func readHeader(br *bufio.Reader) (map[string]string, error) {
	h := map[string]string{}
	for i := 0; ; i++ {
		line, err := readLine(br)
		if err != nil {
			return nil, streamEnded(err, "in a header")
		}
		if line == "" {
			return h, nil
		}
		if i == maxHeaders {
			return nil, fmt.Errorf("more than %d header lines: %w", maxHeaders, ErrProtocol)
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("bad header line %s: %w", quotePrefix([]byte(line), 32), ErrProtocol)
		}
		h[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
}

// readLine reads one line of at most maxLine bytes, without its CR LF.
func readLine(br *bufio.Reader) (string, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return "", fmt.Errorf("line longer than %d bytes: %w", maxLine, ErrProtocol)
		}
		switch {
		case err == nil:
			return string(bytes.TrimRight(line, "\r\n")), nil
		case err != bufio.ErrBufferFull:
			if len(line) > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", err
		}
	}
}

// streamEnded words a read error where the stream may end or break.
func streamEnded(err error, where string) error {
	if errors.Is(err, ErrProtocol) {
		return err
	}
	if err == io.EOF {
		return fmt.Errorf("stream ended %s: %w", where, io.EOF)
	}
	return fmt.Errorf("stream broken %s: %w", where, err)
}
