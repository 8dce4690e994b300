package wdad_test

import (
	"bufio"
	"bytes"
	"image/jpeg"
	"io"
	"mime/multipart"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
)

func TestMJPEG(t *testing.T) {
	g := newRig(t, nil, wdad.Config{MJPEG: true})
	g.unlock()
	addr := g.srv.MJPEGAddr()
	if addr == nil {
		t.Fatal("MJPEGAddr() = nil with MJPEG on")
	}
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+addr.String()+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	tp := textproto.NewReader(br)
	status, err := tp.ReadLine()
	if err != nil {
		t.Fatal(err)
	}
	if status != "HTTP/1.0 200 OK" {
		t.Errorf("status line %q; want HTTP/1.0 200 OK", status)
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("Content-Type"); got != "multipart/x-mixed-replace; boundary=--BoundaryString" {
		t.Errorf("Content-Type %q; want WebDriverAgent's quirky boundary=--BoundaryString", got)
	}
	if got := hdr.Get("Server"); got != "WDA MJPEG Server" {
		t.Errorf("Server %q; want WDA MJPEG Server", got)
	}

	// The delimiter lines are --BoundaryString: the working boundary is
	// BoundaryString, not the one declared.
	mr := multipart.NewReader(br, "BoundaryString")
	for i := range 2 {
		part, err := mr.NextPart()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if ct := part.Header.Get("Content-Type"); ct != "image/jpeg" {
			t.Errorf("frame %d: Content-type %q; want image/jpeg", i, ct)
		}
		n, err := strconv.Atoi(part.Header.Get("Content-Length"))
		if err != nil {
			t.Fatalf("frame %d: Content-Length %q: %v", i, part.Header.Get("Content-Length"), err)
		}
		data, err := io.ReadAll(part)
		if err != nil {
			t.Fatal(err)
		}
		// The part ends with the frame's \r\n\r\n: the first pair is the
		// delimiter's, the second stays in the part.
		data = bytes.TrimSuffix(data, []byte("\r\n"))
		if len(data) != n {
			t.Errorf("frame %d: %d bytes; Content-Length says %d", i, len(data), n)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("frame %d is not a JPEG: %v", i, err)
		}
		if cfg.Width != 1179 || cfg.Height != 2556 {
			t.Errorf("frame %d is %dx%d; want the native 1179x2556", i, cfg.Width, cfg.Height)
		}
	}
}

func TestMJPEGScalingFactor(t *testing.T) {
	g := newRig(t, nil, wdad.Config{MJPEG: true})
	sid := g.session(nil)
	g.ok("POST", "/session/"+sid+"/appium/settings", map[string]any{"settings": map[string]any{"mjpegScalingFactor": 50}}, nil)
	c, err := net.Dial("tcp", g.srv.MJPEGAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	br := bufio.NewReader(c)
	// Skip the headers, then read one frame by its Content-Length.
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
	}
	tp := textproto.NewReader(br)
	if delim, err := tp.ReadLine(); err != nil || delim != "--BoundaryString" {
		t.Fatalf("frame delimiter %q, %v; want --BoundaryString", delim, err)
	}
	hdr, err := tp.ReadMIMEHeader()
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(hdr.Get("Content-Length"))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(br, data); err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if max(cfg.Width, cfg.Height) != 2556/2 {
		t.Errorf("frame %dx%d at mjpegScalingFactor 50; want its long side 1278", cfg.Width, cfg.Height)
	}
	if tail, _ := br.Peek(4); !strings.HasPrefix(string(tail), "\r\n\r\n") {
		t.Errorf("frame ends %q; want \\r\\n\\r\\n", tail)
	}
}
