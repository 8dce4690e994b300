package video

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// benchReceiver starts a listening receiver with a subscriber calling send,
// connects a hand-driven source to it and sends the CONFIG and a key frame,
// which the subscriber receives before it returns. keyWanted is set when
// the receiver asks for a key frame.
func benchReceiver(b *testing.B, send func(sdk.VideoPacket)) (peer *rawPeer, keyWanted *atomic.Bool) {
	b.Helper()
	rx, err := NewReceiver(ReceiverConfig{DeviceID: testDevice, Secret: testSecret, Listen: "127.0.0.1:0"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- rx.Run(ctx) }()
	ready := make(chan struct{}, 1)
	subscribed := make(chan error, 1)
	go func() {
		subscribed <- rx.Subscribe(ctx, func(p sdk.VideoPacket) error {
			if p.Config || p.KeyFrame && frameSeq(p.Data) == 0 {
				ready <- struct{}{}
				return nil
			}
			send(p)
			return nil
		})
	}()
	b.Cleanup(func() {
		cancel()
		<-ran
		<-subscribed
	})

	peer = dialRaw(b, rx.Addr().String())
	peer.nc.SetDeadline(time.Time{})
	if err := peer.handshake(roleSource, testSecret); err != nil {
		b.Fatal(err)
	}
	peer.nc.SetDeadline(time.Time{})
	peer.write(config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes())
	peer.write(frame{pts: 0, key: true, data: testFrame(0, true, 100)}.msg().bytes())
	for range 2 {
		<-ready
	}
	keyWanted = new(atomic.Bool)
	go func() { // answers nothing, but drains the PINGs
		for {
			t, _, err := readMessage(peer.rd, anyMessage)
			if err != nil {
				return
			}
			if t == msgKeyFrame {
				keyWanted.Store(true)
			}
		}
	}()
	return peer, keyWanted
}

// BenchmarkFrameLatency measures the time from the phone's sealing of a
// FRAME into records (the encryption a phone does) through its arrival at
// the receiver's socket to the packet reaching a subscriber's send, one
// frame at a time. ns/op also includes telling the benchmark; latency-ns is
// the mean of the former alone.
func BenchmarkFrameLatency(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			reached := make(chan time.Time, 1)
			peer, _ := benchReceiver(b, func(sdk.VideoPacket) { reached <- time.Now() })
			msg := frame{pts: 1, data: testFrame(1, false, size)}.msg().bytes()
			lat := make([]time.Duration, 0, b.N)
			b.SetBytes(int64(size))
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if err := peer.rw.write(msg); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, (<-reached).Sub(start))
			}
			b.StopTimer()
			var sum time.Duration
			for _, d := range lat {
				sum += d
			}
			slices.Sort(lat)
			b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "latency-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkThroughput measures how fast frames go from a phone's sealing
// of them to a subscriber that counts them. The phone keeps at most 32 frames in
// flight (half a subscriber's queue), as TCP's window would with a real
// link, sends a key frame when asked and as its last frame, which is never
// dropped; dropped/op is the share of frames the subscriber missed.
func BenchmarkThroughput(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			var got atomic.Int64
			done := make(chan struct{}, 1)
			inflight := make(chan struct{}, subscriberPackets/2)
			peer, keyWanted := benchReceiver(b, func(p sdk.VideoPacket) {
				<-inflight
				got.Add(1)
				if p.KeyFrame && frameSeq(p.Data) == 2 {
					done <- struct{}{}
				}
			})
			msg := frame{pts: 1, data: testFrame(1, false, size)}.msg().bytes()
			key := frame{pts: 1, key: true, data: testFrame(1, true, size)}.msg().bytes()
			last := frame{pts: 2, key: true, data: testFrame(2, true, size)}.msg().bytes()
			b.SetBytes(int64(size))
			b.ResetTimer()
			for range b.N - 1 {
				m := msg
				if keyWanted.Swap(false) {
					m = key
				}
				inflight <- struct{}{}
				if err := peer.rw.write(m); err != nil {
					b.Fatal(err)
				}
			}
			inflight <- struct{}{}
			if err := peer.rw.write(last); err != nil {
				b.Fatal(err)
			}
			<-done
			b.StopTimer()
			b.ReportMetric(float64(int64(b.N)-got.Load())/float64(b.N), "dropped/op")
		})
	}
}

// BenchmarkRecords measures the secure layer alone: sealing a frame into
// records and opening them again, with no socket.
func BenchmarkRecords(b *testing.B) {
	for _, size := range []int{16 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			send, recv := recordPair(b)
			var wire bytes.Buffer
			w := newRecordWriter(bufferConn{&wire}, send, 0)
			r := newRecordReader(&wire, recv)
			msg := frame{pts: 1, data: testFrame(1, false, size)}.msg().bytes()
			got := make([]byte, len(msg))
			b.SetBytes(int64(size))
			b.ResetTimer()
			for range b.N {
				if err := w.write(msg); err != nil {
					b.Fatal(err)
				}
				if _, err := io.ReadFull(r, got); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
