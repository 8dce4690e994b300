package hostmux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// inputBuffer is how many events wait for one driver's stream.
const inputBuffer = 64

// stream is one driver's Input call, fed through ch.
type stream struct {
	driver string
	ch     chan sdk.InputEvent
	done   chan struct{} // closed when the driver's Input has returned
	n      int64         // set before done closes
	err    error         // set before done closes
}

// Input routes each event to its device's driver, keeping one Input
// stream open per driver for the call's life (opened at the driver's
// first event), and returns the events applied by all of them. A driver's
// stream that fails ends the call with its error, seen at the next event
// or at the end of the input (next cannot be interrupted). An event for an
// unknown device, or a device whose driver does not serve sdk.CapInput,
// ends the call as a single driver's stream would end.
func (m *Mux) Input(ctx context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	if !m.serves(sdk.CapInput) {
		return 0, sdk.Errorf(sdk.ErrUnsupported, "no driver of this phone host serves %s", sdk.CapInput)
	}
	var (
		wg      sync.WaitGroup
		streams = map[string]*stream{}
		order   []*stream // the order streams opened, for the first error
	)
	// finish ends every stream, waits for them, and returns the total
	// applied and err, or else the first stream's failure. The streams
	// apply what they were handed before they end, as a single driver
	// applies the events before the one that fails.
	finish := func(err error) (int64, error) {
		for _, s := range order {
			close(s.ch)
		}
		wg.Wait()
		var total int64
		for _, s := range order {
			total += s.n
			if err == nil && s.err != nil {
				err = s.err
			}
		}
		return total, err
	}
	for {
		for _, s := range order {
			select {
			case <-s.done:
				if s.err != nil {
					return finish(s.err)
				}
			default:
			}
		}
		ev, err := next()
		if errors.Is(err, io.EOF) {
			return finish(nil)
		}
		if err != nil {
			return finish(err)
		}
		d, name, err := m.route(ev.DeviceID, sdk.CapInput)
		if err != nil {
			return finish(err)
		}
		s := streams[name]
		if s == nil {
			s = &stream{driver: name, ch: make(chan sdk.InputEvent, inputBuffer), done: make(chan struct{})}
			streams[name] = s
			order = append(order, s)
			wg.Go(func() { m.feed(ctx, d, s) })
		}
		select {
		case s.ch <- ev:
		case <-s.done:
			if s.err == nil {
				s.err = fmt.Errorf("the %s driver ended its input stream early", name)
			}
			return finish(s.err)
		}
	}
}

// feed runs one driver's Input over s.ch until the channel closes or ctx
// ends.
func (m *Mux) feed(ctx context.Context, d sdk.Full, s *stream) {
	defer close(s.done)
	s.n, s.err = d.Input(ctx, func() (sdk.InputEvent, error) {
		select {
		case ev, ok := <-s.ch:
			if !ok {
				return sdk.InputEvent{}, io.EOF
			}
			return ev, nil
		case <-ctx.Done():
			return sdk.InputEvent{}, ctx.Err()
		}
	})
	if s.err != nil {
		m.log.Debug("input stream ended", "driver", s.driver, "applied", s.n, "err", s.err)
	}
}
