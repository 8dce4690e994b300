package video

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/flynn/noise"
)

// recordPair returns the two ends of one direction's cipher, as a
// handshake would make them.
func recordPair(t testing.TB) (send, recv *noise.CipherState) {
	t.Helper()
	var k [32]byte
	copy(k[:], "a test key of thirty-two bytes..")
	return noise.UnsafeNewCipherState(cipherSuite, k, 0), noise.UnsafeNewCipherState(cipherSuite, k, 0)
}

// bufferConn is a net.Conn whose writes go to a buffer; a recordWriter
// without a deadline uses nothing else.
type bufferConn struct{ *bytes.Buffer }

func (c bufferConn) Write(p []byte) (int, error) { return c.Buffer.Write(p) }

func (bufferConn) Read([]byte) (int, error) { return 0, io.EOF }

func (bufferConn) Close() error                     { return nil }
func (bufferConn) LocalAddr() net.Addr              { return nil }
func (bufferConn) RemoteAddr() net.Addr             { return nil }
func (bufferConn) SetDeadline(time.Time) error      { return nil }
func (bufferConn) SetReadDeadline(time.Time) error  { return nil }
func (bufferConn) SetWriteDeadline(time.Time) error { return nil }

// records splits a stream into its records.
func records(t *testing.T, wire []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for len(wire) > 0 {
		n := int(binary.BigEndian.Uint16(wire))
		out = append(out, wire[:recordHead+n])
		wire = wire[recordHead+n:]
	}
	return out
}

// TestRecords writes messages of sizes around the record limit and reads
// them back: the stream comes back whole, in records of at most the Noise
// limit, each filled before the next begins.
func TestRecords(t *testing.T) {
	send, recv := recordPair(t)
	var wire bytes.Buffer
	w := newRecordWriter(bufferConn{&wire}, send, 0)
	var want []byte
	for i, size := range []int{1, maxPlain - 5, maxPlain, maxPlain + 1, 3*maxPlain + 7} {
		head := []byte{byte(i), 1, 2, 3, 4}
		body := bytes.Repeat([]byte{byte(0x10 + i)}, size)
		if err := w.write(head, body); err != nil {
			t.Fatal(err)
		}
		want = append(append(want, head...), body...)
	}
	recs := records(t, wire.Bytes())
	if len(recs) != 1+1+2+2+4 {
		t.Errorf("got %d records; want 10", len(recs))
	}
	for i, r := range recs {
		if n := len(r) - recordHead; n < minRecord || n > maxRecord {
			t.Errorf("record %d holds %d bytes; want %d to %d", i, n, minRecord, maxRecord)
		}
	}
	if bytes.Contains(wire.Bytes(), bytes.Repeat([]byte{0x14}, 64)) {
		t.Error("the plaintext shows on the wire")
	}
	got, err := io.ReadAll(newRecordReader(&wire, recv))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("read back %d bytes, %v; want the %d written", len(got), err, len(want))
	}
}

// TestRecordErrors feeds the reader what an attacker on the path, or a
// broken peer, sends.
func TestRecordErrors(t *testing.T) {
	// three returns three records of a good stream.
	three := func(t *testing.T) [][]byte {
		send, _ := recordPair(t)
		var wire bytes.Buffer
		w := newRecordWriter(bufferConn{&wire}, send, 0)
		for _, m := range []string{"first", "second", "third"} {
			w.write([]byte(m))
		}
		return records(t, wire.Bytes())
	}
	join := func(rs ...[]byte) []byte { return bytes.Join(rs, nil) }
	tests := []struct {
		name   string
		stream func(r [][]byte) []byte
		read   string // the plaintext read before the error
		want   string // in the error; "" for io.EOF
	}{
		{"whole", func(r [][]byte) []byte { return join(r...) }, "firstsecondthird", ""},
		{"a flipped bit", func(r [][]byte) []byte { r[1][5] ^= 1; return join(r...) }, "first", "failed authentication"},
		{"a flipped length", func(r [][]byte) []byte { r[1][1]--; return join(r...) }, "first", "failed authentication"},
		{"a record replayed", func(r [][]byte) []byte { return join(r[0], r[1], r[1], r[2]) }, "firstsecond", "failed authentication"},
		{"records swapped", func(r [][]byte) []byte { return join(r[0], r[2], r[1]) }, "first", "failed authentication"},
		{"a record dropped", func(r [][]byte) []byte { return join(r[0], r[2]) }, "first", "failed authentication"},
		{"stopped after an error", func(r [][]byte) []byte { r[0][4] ^= 1; return join(r[0], three(t)[0]) }, "", "failed authentication"},
		{"clear message", func([][]byte) []byte {
			return config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes()
		}, "", "record of 0 bytes"},
		{"tag only", func([][]byte) []byte { return append([]byte{0, 16}, make([]byte, 16)...) }, "", "record of 16 bytes"},
		{"truncated header", func(r [][]byte) []byte { return join(r[0], r[1][:1]) }, "first", "inside a record header"},
		{"truncated record", func(r [][]byte) []byte { return join(r[0], r[1][:10]) }, "first", "inside a record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, recv := recordPair(t)
			rd := newRecordReader(bytes.NewReader(tt.stream(three(t))), recv)
			got, err := io.ReadAll(rd)
			if string(got) != tt.read {
				t.Errorf("read %q; want %q", got, tt.read)
			}
			if tt.want == "" {
				if err != nil {
					t.Errorf("got %v; want a clean end", err)
				}
				return
			}
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want a protocol error saying %q", err, tt.want)
			}
			if _, again := rd.Read(make([]byte, 1)); again == nil {
				t.Error("the reader goes on after an error")
			}
		})
	}
}

// FuzzRecordReader reads arbitrary bytes as the peer's records: it must
// never panic, and end with a clean io.EOF or a protocol error.
func FuzzRecordReader(f *testing.F) {
	send, _ := recordPair(f)
	var wire bytes.Buffer
	newRecordWriter(bufferConn{&wire}, send, 0).write(bytes.Repeat([]byte("x"), maxPlain+9))
	f.Add(wire.Bytes())
	f.Add([]byte{0, 0})
	f.Add([]byte{0xff, 0xff, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, recv := recordPair(t)
		_, err := io.ReadAll(newRecordReader(bytes.NewReader(data), recv))
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Fatalf("got %v; want nil or a protocol error", err)
		}
	})
}
