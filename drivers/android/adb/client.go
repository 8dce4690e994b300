package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultPort is the adb server's default TCP port.
const DefaultPort = 5037

// Options configures a Client. The zero value reads the environment like
// the adb command does and falls back to 127.0.0.1:5037.
type Options struct {
	// Addr is the adb server's address: "HOST:PORT", an adb socket spec
	// ("tcp:PORT", "tcp:HOST:PORT", "localabstract:NAME",
	// "localfilesystem:PATH"), or empty for the environment
	// (ADB_SERVER_SOCKET, else ANDROID_ADB_SERVER_ADDRESS and
	// ANDROID_ADB_SERVER_PORT) and then 127.0.0.1:5037.
	Addr string
	// ADBPath is the adb binary that starts a server when none listens.
	// Empty means "adb" looked up on PATH.
	ADBPath string
	// NoStart stops the client from starting a server when none listens.
	NoStart bool
}

// Client talks to one adb server. It opens one connection per request and
// is safe for concurrent use.
type Client struct {
	network string // "tcp" or "unix"
	address string // for net.Dial
	spec    string // adb socket spec, for messages and adb -L
	port    string // set for a loopback TCP server: adb -P PORT start-server
	adbPath string
	noStart bool

	startMu sync.Mutex // one start-server at a time
}

// New returns a client for the server opts names. It does not connect.
func New(opts Options) (*Client, error) {
	addr := opts.Addr
	if addr == "" {
		addr = addrFromEnv()
	}
	c := &Client{adbPath: opts.ADBPath, noStart: opts.NoStart}
	if c.adbPath == "" {
		c.adbPath = "adb"
	}
	if err := c.setAddr(addr); err != nil {
		return nil, err
	}
	return c, nil
}

// Dial returns a client for the server opts names, once the server answers
// host:version; it starts the server first if none listens (see Options).
func Dial(ctx context.Context, opts Options) (*Client, error) {
	c, err := New(opts)
	if err != nil {
		return nil, err
	}
	if _, err := c.Version(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Addr returns the server's address as an adb socket spec, e.g. "tcp:127.0.0.1:5037".
func (c *Client) Addr() string { return c.spec }

func addrFromEnv() string {
	if s := os.Getenv("ADB_SERVER_SOCKET"); s != "" {
		return s
	}
	host := os.Getenv("ANDROID_ADB_SERVER_ADDRESS")
	if host == "" {
		host = "127.0.0.1"
	}
	port := os.Getenv("ANDROID_ADB_SERVER_PORT")
	if port == "" {
		port = strconv.Itoa(DefaultPort)
	}
	return net.JoinHostPort(host, port)
}

func (c *Client) setAddr(addr string) error {
	switch {
	case strings.HasPrefix(addr, "localabstract:"):
		name := strings.TrimPrefix(addr, "localabstract:")
		c.network, c.address, c.spec = "unix", "@"+name, addr
		return nil
	case strings.HasPrefix(addr, "localfilesystem:"):
		c.network, c.address, c.spec = "unix", strings.TrimPrefix(addr, "localfilesystem:"), addr
		return nil
	case strings.HasPrefix(addr, "tcp:"):
		addr = strings.TrimPrefix(addr, "tcp:")
		if !strings.Contains(addr, ":") {
			addr = "127.0.0.1:" + addr
		}
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("adb server address %q: %w", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return fmt.Errorf("adb server address %q: bad port %q", addr, port)
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	c.network, c.address = "tcp", net.JoinHostPort(host, port)
	c.spec = "tcp:" + c.address
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		c.port = port
	}
	return nil
}

// conn is one connection to the server, closed when its context ends.
type conn struct {
	net.Conn
	ctx  context.Context
	stop func() bool
}

// Close stops watching the context and closes the connection.
func (cn *conn) Close() error {
	cn.stop()
	return cn.Conn.Close()
}

// err returns the context's error when it ended, since a read or write on
// a connection closed by the context fails with a less useful error.
func (cn *conn) err(err error) error {
	if err == nil {
		return nil
	}
	if cn.ctx.Err() != nil {
		return fmt.Errorf("adb: %w", context.Cause(cn.ctx))
	}
	return err
}

// open connects to the server, starting it if it is not running.
func (c *Client) open(ctx context.Context) (*conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("adb: %w", context.Cause(ctx))
	}
	nc, err := c.dial(ctx)
	if err != nil && refused(err) && ctx.Err() == nil {
		if err = c.startServer(ctx); err != nil {
			return nil, err
		}
		nc, err = c.dial(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("adb: %w", context.Cause(ctx))
		}
		if refused(err) {
			return nil, fmt.Errorf("%w at %s: %v", ErrServerNotRunning, c.spec, err)
		}
		return nil, fmt.Errorf("adb: connect to the adb server at %s: %w", c.spec, err)
	}
	cn := &conn{Conn: nc, ctx: ctx}
	cn.stop = context.AfterFunc(ctx, func() { nc.Close() })
	return cn, nil
}

func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, c.network, c.address)
}

