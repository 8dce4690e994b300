package video

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestPacketQueue offers a script of packets to a queue of 3 packets that
// nobody empties, then drains it. In a script, C is a config, K a key frame
// and f a frame; the queue's content is written the same way.
func TestPacketQueue(t *testing.T) {
	tests := []struct {
		name        string
		offer       string
		wantQueue   string
		wantDropped int
		wantBegun   int // how many offers said "ask for a key frame"
	}{
		{"fits", "CKf", "CKf", 0, 0},
		{"waits for the first key frame", "CffKf", "CKf", 0, 0},
		{"overflow drops until a key frame", "CKfffff", "CKf", 4, 1},
		{"a key frame replaces what waits, keeping the config", "CKffK", "CK", 3, 1},
		{"a key frame after the drop, with room", "CKf", "CKf", 0, 0},
		{"a config replaces everything", "CKffC", "C", 3, 1},
		{"a config then its key frame", "CKffCK", "CK", 3, 1},
		{"dropping again after the key frame", "CKffKfffK", "CK", 7, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := newPacketQueue(3, 1<<20)
			var dropped, begun int
			for _, c := range tt.offer {
				d, b := q.offer(scriptPacket(c))
				dropped += d
				if b {
					begun++
				}
			}
			var got strings.Builder
			for p, ok := q.pop(); ok; p, ok = q.pop() {
				got.WriteString(scriptOf(p))
			}
			if got.String() != tt.wantQueue || dropped != tt.wantDropped || begun != tt.wantBegun {
				t.Errorf("got queue %q, %d dropped, %d begun; want %q, %d, %d",
					got.String(), dropped, begun, tt.wantQueue, tt.wantDropped, tt.wantBegun)
			}
			if q.bytes != 0 || q.len() != 0 {
				t.Errorf("drained queue: %d packets, %d bytes; want none", q.len(), q.bytes)
			}
		})
	}
}

// TestPacketQueueBytes checks the byte bound: a queue of 1000 bytes holds at
// most that much besides one key frame and one config.
func TestPacketQueueBytes(t *testing.T) {
	q := newPacketQueue(100, 1000)
	q.offer(sdk.VideoPacket{Config: true, Data: make([]byte, 10)})
	q.offer(sdk.VideoPacket{KeyFrame: true, Data: make([]byte, 5000)}) // larger than the bound: still queued
	for range 50 {
		q.offer(sdk.VideoPacket{Data: make([]byte, 300)})
		if q.bytes > 1000+5000+10 {
			t.Fatalf("queue holds %d bytes", q.bytes)
		}
	}
	want := []string{"C", "K"}
	var got []string
	for p, ok := q.pop(); ok; p, ok = q.pop() {
		got = append(got, scriptOf(p))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
}

func scriptPacket(c rune) sdk.VideoPacket {
	switch c {
	case 'C':
		return sdk.VideoPacket{Config: true, Data: []byte{1}}
	case 'K':
		return sdk.VideoPacket{KeyFrame: true, Data: []byte{2}}
	}
	return sdk.VideoPacket{Data: []byte{3}}
}

func scriptOf(p sdk.VideoPacket) string {
	switch {
	case p.Config:
		return "C"
	case p.KeyFrame:
		return "K"
	}
	return "f"
}
