package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// Handshake is the go-plugin handshake of protocol version 1 (pinky.driver.v1).
// A driver in another language checks the cookie and prints the handshake
// line described in SPEC.md.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "PINKY_DRIVER_PLUGIN",
	MagicCookieValue: "6c1f4e2a9b7d43c8a5e0f3b2d1c49a87",
}

// PluginName is the name under which a driver process serves its plugin.
const PluginName = "driver"

// DebugEnv, when set to 1, makes Serve run without a host and print a
// reattach line, so that a driver can run under a debugger and be attached
// with `pinky driver attach`.
const DebugEnv = "PINKY_DRIVER_DEBUG"

// grpcPlugin is the go-plugin glue: it registers the server adapter in the
// driver process and builds the client adapter in the host.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	d Driver
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterDriverServiceServer(s, NewServer(p.d))
	return nil
}

// GRPCClient gets a context that go-plugin cancels when the process exits:
// that is how the client adapter knows the driver is gone.
func (p *grpcPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewClient(c, ctx.Done()), nil
}

// Serve runs d as a driver plugin: it answers the handshake on stdout and
// serves until the host ends it. Call it from main and exit non-zero when it
// returns an error. Write logs to stderr only: stdout belongs to the
// handshake. The process exits when its parent (the host) dies.
func Serve(d Driver) error {
	if os.Getenv(DebugEnv) == "1" {
		return serveDebug(d)
	}
	if os.Getenv(Handshake.MagicCookieKey) != Handshake.MagicCookieValue {
		return fmt.Errorf("%s is a Pinky driver plugin: the pinky daemon starts it. "+
			"To run it by hand for a debugger, set %s=1 and attach it with `pinky driver attach`", os.Args[0], DebugEnv)
	}
	go exitWithParent(os.Getppid())
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &grpcPlugin{d: d}},
		GRPCServer:      newGRPCServer,
		Logger:          hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr, JSONFormat: true}),
	})
	return nil
}

// newGRPCServer serves calls on a pool of workers rather than a goroutine
// per call: one handoff less per call, about a tenth of a cross-process
// round trip on a small machine (BENCHMARKS.md).
func newGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts, grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes))...)
}

// MaxMessageBytes is the largest message of the contract (SPEC.md: 16 MiB),
// e.g. a key frame of a large screen. gRPC's default of 4 MiB is too small.
const MaxMessageBytes = 16 << 20

// Logger returns the logger a driver should use: JSON lines on stderr, which
// the host logs again under the driver's name with their level and fields.
func Logger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// exitWithParent ends the process once it has been orphaned, so that a host
// killed with SIGKILL leaves no driver behind. Polling works on every Unix,
// unlike PR_SET_PDEATHSIG, which fires when the starting thread ends.
func exitWithParent(ppid int) {
	for range time.Tick(250 * time.Millisecond) {
		if os.Getppid() != ppid {
			fmt.Fprintln(os.Stderr, "driver: the host process is gone; exiting")
			os.Exit(0)
		}
	}
}

// Reattach is what a driver started by hand prints, and what the host needs
// to attach to it.
type Reattach struct {
	Network string `json:"network"` // "unix" or "tcp"
	Addr    string `json:"addr"`
	Pid     int    `json:"pid"`
}

func serveDebug(d Driver) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ch := make(chan *plugin.ReattachConfig, 1)
	closed := make(chan struct{})
	go plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginName: &grpcPlugin{d: d}},
		GRPCServer:      newGRPCServer,
		Logger:          hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}),
		Test:            &plugin.ServeTestConfig{Context: ctx, ReattachConfigCh: ch, CloseCh: closed},
	})
	select {
	case rc := <-ch:
		line, _ := json.Marshal(Reattach{Network: rc.Addr.Network(), Addr: rc.Addr.String(), Pid: rc.Pid})
		fmt.Fprintf(os.Stdout, "%s\n", line)
		fmt.Fprintf(os.Stderr, "driver: serving in debug mode; attach with: pinky driver attach NAME '%s'\n", line)
	case <-closed:
		return errors.New("driver: the plugin server ended before it listened")
	}
	<-closed
	return nil
}

// StartConfig says which driver process to start or attach to.
type StartConfig struct {
	// Path of the driver executable; ignored with Reattach.
	Path string
	// Args are extra arguments, Env extra KEY=VALUE environment entries.
	Args []string
	Env  []string
	// Reattach, when set, attaches to a running driver instead of starting one.
	Reattach *Reattach
	// Stderr receives the driver's stderr, line by line. Nil discards it.
	Stderr io.Writer
	// StartTimeout bounds the handshake; zero means 10 s.
	StartTimeout time.Duration
}

// Process is a running driver process and its client.
type Process struct {
	client *plugin.Client
	drv    *Client
	done   <-chan struct{}
	pid    int
}

// Start starts the driver (or attaches to it), completes the handshake and
// dials it. The returned process must be ended with Kill.
func Start(cfg StartConfig) (*Process, error) {
	stderr := cfg.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	timeout := cfg.StartTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	cc := &plugin.ClientConfig{
		HandshakeConfig:  Handshake,
		Plugins:          plugin.PluginSet{PluginName: &grpcPlugin{}},
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		StartTimeout:     timeout,
		Stderr:           stderr,
		SyncStderr:       stderr,
		Logger:           hclog.NewNullLogger(),
	}
	if r := cfg.Reattach; r != nil {
		addr, err := reattachAddr(r)
		if err != nil {
			return nil, err
		}
		cc.Reattach = &plugin.ReattachConfig{Protocol: plugin.ProtocolGRPC, ProtocolVersion: int(Handshake.ProtocolVersion), Addr: addr, Pid: r.Pid}
	} else {
		cmd := exec.Command(cfg.Path, cfg.Args...)
		cmd.Env = append(os.Environ(), cfg.Env...)
		cc.Cmd = cmd
		cc.AutoMTLS = false // a local unix socket in a private folder; mTLS adds start time, not safety
	}
	c := plugin.NewClient(cc)
	rpc, err := c.Client()
	if err != nil {
		c.Kill()
		return nil, fmt.Errorf("starting driver %s: %w", cfg.Path, err)
	}
	raw, err := rpc.Dispense(PluginName)
	if err != nil {
		c.Kill()
		return nil, fmt.Errorf("driver %s: %w", cfg.Path, err)
	}
	drv := raw.(*Client)
	p := &Process{client: c, drv: drv, done: drv.gone}
	if rc := c.ReattachConfig(); rc != nil {
		p.pid = rc.Pid
	}
	return p, nil
}

func reattachAddr(r *Reattach) (net.Addr, error) {
	switch r.Network {
	case "unix":
		return &net.UnixAddr{Name: r.Addr, Net: "unix"}, nil
	case "tcp":
		return net.ResolveTCPAddr("tcp", r.Addr)
	}
	return nil, fmt.Errorf("reattach network %q: want unix or tcp", r.Network)
}

// Driver is the client of the process's driver.
func (p *Process) Driver() *Client { return p.drv }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Pid is the process id.
func (p *Process) Pid() int { return p.pid }

// Kill ends the process: a graceful shutdown request, then SIGKILL after 2 s.
// It is idempotent and returns when the process is gone.
func (p *Process) Kill() { p.client.Kill() }