// refused reports whether err means that nothing listens.
func refused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// startServer runs "adb start-server" for the client's address, once at a
// time; a caller that waited finds the server up and returns.
func (c *Client) startServer(ctx context.Context) error {
	if c.noStart {
		return fmt.Errorf("%w at %s (starting it is turned off)", ErrServerNotRunning, c.spec)
	}
	var args []string
	switch {
	case c.network == "unix":
		args = []string{"-L", c.spec}
	case c.port != "":
		args = []string{"-P", c.port}
	default:
		return fmt.Errorf("%w at %s (a remote server is not started from here)", ErrServerNotRunning, c.spec)
	}
	c.startMu.Lock()
	defer c.startMu.Unlock()
	if nc, err := c.dial(ctx); err == nil {
		nc.Close()
		return nil
	}
	path, err := exec.LookPath(c.adbPath)
	if err != nil {
		return fmt.Errorf("%w: install Android platform-tools (Debian/Ubuntu: apt install adb; "+
			"macOS: brew install --cask android-platform-tools), or start an adb server at %s "+
			"(no server listens there, and %q: %v)", ErrADBNotInstalled, c.spec, c.adbPath, err)
	}
	cmd := exec.CommandContext(ctx, path, append(args, "start-server")...)
	// The address goes on the command line; the variables could contradict it.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ADB_SERVER_SOCKET=") && !strings.HasPrefix(kv, "ANDROID_ADB_SERVER_PORT=") &&
			!strings.HasPrefix(kv, "ANDROID_ADB_SERVER_ADDRESS=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The server adb forks may keep our pipes for a moment before it
	// redirects its output to its log; do not wait on it.
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		if ctx.Err() != nil {
			return fmt.Errorf("adb: start-server: %w", context.Cause(ctx))
		}
		return fmt.Errorf("%w at %s, and %s %s start-server failed: %v: %s",
			ErrServerNotRunning, c.spec, path, strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}

// request sends one request and reads its OKAY or FAIL.
func (cn *conn) request(req string) error {
	if err := cn.send(req); err != nil {
		return err
	}
	return cn.status(req)
}

func (cn *conn) send(req string) error {
	if len(req) > 0xffff {
		return fmt.Errorf("adb: request of %d bytes is too long", len(req))
	}
	if _, err := fmt.Fprintf(cn, "%04x%s", len(req), req); err != nil {
		return cn.err(fmt.Errorf("adb %s: %w", req, err))
	}
	return nil
}

// status reads OKAY (nil) or FAIL and its message (a *ServerError).
func (cn *conn) status(req string) error {
	var b [4]byte
	if _, err := io.ReadFull(cn, b[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return cn.err(fmt.Errorf("adb %s: the server closed the connection without a reply: %w", req, errNoReply))
		}
		return cn.err(fmt.Errorf("adb %s: %w", req, err))
	}
	switch string(b[:]) {
	case "OKAY":
		return nil
	case "FAIL":
		msg, err := cn.readString(req)
		if err != nil {
			return err
		}
		return failError(req, msg)
	}
	return protoErrorf("adb %s: unexpected reply %q (is %s an adb server?)", req, b[:], cn.RemoteAddr())
}

// readString reads a hex4 length and that many bytes.
func (cn *conn) readString(req string) (string, error) {
	var h [4]byte
	if _, err := io.ReadFull(cn, h[:]); err != nil {
		if err == io.EOF {
			return "", cn.err(fmt.Errorf("adb %s: the server closed the connection: %w", req, errClosed))
		}
		if err == io.ErrUnexpectedEOF {
			return "", cn.err(protoErrorf("adb %s: the connection closed inside the reply's length", req))
		}
		return "", cn.err(fmt.Errorf("adb %s: %w", req, err))
	}
	n, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		return "", protoErrorf("adb %s: bad length %q in the reply", req, h[:])
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(cn, buf); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return "", cn.err(protoErrorf("adb %s: the reply is shorter than its length %d", req, n))
		}
		return "", cn.err(fmt.Errorf("adb %s: %w", req, err))
	}
	return string(buf), nil
}

// query opens a connection, sends a host request and returns the string
// that follows OKAY.
func (c *Client) query(ctx context.Context, req string) (string, error) {
	cn, err := c.open(ctx)
	if err != nil {
		return "", err
	}
	defer cn.Close()
	if err := cn.request(req); err != nil {
		return "", err
	}
	return cn.readString(req)
}

// transport opens a connection bound to the device with that serial, or to
// the only device when serial is empty.
func (c *Client) transport(ctx context.Context, serial string) (*conn, error) {
	cn, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	req := "host:transport:" + serial
	if serial == "" {
		req = "host:transport-any"
	}
	if err := cn.request(req); err != nil {
		cn.Close()
		return nil, err
	}
	return cn, nil
}

// OpenStream opens a device service (e.g. "localabstract:scrcpy_0001",
// "tcp:8080", "exec:CMD") on the device with that serial and returns the raw
// stream. Cancelling ctx closes the stream, so ctx must last as long as it.
func (c *Client) OpenStream(ctx context.Context, serial, service string) (net.Conn, error) {
	cn, err := c.transport(ctx, serial)
	if err != nil {
		return nil, err
	}
	if err := cn.request(service); err != nil {
		cn.Close()
		return nil, err
	}
	return cn, nil
}
