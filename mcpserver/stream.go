package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MaxMessageBytes caps one JSON-RPC message on a stream or an HTTP request:
// room for phone_upload's largest file in base64 and its envelope.
const MaxMessageBytes = maxUploadBase64 + 1<<20

const maxMessageBytes = MaxMessageBytes

// maxInflight caps the requests one stream serves at once; the reader
// waits for a free slot before it reads on.
const maxInflight = 64

// fixedSessions is Sessions for a stream: every call goes to one Session.
type fixedSessions struct{ sess Session }

func (f fixedSessions) Session(context.Context) (Session, error) { return f.sess, nil }

// ServeStream serves one MCP connection over a byte stream of
// newline-delimited JSON-RPC messages (MCP's stdio transport), with every
// tool call going to sess. The daemon calls it for each `pinky mcp`
// connection on its local socket. It returns nil when r ends or the
// client closes its end of w, the write's error when w fails otherwise,
// or ctx's error when ctx is done; it closes neither r nor w, so the
// caller closes the connection to end a read in progress.
//
// mcp-go's StdioServer is not used: its session is a package-level
// singleton (one session id, one notification queue and one writer for the
// whole process), so two connections served at once would mix their
// notifications and client info. Each stream here gets its own MCPServer
// (cheap: tools are a map of definitions) and its own session.
func ServeStream(ctx context.Context, sess Session, r io.Reader, w io.Writer, opts Options) error {
	srv := New(fixedSessions{sess}, opts)
	return serveStream(ctx, srv, r, w, opts.logger())
}

func serveStream(ctx context.Context, srv *server.MCPServer, r io.Reader, w io.Writer, log *slog.Logger) error {
	ss := newStreamSession()
	if err := srv.RegisterSession(ctx, ss); err != nil {
		return fmt.Errorf("register mcp session: %w", err)
	}
	// Unregistering runs the OnSessionClosed hook, which must run even when
	// ctx is already done.
	defer srv.UnregisterSession(context.WithoutCancel(ctx), ss.id)

	ctx, cancel := context.WithCancel(srv.WithContext(ctx, ss))
	defer cancel()

	var writeErr atomic.Pointer[error] // why the output failed, if it did
	out := newStreamWriter(w, ss.notes, func(err error) {
		log.Debug("mcp stream write failed", "session", ss.id, "err", err)
		writeErr.CompareAndSwap(nil, &err)
		cancel()
	})
	// The writer outlives the requests (it stops after wg.Wait below), so
	// that a request finishing as the stream ends still gets its answer out.
	stopWriter := make(chan struct{})
	go out.run(stopWriter)
	defer func() { <-out.stopped }()
	defer close(stopWriter)

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() { readErr <- readMessages(ctx, bufio.NewReader(r), lines, out) }()

	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInflight)
	defer wg.Wait()
	// Ending input processing cancels the requests still running: none of
	// them may outlive the session it belongs to.
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			if werr := writeErr.Load(); werr != nil {
				return streamGone(*werr)
			}
			return ctx.Err()
		case err := <-readErr:
			return err
		case line := <-lines:
			// A byte-order mark is dropped; a message nested too deep is
			// answered here, before any parser recurses into it.
			line, refused := PrepareMessage(line)
			if refused != nil {
				out.write(*refused)
				continue
			}
			if len(line) == 0 {
				continue
			}
			var base struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(line, &base); err != nil {
				out.write(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.PARSE_ERROR, "Parse error: the line is not a JSON-RPC message; send one JSON object per line", nil))
				continue
			}
			isRequest := len(base.ID) > 0 && !bytes.Equal(base.ID, []byte("null"))
			switch {
			case base.Method == "":
				// A response to a server-initiated request; Pinky sends none.
				continue
			case !isRequest:
				// Notifications (notifications/cancelled among them) are
				// handled at once, never behind a slow request.
				srv.HandleMessage(ctx, line)
				continue
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			wg.Go(func() {
				defer func() { <-slots }()
				if resp := srv.HandleMessage(ctx, line); resp != nil {
					out.write(resp)
				}
			})
		}
	}
}

