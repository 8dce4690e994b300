package remote

import (
	"errors"
	"net"
	"testing"
	"time"
)

func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 2 * time.Millisecond, time.Second, 30 * time.Second} {
		for range 100 {
			if got := jitter(d); got < d/2 || got > d {
				t.Fatalf("jitter(%v) = %v; want within [%v, %v]", d, got, d/2, d)
			}
		}
	}
}

// TestOneConn: the listener yields its connection once, then Accept waits
// until the connection closes and answers net.ErrClosed.
func TestOneConn(t *testing.T) {
	for _, tt := range []struct {
		name  string
		close func(l *oneConn, c net.Conn)
	}{
		{"connection closed", func(_ *oneConn, c net.Conn) { c.Close() }},
		{"listener closed", func(l *oneConn, _ net.Conn) { l.Close() }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := net.Pipe()
			defer b.Close()
			l := listenOn(a)
			c, err := l.Accept()
			if err != nil {
				t.Fatalf("first Accept: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := l.Accept()
				done <- err
			}()
			tt.close(l, c)
			select {
			case err := <-done:
				if !errors.Is(err, net.ErrClosed) {
					t.Fatalf("second Accept: %v; want net.ErrClosed", err)
				}
			case <-time.After(guard):
				t.Fatal("second Accept did not return")
			}
		})
	}
}
