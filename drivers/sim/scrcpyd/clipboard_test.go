package scrcpyd

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"testing"

	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// clipboardBytes is a CLIPBOARD device message as DeviceMessageWriter lays
// it out: type 0, a u32 length, the UTF-8 text.
func clipboardBytes(text string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{deviceClipboard}, uint32(len(text))), text...)
}

// With clipboard_autosync (the default), the real Controller listens to the
// phone's clipboard from when it starts: each change made by another path
// comes as one CLIPBOARD message, the session's own SET_CLIPBOARD does not
// come back, GET_CLIPBOARD sends nothing, and what was copied before the
// connection is not sent.
func TestRawClipboardAutosync(t *testing.T) {
	ctx := context.Background()
	for _, version := range []string{"3.3.4", "4.1"} {
		t.Run(version, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			if err := d.SetClipboard(ctx, android, "before"); err != nil {
				t.Fatal(err)
			}
			r := rawStart(t, d, version)
			go io.Copy(io.Discard, r.video)
			// A SET_CLIPBOARD acknowledged means the controller runs, and
			// with it the listener.
			r.send(setClipboard(1, false, "mine")...)
			if got := r.readFull(r.control, 9); !bytes.Equal(got, ackClipboardMessage(1)) {
				t.Fatalf("device message % x; want ACK_CLIPBOARD 1 (before and mine are not sent)", got)
			}
			// Another client of the phone copies: it comes once.
			if err := d.SetClipboard(ctx, android, "elsewhere"); err != nil {
				t.Fatal(err)
			}
			if got, want := r.readFull(r.control, len(clipboardBytes("elsewhere"))), clipboardBytes("elsewhere"); !bytes.Equal(got, want) {
				t.Fatalf("device message % x; want CLIPBOARD elsewhere (% x)", got, want)
			}
			// GET_CLIPBOARD sends nothing; the session's own set is not
			// echoed: the ack of 2 comes next, then the next change.
			r.send(typeGetClipboard, copyKeyCopy)
			r.send(setClipboard(2, false, "mine again")...)
			if got := r.readFull(r.control, 9); !bytes.Equal(got, ackClipboardMessage(2)) {
				t.Fatalf("device message % x; want ACK_CLIPBOARD 2", got)
			}
			if got, err := d.Clipboard(ctx, android); err != nil || got != "mine again" {
				t.Fatalf("the phone's clipboard = %q, %v; want mine again", got, err)
			}
			if err := d.SetClipboard(ctx, android, "later"); err != nil {
				t.Fatal(err)
			}
			if got, want := r.readFull(r.control, len(clipboardBytes("later"))), clipboardBytes("later"); !bytes.Equal(got, want) {
				t.Fatalf("device message % x; want CLIPBOARD later (% x): elsewhere came once, mine again not at all", got, want)
			}
		})
	}
}

// Without clipboard_autosync, a change of the phone's clipboard is not
// sent: the first message is the answer to GET_CLIPBOARD.
func TestRawClipboardNoAutosync(t *testing.T) {
	ctx := context.Background()
	d := simtest.New(t, simtest.Unlocked(android))
	r := rawStart(t, d, "4.1", "clipboard_autosync=false")
	go io.Copy(io.Discard, r.video)
	r.send(setClipboard(1, false, "mine")...)
	if got := r.readFull(r.control, 9); !bytes.Equal(got, ackClipboardMessage(1)) {
		t.Fatalf("device message % x; want ACK_CLIPBOARD 1", got)
	}
	for _, text := range []string{"one", "two"} {
		if err := d.SetClipboard(ctx, android, text); err != nil {
			t.Fatal(err)
		}
	}
	r.send(typeGetClipboard, copyKeyNone)
	if got, want := r.readFull(r.control, len(clipboardBytes("two"))), clipboardBytes("two"); !bytes.Equal(got, want) {
		t.Fatalf("device message % x; want CLIPBOARD two (% x), the answer to GET_CLIPBOARD", got, want)
	}
}

// SET_CLIPBOARD of the text the clipboard holds sets nothing
// (Device.setClipboardText) and so logs no "Device clipboard set".
func TestRawSetClipboardSameText(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	r := rawStart(t, d, "4.1")
	go io.Copy(io.Discard, r.video)
	for seq := uint64(1); seq <= 2; seq++ {
		r.send(setClipboard(seq, false, "same")...)
		if got := r.readFull(r.control, 9); !bytes.Equal(got, ackClipboardMessage(seq)) {
			t.Fatalf("device message % x; want ACK_CLIPBOARD %d", got, seq)
		}
	}
	if n := bytes.Count([]byte(r.srv.stdout.String()), []byte("[server] INFO: Device clipboard set\n")); n != 1 {
		t.Errorf("%d \"Device clipboard set\" lines; want 1 (stdout: %s)", n, r.srv.stdout.String())
	}
}