// streamGone is what serving returns when its output failed: nil when the
// client closed its end (the stream ended, as when its input ends), else
// the write's error.
func streamGone(err error) error {
	if errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, os.ErrClosed) || errors.Is(err, net.ErrClosed) {
		return nil
	}
	return fmt.Errorf("write mcp stream: %w", err)
}

// readMessages sends each line of r to lines until r ends (nil) or fails.
// A line longer than maxMessageBytes is skipped and answered with an error.
func readMessages(ctx context.Context, r *bufio.Reader, lines chan<- []byte, out *streamWriter) error {
	for {
		line, tooLong, err := readLine(r, maxMessageBytes)
		if tooLong {
			out.write(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST,
				fmt.Sprintf("message larger than %d bytes", maxMessageBytes), nil))
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			select {
			case lines <- line:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read mcp stream: %w", err)
		}
	}
}

// readLine reads one line of at most limit bytes; the rest of a longer line
// is read and dropped.
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			tooLong = true
		} else {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			line = nil
		}
		return line, tooLong, err
	}
}

// streamWriter writes JSON-RPC messages, one per line: responses and the
// session's notifications. One goroutine (run) does all the writing, so a
// notification queued before a response (a call's progress before its
// result) is written before it.
type streamWriter struct {
	w       io.Writer
	notes   chan mcp.JSONRPCNotification
	out     chan any
	stopped chan struct{} // closed when run returns
	onErr   func(error)
	bad     bool // a write failed; only run touches it
}

func newStreamWriter(w io.Writer, notes chan mcp.JSONRPCNotification, onErr func(error)) *streamWriter {
	return &streamWriter{w: w, notes: notes, out: make(chan any), stopped: make(chan struct{}), onErr: onErr}
}

// run writes until stop is closed.
func (s *streamWriter) run(stop <-chan struct{}) {
	defer close(s.stopped)
	for {
		select {
		case <-stop:
			return
		case n := <-s.notes:
			s.writeOne(n)
		case msg := <-s.out:
			for drained := false; !drained; {
				select {
				case n := <-s.notes:
					s.writeOne(n)
				default:
					drained = true
				}
			}
			s.writeOne(msg)
		}
	}
}

// write queues msg for writing; it is dropped once the writer stopped.
func (s *streamWriter) write(msg any) {
	select {
	case s.out <- msg:
	case <-s.stopped:
	}
}

func (s *streamWriter) writeOne(msg any) {
	if s.bad {
		return
	}
	b, err := json.Marshal(msg)
	if err == nil {
		_, err = s.w.Write(append(b, '\n'))
	}
	if err != nil {
		s.bad = true
		s.onErr(err)
	}
}

// streamSession is the mcp-go session of one stream.
type streamSession struct {
	id    string
	notes chan mcp.JSONRPCNotification
	init  atomic.Bool
	level atomic.Value // mcp.LoggingLevel

	mu      sync.RWMutex
	info    mcp.Implementation
	caps    mcp.ClientCapabilities
	version string
}

func newStreamSession() *streamSession {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return &streamSession{id: "stream-" + hex.EncodeToString(b[:]), notes: make(chan mcp.JSONRPCNotification, 256)}
}

var (
	_ server.ClientSession              = (*streamSession)(nil)
	_ server.SessionWithClientInfo      = (*streamSession)(nil)
	_ server.SessionWithLogging         = (*streamSession)(nil)
	_ server.SessionWithProtocolVersion = (*streamSession)(nil)
)

func (s *streamSession) SessionID() string                                   { return s.id }
func (s *streamSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }
func (s *streamSession) Initialize()                                         { s.init.Store(true) }
func (s *streamSession) Initialized() bool                                   { return s.init.Load() }

func (s *streamSession) SetLogLevel(level mcp.LoggingLevel) { s.level.Store(level) }

func (s *streamSession) GetLogLevel() mcp.LoggingLevel {
	if l, ok := s.level.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelError
}

func (s *streamSession) GetClientInfo() mcp.Implementation {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.info
}

func (s *streamSession) SetClientInfo(info mcp.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
}

func (s *streamSession) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.caps
}

func (s *streamSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
}

func (s *streamSession) ProtocolVersion() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.version
}

func (s *streamSession) SetProtocolVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}
