package console

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Flags of a mirror message's first byte.
const (
	flagConfig   = 1 << 0 // parameter sets (SPS/PPS), not a picture
	flagKeyFrame = 1 << 1 // a picture the decoder can start from
)

// headerSize is the fixed part of a mirror message's header; the codec's
// name follows it.
const headerSize = 18

// encodePacket lays out one mirror message: flags (1 byte), width and
// height (4 bytes each), PTS in microseconds (8 bytes, signed), the codec
// name's length (1 byte) and the name, all big-endian, then the Annex B data.
func encodePacket(p sdk.VideoPacket) []byte {
	codec := string(p.Codec)
	if len(codec) > 255 {
		codec = codec[:255]
	}
	b := make([]byte, headerSize, headerSize+len(codec)+len(p.Data))
	if p.Config {
		b[0] |= flagConfig
	}
	if p.KeyFrame {
		b[0] |= flagKeyFrame
	}
	binary.BigEndian.PutUint32(b[1:], uint32(max(p.Width, 0)))
	binary.BigEndian.PutUint32(b[5:], uint32(max(p.Height, 0)))
	binary.BigEndian.PutUint64(b[9:], uint64(p.PTS.Microseconds()))
	b[17] = byte(len(codec))
	b = append(b, codec...)
	return append(b, p.Data...)
}

// handleMirror streams a phone screen to the browser: one binary message
// per packet, until the stream or the socket ends.
func (s *Server) handleMirror(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Mirror == nil {
		http.NotFound(w, r)
		return
	}
	// guard checked the Origin already; Accept checks it again.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		s.log.Debug("console: mirror: websocket refused", "err", err)
		return
	}
	defer c.CloseNow() //nolint:errcheck // after Close it does nothing
	// The browser sends nothing; CloseRead answers pings and ends ctx when
	// it closes the socket.
	ctx := c.CloseRead(r.Context())
	device := r.PathValue("device")
	display := 0
	if v := r.URL.Query().Get("display"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			c.Close(websocket.StatusPolicyViolation, "display must be a number") //nolint:errcheck // best effort
			return
		}
		display = n
	}
	pk, err := s.cfg.Mirror(ctx, device, display)
	if err != nil {
		c.Close(websocket.StatusTryAgainLater, closeReason("no mirror: "+err.Error())) //nolint:errcheck // best effort
		return
	}
	defer pk.Close()
	for {
		p, err := pk.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return // the browser or the console went away
			}
			c.Close(websocket.StatusNormalClosure, closeReason("stream ended: "+err.Error())) //nolint:errcheck // best effort
			return
		}
		wctx, cancel := context.WithTimeout(ctx, wsWriteLimit)
		err = c.Write(wctx, websocket.MessageBinary, encodePacket(p))
		cancel()
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				s.log.Debug("console: mirror: viewer dropped", "device", device, "err", err)
			}
			return
		}
	}
}

// handleStill serves a JPEG of a phone screen now: the mirror shows these
// while no video comes.
func (s *Server) handleStill(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Still == nil {
		http.NotFound(w, r)
		return
	}
	display := 0
	if v := r.URL.Query().Get("display"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "display must be a number")
			return
		}
		display = n
	}
	ctx, cancel := context.WithTimeout(r.Context(), stillLimit)
	defer cancel()
	data, err := s.cfg.Still(ctx, r.PathValue("device"), display)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "no picture: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "image/jpeg")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(data) //nolint:errcheck // the browser went away
}

// closeReason cuts a close reason to the 123 bytes a close frame holds,
// on a rune boundary.
func closeReason(s string) string {
	const limit = 123
	if len(s) <= limit {
		return s
	}
	s = s[:limit]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
