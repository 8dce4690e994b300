package wdad

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The MJPEG stream's header, byte for byte as FBMjpegServer writes it. The
// declared boundary is "--BoundaryString" while the delimiter lines are
// "--BoundaryString": the boundary that works is "BoundaryString".
const mjpegHeader = "HTTP/1.0 200 OK\r\n" +
	"Server: WDA MJPEG Server\r\n" +
	"Connection: close\r\n" +
	"Max-Age: 0\r\n" +
	"Expires: 0\r\n" +
	"Cache-Control: no-cache, private\r\n" +
	"Pragma: no-cache\r\n" +
	"Content-Type: multipart/x-mixed-replace; boundary=--BoundaryString\r\n\r\n"

// mjpegServer is WebDriverAgent's MJPEG screen stream: a raw TCP server
// that answers any bytes from a client with the stream.
type mjpegServer struct {
	s    *Server
	ln   net.Listener
	quit chan struct{}
	wg   sync.WaitGroup

	mu    sync.Mutex // guards conns
	conns map[net.Conn]struct{}
}

func listenMJPEG(addr string, s *Server) (*mjpegServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	m := &mjpegServer{s: s, ln: ln, quit: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	m.wg.Add(1)
	go m.accept()
	return m, nil
}

func (m *mjpegServer) accept() {
	defer m.wg.Done()
	for {
		c, err := m.ln.Accept()
		if err != nil {
			select {
			case <-m.quit:
			default:
				m.s.log.Error("wdad: mjpeg accept", "err", err)
			}
			return
		}
		m.mu.Lock()
		select {
		case <-m.quit:
			m.mu.Unlock()
			c.Close()
			return
		default:
		}
		m.conns[c] = struct{}{}
		m.mu.Unlock()
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			err := m.serve(c)
			m.s.log.Debug("wdad: mjpeg client gone", "remote", c.RemoteAddr(), "err", err)
			m.mu.Lock()
			delete(m.conns, c)
			m.mu.Unlock()
			c.Close()
		}()
	}
}

// close stops the stream: the listener and every client connection.
func (m *mjpegServer) close() error {
	m.mu.Lock()
	close(m.quit)
	for c := range m.conns {
		c.Close()
	}
	m.mu.Unlock()
	err := m.ln.Close()
	m.wg.Wait()
	return err
}

// serve streams to one client until it goes or the server closes.
func (m *mjpegServer) serve(c net.Conn) error {
	// Like FBMjpegServer, nothing is written before the client sends
	// something (its HTTP request, which is not read further).
	buf := make([]byte, 4096)
	if _, err := c.Read(buf); err != nil {
		return err
	}
	if _, err := c.Write([]byte(mjpegHeader)); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Reading until the client hangs up tells the loop to stop.
		for {
			if _, err := c.Read(buf); err != nil {
				cancel()
				return
			}
		}
	}()
	for {
		fps := m.s.setting("mjpegServerFramerate")
		if fps <= 0 || fps > 60 {
			fps = 60
		}
		t := time.NewTimer(time.Second / time.Duration(fps))
		select {
		case <-m.quit:
			t.Stop()
			return nil
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		frame, err := m.frame(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// A failed capture skips a frame, as WebDriverAgent does.
			m.s.log.Debug("wdad: mjpeg capture", "err", err)
			continue
		}
		if _, err := c.Write(frame); err != nil {
			return err
		}
	}
}

// frame captures the screen as one multipart chunk.
func (m *mjpegServer) frame(ctx context.Context) ([]byte, error) {
	q := m.s.setting("mjpegServerScreenshotQuality")
	if q <= 0 || q > 100 {
		q = 25
	}
	req := sdk.ScreenshotRequest{DeviceID: m.s.id, Format: sdk.FormatJPEG, Quality: q}
	if f := m.s.setting("mjpegScalingFactor"); f > 0 && f < 100 {
		req.MaxSide = max(1, max(m.s.width(), m.s.height())*f/100)
	}
	img, err := m.s.d.Screenshot(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(img.Data) == 0 {
		return nil, errors.New("empty screenshot")
	}
	head := fmt.Sprintf("--BoundaryString\r\nContent-type: image/jpeg\r\nContent-Length: %d\r\n\r\n", len(img.Data))
	out := make([]byte, 0, len(head)+len(img.Data)+4)
	out = append(out, head...)
	out = append(out, img.Data...)
	return append(out, "\r\n\r\n"...), nil
}
