package wda

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// wdaStreamHeader is what FBMjpegServer.m writes once the client has sent
// something.
const wdaStreamHeader = "HTTP/1.0 200 OK\r\nServer: WDA MJPEG Server\r\nConnection: close\r\nMax-Age: 0\r\nExpires: 0\r\n" +
	"Cache-Control: no-cache, private\r\nPragma: no-cache\r\nContent-Type: multipart/x-mixed-replace; boundary=--BoundaryString\r\n\r\n"

// mjpegPart is one frame as FBMjpegServer.m writes it, with delim as the
// delimiter line.
func mjpegPart(delim string, jpeg []byte) string {
	return fmt.Sprintf("%s\r\nContent-type: image/jpeg\r\nContent-Length: %d\r\n\r\n%s\r\n\r\n", delim, len(jpeg), jpeg)
}

// serveMJPEG starts a one-connection MJPEG server that waits for the
// request, like WDA, then writes stream and keeps the connection open until
// the client leaves (hold) or closes it.
func serveMJPEG(t *testing.T, stream string, hold bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		buf := make([]byte, 1024)
		if _, err := conn.Read(buf); err != nil {
			return
		}
		io.WriteString(conn, stream)
		if hold {
			io.Copy(io.Discard, conn) // until the client closes
		}
	}()
	return ln.Addr().String()
}

func TestMJPEGFrames(t *testing.T) {
	// The second frame holds a delimiter line: only Content-Length can tell.
	jpegs := [][]byte{[]byte("\xff\xd8first\xff\xd9"), []byte("\xff\xd8second\r\n--BoundaryString\r\n\xff\xd9")}
	tests := []struct {
		name   string
		header string
		delim  string
	}{
		{"WDA's quirk", wdaStreamHeader, "--BoundaryString"},
		{"declared boundary", wdaStreamHeader, "----BoundaryString"},
		{"RFC form", strings.Replace(wdaStreamHeader, "boundary=--BoundaryString", `boundary="BoundaryString"`, 1), "--BoundaryString"},
		{"no HTTP header", "", "--BoundaryString"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// An empty part between them is skipped.
			stream := tt.header + mjpegPart(tt.delim, jpegs[0]) + mjpegPart(tt.delim, nil) + mjpegPart(tt.delim, jpegs[1])
			addr := serveMJPEG(t, stream, true)
			var got [][]byte
			errEnough := errors.New("enough")
			err := MJPEG(context.Background(), addr, func(jpeg []byte) error {
				got = append(got, jpeg)
				if len(got) == len(jpegs) {
					return errEnough
				}
				return nil
			})
			if err != errEnough {
				t.Fatalf("MJPEG = %v; want the callback's error as is", err)
			}
			if diff := cmp.Diff(jpegs, got, cmp.Transformer("string", func(b []byte) string { return string(b) })); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMJPEGBadStreams(t *testing.T) {
	jpeg := []byte("\xff\xd8frame\xff\xd9")
	tests := []struct {
		name   string
		stream string
		want   error
	}{
		{"truncated frame", wdaStreamHeader + mjpegPart("--BoundaryString", jpeg) +
			"--BoundaryString\r\nContent-Length: 1000\r\n\r\n\xff\xd8only", io.ErrUnexpectedEOF},
		{"oversized Content-Length", wdaStreamHeader + fmt.Sprintf("--BoundaryString\r\nContent-Length: %d\r\n\r\n", MaxFrameSize+1), ErrProtocol},
		{"no Content-Length", wdaStreamHeader + "--BoundaryString\r\nContent-type: image/jpeg\r\n\r\n\xff\xd8", ErrProtocol},
		{"negative Content-Length", wdaStreamHeader + "--BoundaryString\r\nContent-Length: -5\r\n\r\n", ErrProtocol},
		{"other boundary", wdaStreamHeader + mjpegPart("--Other", jpeg), ErrProtocol},
		{"garbage instead of a boundary", wdaStreamHeader + "hello\r\n", ErrProtocol},
		{"endless line", wdaStreamHeader + "--BoundaryString\r\nX-Junk: " + strings.Repeat("x", 10000), ErrProtocol},
		{"not HTTP", "SSH-2.0-OpenSSH_9.6\r\n", ErrProtocol},
		{"HTTP error", "HTTP/1.1 404 Not Found\r\n\r\n", ErrProtocol},
		{"stream ends", wdaStreamHeader + mjpegPart("--BoundaryString", jpeg), io.EOF},
		{"close delimiter", wdaStreamHeader + mjpegPart("--BoundaryString", jpeg) + "--BoundaryString--\r\n", io.EOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := serveMJPEG(t, tt.stream, false)
			frames := 0
			err := MJPEG(context.Background(), addr, func(got []byte) error {
				frames++
				if !bytes.Equal(got, jpeg) {
					t.Errorf("frame = %q; want %q", got, jpeg)
				}
				return nil
			})
			if !errors.Is(err, tt.want) {
				t.Errorf("MJPEG = %v; want %v", err, tt.want)
			}
			if frames > 1 {
				t.Errorf("got %d frames; want at most 1", frames)
			}
		})
	}
}

func TestMJPEGCancel(t *testing.T) {
	addr := serveMJPEG(t, wdaStreamHeader+mjpegPart("--BoundaryString", []byte("\xff\xd8a")), true)
	ctx, cancel := context.WithCancel(context.Background())
	// The callback cancels; MJPEG then waits for a frame that never comes
	// and must leave because of the context.
	err := MJPEG(ctx, addr, func([]byte) error { cancel(); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("MJPEG after cancel = %v; want context.Canceled", err)
	}
}

func TestOneMJPEGFrame(t *testing.T) {
	want := []byte("\xff\xd8one\xff\xd9")
	addr := serveMJPEG(t, wdaStreamHeader+mjpegPart("--BoundaryString", want)+mjpegPart("--BoundaryString", []byte("two")), true)
	got, err := OneMJPEGFrame(context.Background(), addr)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("OneMJPEGFrame = %q, %v; want %q", got, err, want)
	}

	t.Run("no frame before the deadline", func(t *testing.T) {
		addr := serveMJPEG(t, wdaStreamHeader, true)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := OneMJPEGFrame(ctx, addr); !errors.Is(err, ErrTimeout) {
			t.Errorf("OneMJPEGFrame = %v; want ErrTimeout", err)
		}
	})
	t.Run("nothing listens", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		if _, err := OneMJPEGFrame(context.Background(), addr); !errors.Is(err, ErrUnreachable) {
			t.Errorf("OneMJPEGFrame = %v; want ErrUnreachable", err)
		}
	})
}
