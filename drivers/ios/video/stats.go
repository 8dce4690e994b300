package video

import (
	"sync/atomic"
	"time"
)

// Stats counts what happened since a Receiver or Source was made.
type Stats struct {
	// Connections counts TCP connections accepted or dialed.
	Connections int64
	// Sessions counts connections that passed the handshake.
	Sessions int64
	// AuthFailures counts handshakes that failed on the pairing secret or
	// the device id, whichever side noticed.
	AuthFailures int64
	// ProtocolErrors counts connections closed because a peer broke the
	// protocol (version mismatches included).
	ProtocolErrors int64
	// Timeouts counts connections closed because the peer fell silent or
	// stopped reading.
	Timeouts int64
	// FramesIn counts FRAMEs received (a Receiver's).
	FramesIn int64
	// FramesOut counts FRAMEs written to the socket (a Source's).
	FramesOut int64
	// FramesDropped counts frames lost to back-pressure: on a Receiver,
	// frames a subscriber missed because it fell behind (once per
	// subscriber); on a Source, frames not sent because the socket could
	// not keep up.
	FramesDropped int64
	// BytesIn counts the payload bytes of FRAMEs received.
	BytesIn int64
	// KeyFrameRequests counts KEYFRAMEs sent (Receiver) or received (Source).
	KeyFrameRequests int64
	// RTT is the round-trip time of the latest PING answered, 0 before one.
	RTT time.Duration
}

// counters are the atomics behind Stats.
type counters struct {
	connections, sessions, authFailures, protocolErrors, timeouts atomic.Int64
	framesIn, framesOut, framesDropped, bytesIn, keyFrameRequests atomic.Int64
	rtt                                                           atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		Connections:      c.connections.Load(),
		Sessions:         c.sessions.Load(),
		AuthFailures:     c.authFailures.Load(),
		ProtocolErrors:   c.protocolErrors.Load(),
		Timeouts:         c.timeouts.Load(),
		FramesIn:         c.framesIn.Load(),
		FramesOut:        c.framesOut.Load(),
		FramesDropped:    c.framesDropped.Load(),
		BytesIn:          c.bytesIn.Load(),
		KeyFrameRequests: c.keyFrameRequests.Load(),
		RTT:              time.Duration(c.rtt.Load()),
	}
}
