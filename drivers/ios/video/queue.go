package video

import "github.com/pinky-gateway/pinky/drivers/sdk"

// packetQueue is a bounded FIFO of video packets for a consumer that may
// fall behind: the source's socket, or one of the receiver's subscribers.
// When it is full it drops frames until the next key frame, since a frame
// after a dropped one cannot be decoded; a key frame or config that finds
// it full replaces everything queued, so it holds at most limit packets or
// bytes plus one key frame and one config. It is not safe for concurrent
// use.
type packetQueue struct {
	maxPackets, maxBytes int

	q       []sdk.VideoPacket
	bytes   int
	needKey bool // drop frames until a key frame
	behind  bool // needKey because the queue overflowed, not for a new config
}

func newPacketQueue(maxPackets, maxBytes int) *packetQueue {
	return &packetQueue{maxPackets: maxPackets, maxBytes: maxBytes, needKey: true}
}

// offer queues p or drops it. It returns how many frames were lost to
// overflow (p itself or the ones p replaced; frames skipped while waiting
// for the first key frame after a config are not lost), and whether the
// queue has just begun to drop, when its owner should ask the encoder for a
// key frame.
func (q *packetQueue) offer(p sdk.VideoPacket) (dropped int, begun bool) {
	full := len(q.q) >= q.maxPackets || q.bytes+len(p.Data) > q.maxBytes
	switch {
	case p.Config:
		// A config restarts decoding, and a key frame follows it: frames
		// queued before it are not needed to show what comes next.
		q.needKey = true
		if full {
			dropped = q.reset(false)
		}
	case p.KeyFrame:
		q.needKey, q.behind = false, false
		if full {
			dropped = q.reset(true)
		}
	case q.needKey:
		if q.behind {
			return 1, false
		}
		return 0, false
	case full:
		q.needKey, q.behind = true, true
		return 1, true
	}
	q.q = append(q.q, p)
	q.bytes += len(p.Data)
	return dropped, false
}

// reset empties the queue but for the newest config when keepConfig (its
// frames are gone, but the key frame being queued needs it), and returns
// how many frames it removed.
func (q *packetQueue) reset(keepConfig bool) int {
	var cfg *sdk.VideoPacket
	frames := 0
	for i := range q.q {
		if q.q[i].Config {
			cfg = &q.q[i]
		} else {
			frames++
		}
	}
	var kept []sdk.VideoPacket
	q.bytes = 0
	if keepConfig && cfg != nil {
		kept = append(make([]sdk.VideoPacket, 0, q.maxPackets), *cfg)
		q.bytes = len(cfg.Data)
	}
	clear(q.q)
	q.q = kept
	return frames
}

// pop returns the oldest packet.
func (q *packetQueue) pop() (sdk.VideoPacket, bool) {
	if len(q.q) == 0 {
		return sdk.VideoPacket{}, false
	}
	p := q.q[0]
	q.q[0] = sdk.VideoPacket{} // let the data go
	q.q = q.q[1:]
	q.bytes -= len(p.Data)
	return p, true
}

func (q *packetQueue) len() int { return len(q.q) }
