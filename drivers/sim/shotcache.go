package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/render"
)

// shotCacheSize is how many encoded screenshots the driver keeps.
const shotCacheSize = 8

// shotCache keeps the last screenshots encoded, by what was drawn: the
// same screen asked again, or by several callers at once (a mirror, a
// recorder, a step's picture, concurrent reads), is drawn and encoded
// once. A PNG of a phone's screen takes long to encode, far longer under
// the race detector; the key takes a hash of the boxes.
type shotCache struct {
	mu    sync.Mutex
	items map[[sha256.Size]byte]*encoding
	order [][sha256.Size]byte // oldest first
}

type encoding struct {
	done chan struct{}
	img  *sdk.Image
	err  error
}

// get returns the image for key, made by build once. Callers share it: they
// must not change its Data.
func (c *shotCache) get(key [sha256.Size]byte, build func() (*sdk.Image, error)) (*sdk.Image, error) {
	c.mu.Lock()
	if s, ok := c.items[key]; ok {
		c.mu.Unlock()
		<-s.done
		return s.img, s.err
	}
	if c.items == nil {
		c.items = map[[sha256.Size]byte]*encoding{}
	}
	s := &encoding{done: make(chan struct{})}
	c.items[key] = s
	c.order = append(c.order, key)
	if len(c.order) > shotCacheSize {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
	c.mu.Unlock()
	s.img, s.err = build()
	close(s.done)
	if s.err != nil { // a failure is not kept: the next call tries again
		c.mu.Lock()
		if c.items[key] == s {
			delete(c.items, key)
		}
		c.mu.Unlock()
	}
	return s.img, s.err
}

// shotKey is the hash of everything a screenshot is made from.
func shotKey(w, h int, req sdk.ScreenshotRequest, boxes []render.Box) [sha256.Size]byte {
	d := sha256.New()
	num := func(vs ...int) {
		for _, v := range vs {
			binary.Write(d, binary.LittleEndian, int64(v)) //nolint:errcheck // a hash does not fail
		}
	}
	str := func(h hash.Hash, s string) { num(len(s)); h.Write([]byte(s)) }
	num(w, h, req.Quality)
	str(d, string(req.Format))
	for _, b := range boxes {
		num(b.Rect.Min.X, b.Rect.Min.Y, b.Rect.Max.X, b.Rect.Max.Y, b.Size)
		d.Write([]byte{b.Fill.R, b.Fill.G, b.Fill.B, b.Fill.A, b.Stroke.R, b.Stroke.G, b.Stroke.B, b.Stroke.A,
			b.Ink.R, b.Ink.G, b.Ink.B, b.Ink.A, boolByte(b.Bold), boolByte(b.Center)})
		str(d, b.Text)
	}
	var k [sha256.Size]byte
	d.Sum(k[:0])
	return k
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
