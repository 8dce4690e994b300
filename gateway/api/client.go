package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// ErrNoDaemon means nothing listens on the socket.
var ErrNoDaemon = errors.New("no pinky daemon is running")

// Client calls the control API. It is safe for concurrent use.
type Client struct {
	conn    net.Conn
	wmu     sync.Mutex
	mu      sync.Mutex
	next    int64
	pending map[string]chan reply
	err     error
	done    chan struct{}
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *Error          `json:"error"`
	ID     json.RawMessage `json:"id"`
}

// Dial connects to the daemon's socket. When no daemon runs, the error wraps ErrNoDaemon.
func Dial(ctx context.Context, path string) (*Client, error) {
	conn, err := DialPrivate(ctx, path)
	if err != nil {
		return nil, err
	}
	c := &Client{conn: conn, pending: map[string]chan reply{}, done: make(chan struct{})}
	go c.read()
	return c, nil
}

func (c *Client) read() {
	defer close(c.done)
	sc := bufio.NewScanner(c.conn)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		var r reply
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		c.mu.Lock()
		ch := c.pending[string(r.ID)]
		delete(c.pending, string(r.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	c.mu.Lock()
	c.err = errors.New("the daemon closed the connection")
	if err := sc.Err(); err != nil {
		c.err = fmt.Errorf("reading from the daemon: %w", err)
	}
	c.mu.Unlock()
}

// Call invokes method with params and decodes the result into result (which may be nil).
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	n := c.next
	id := strconv.FormatInt(n, 10)
	ch := make(chan reply, 1)
	c.pending[id] = ch
	c.mu.Unlock()

	req := map[string]any{"jsonrpc": "2.0", "id": n, "method": method}
	if params != nil {
		req["params"] = params
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	_, err = c.conn.Write(append(b, '\n'))
	c.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("writing to the daemon: %w", err)
	}
	select {
	case r := <-ch:
		return r.decode(result)
	case <-c.done:
		// The answer may have come just before the daemon closed the
		// connection (a stop request's does): both cases are ready then.
		select {
		case r := <-ch:
			return r.decode(result)
		default:
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

// decode returns the reply's error, or decodes its result into result.
func (r reply) decode(result any) error {
	if r.Error != nil {
		return r.Error
	}
	if result != nil {
		return json.Unmarshal(r.Result, result)
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }
