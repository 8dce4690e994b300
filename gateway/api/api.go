// Package api is the daemon's local control API: JSON-RPC 2.0, one request
// or response per line, over a local connection that only the daemon's
// user can reach: a Unix socket (0700 folder, 0600 socket, and the peer's
// uid checked on every connection), or on Windows a named pipe whose
// security descriptor admits only that user and whose owner clients check
// before they send anything (local_unix.go, local_windows.go). The person's CLI uses it through Client; the web console
// runs the same methods in the daemon through Server.Call.
//
// The daemon registers each method with Handle, which decodes the params
// into a typed value and sends the typed result. The params and results
// are this package's own types (Card, Lease, EventPage, Settings…), not the
// core's, so the API its clients know stays as it is while the core
// changes; package api imports no other package of gateway/
package api

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"sync"
	"time"
)

// maxLine bounds one request or response.
const maxLine = 16 << 20

// Error codes: JSON-RPC's own, and the API's (-32000 and below).
const (
	CodeParse          = -32700
	CodeInvalidRequest = -32600
	CodeNoMethod       = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeFailed         = -32000 // the method ran and failed; Message says why
)

// Error is a JSON-RPC error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Handler serves one method. params is the raw JSON of the request's params
// (null when absent). An *Error is sent as is; any other error as CodeFailed.
type Handler func(ctx context.Context, params json.RawMessage) (any, error)

// Server serves the control API on a Unix socket.
type Server struct {
	log      *slog.Logger
	mu       sync.Mutex
	handlers map[string]Handler
	lis      net.Listener
	conns    map[net.Conn]struct{}
	wg       sync.WaitGroup
	ctx      context.Context
	cancel   context.CancelFunc
}

// NewServer returns a server with no methods.
func NewServer(log *slog.Logger) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{log: log, handlers: map[string]Handler{}, conns: map[net.Conn]struct{}{}, ctx: ctx, cancel: cancel}
}

// Handle registers a method.
func (s *Server) Handle(method string, h Handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[method] = h
}

// Methods lists the registered methods, sorted.
func (s *Server) Methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.handlers))
}

// Listen serves the control API on a private socket at path (see
// ListenPrivate) until Close.
func (s *Server) Listen(path string) error {
	lis, err := ListenPrivate(path, s.log)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.lis = lis
	s.mu.Unlock()
	s.wg.Add(1)
	go s.accept(lis)
	return nil
}

func (s *Server) accept(lis net.Listener) {
	defer s.wg.Done()
	for {
		c, err := lis.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var wmu sync.Mutex
	write := func(r response) {
		b, err := json.Marshal(r)
		if err != nil {
			b, _ = json.Marshal(response{JSONRPC: "2.0", ID: r.ID, Error: &Error{CodeInternal, "result could not be encoded: " + err.Error()}})
		}
		wmu.Lock()
		defer wmu.Unlock()
		c.Write(append(b, '\n'))
	}
	var calls sync.WaitGroup
	defer calls.Wait()
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			write(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &Error{CodeParse, "not JSON: " + err.Error()}})
			continue
		}
		if req.JSONRPC != "2.0" || req.Method == "" {
			write(response{JSONRPC: "2.0", ID: idOrNull(req.ID), Error: &Error{CodeInvalidRequest, `want {"jsonrpc":"2.0","method":…}`}})
			continue
		}
		calls.Add(1)
		go func() { // requests on one connection may run concurrently
			defer calls.Done()
			res, err := s.call(req)
			if req.ID == nil {
				return // a notification: no answer
			}
			r := response{JSONRPC: "2.0", ID: req.ID, Result: res}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) {
					e = &Error{CodeFailed, err.Error()}
				}
				r.Result, r.Error = nil, e
			} else if res == nil {
				r.Result = struct{}{}
			}
			write(r)
		}()
	}
}

func idOrNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return json.RawMessage("null")
	}
	return id
}

// Call runs a method in the daemon, as a request on the socket would: the
// web console's API is this same set of methods. It ends when ctx or the
// server ends.
func (s *Server) Call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	return s.dispatch(ctx, request{Method: method, Params: params})
}

func (s *Server) call(req request) (res any, err error) {
	return s.dispatch(s.ctx, req)
}

func (s *Server) dispatch(ctx context.Context, req request) (res any, err error) {
	s.mu.Lock()
	h, ok := s.handlers[req.Method]
	s.mu.Unlock()
	if !ok {
		return nil, &Error{CodeNoMethod, fmt.Sprintf("no method %q", req.Method)}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("local API method panicked", "method", req.Method, "panic", p)
			res, err = nil, &Error{CodeInternal, fmt.Sprintf("%s failed inside the daemon; see its log", req.Method)}
		}
	}()
	params := req.Params
	if params == nil {
		params = json.RawMessage("null")
	}
	return h(ctx, params)
}

// Close stops accepting, lets the calls under way answer (for up to two
// seconds: a stop request's own answer is one of them), then ends the open
// connections.
func (s *Server) Close() error {
	s.mu.Lock()
	lis := s.lis
	for c := range s.conns {
		if uc, ok := c.(interface{ CloseRead() error }); ok {
			uc.CloseRead() // no new requests; answers still go out
		}
	}
	s.mu.Unlock()
	var err error
	if lis != nil {
		err = lis.Close()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		s.cancel() // calls still running are told to give up
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-done
	}
	s.cancel()
	return err
}

// Params decodes params into v strictly, as a CodeInvalidParams error.
func Params(params json.RawMessage, v any) error {
	if string(params) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &Error{CodeInvalidParams, "bad params: " + err.Error()}
	}
	return nil
}
