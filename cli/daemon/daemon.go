// Package daemon is the Pinky daemon: the wiring of the core's parts
// under gateway/ (the driver host, leases and the action pipeline, the
// guard of policy and commit detection, approvals, history, recordings,
// events) with the daemon's front doors: the local socket API that the
// person's CLI and the console use, MCP over Streamable HTTP (package
// mcpserver) and uploads. New builds a daemon from its Config and Run
// serves until it is stopped. It is the one package that knows them all
// (the composition root, under cli/ as ARCHITECTURE.md places it, so that
// the top level stays as the project's design fixes it); nothing under
// gateway/ imports it, mcpserver or cli.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/console"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/gateway/lease"
	"github.com/pinky-gateway/pinky/gateway/notify"
	"github.com/pinky-gateway/pinky/gateway/pin"
	"github.com/pinky-gateway/pinky/gateway/policy"
	"github.com/pinky-gateway/pinky/gateway/settings"
	"github.com/pinky-gateway/pinky/gateway/stream"
	"github.com/pinky-gateway/pinky/internal/version"
	"github.com/pinky-gateway/pinky/mcpserver"
)

// Version is the gateway's version (package internal/version: stamped
// by make build from git).
var Version = version.Get().Version

// VideoMaxSide bounds the longer side of the phones' video (the mirror and
// the recordings), in pixels: enough to read any text, a third of the
// bytes of a full-resolution screen.
const VideoMaxSide = 1280

// Config configures a gateway.
type Config struct {
	Dirs home.Dirs
	// ApprovalWait is how long an agent's call waits for the person before
	// it answers approval_pending; zero is 45 s.
	ApprovalWait time.Duration
	// Notifier tells the person on their desktop that an approval waits;
	// nil shows nothing (pinky daemon --notify off).
	Notifier notify.Notifier
	// ApprovalTTL is how long an approval stays open before it expires (a
	// deny); zero is approval.DefaultTTL (60 s).
	ApprovalTTL time.Duration
	// Drivers configures driver discovery and supervision; its Home and
	// Logger are filled in from Dirs and Logger when empty.
	Drivers driverhost.Config
	Logger  *slog.Logger
	// HTTPAddr, when set, serves MCP over Streamable HTTP at this HOST:PORT
	// (port 0 picks a free one) at MCPPath, for agents on other hosts; every
	// request needs the bearer token of Dirs.Token(). See http.go.
	HTTPAddr string
	// HTTPAllowRemote allows an HTTPAddr that is not a loopback address.
	HTTPAllowRemote bool
	// HTTPResumeGrace is how long the leases of an HTTP session that ended
	// wait for its agent; zero means DefaultResumeGrace.
	HTTPResumeGrace time.Duration
	// ConsoleAddr is where the web console listens (a loopback HOST:PORT;
	// port 0 picks a free one); empty is DefaultConsoleAddr, "off" serves
	// no console.
	ConsoleAddr string
	// AutoUnlock unlocks a locked phone an agent acts on with the PIN the
	// person saved in the OS keychain (pinky pin set); off by default.
	AutoUnlock bool
	// LeaseIdle ends a lease nobody used for this long; zero means
	// lease.DefaultIdleTimeout. Gateways on one database should agree on
	// it: any of them ends another's idle lease when it is due by its own.
	LeaseIdle time.Duration
	// History is where the history's rows live: empty for the SQLite file
	// in the data folder, or a postgres:// or postgresql:// URL. The
	// screenshots and recordings stay files in the data folder either way.
	History string
	// HostsListen, when set, is where the gateway listens for phone hosts
	// (pinky host) at HOST:PORT (port 0: any free one), and lets hosts pair
	// there (pinky hosts add); see hosts.go.
	HostsListen string
}

// Gateway is a running daemon.
type Gateway struct {
	cfg       Config
	log       *slog.Logger
	lock      *home.Lock
	host      *driverhost.Host
	api       *api.Server
	store     history.Store
	storeName string // the history's file, or its URL without the password
	approvals *approval.Book
	policy    *policy.Store
	media     *history.MediaWriter
	agents    *agent.Manager
	events    *events.Log // the person's event stream (events_wiring.go)
	settings  *settings.Store
	screens   *stream.Screens // one video stream per phone screen, shared
	recorders *recorders
	sizes     screenSizes     // the phones' screen sizes, for the console's input
	console   *console.Server // nil when off
	started   time.Time
	stop      chan struct{}
	// httpAddr is where MCP over HTTP listens; set before the local API
	// serves, then only read.
	httpAddr string
	// hosts is the phone hosts' side (hosts.go); nil without HostsListen.
	hosts *phoneHosts
	// leases is the lease table in PostgreSQL; nil for the leases in
	// memory (a SQLite history).
	leases *lease.Postgres
}

// leaseTable is the agents' lease table: p, or nil for the table in
// memory (a nil *lease.Postgres must not become a non-nil interface).
func leaseTable(p *lease.Postgres) lease.Table {
	if p == nil {
		return nil
	}
	return p
}

// New prepares a gateway: it creates the data folders and takes the daemon
// lock, so a second daemon on the same data folder fails here.
func New(cfg Config) (*Gateway, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := checkHistory(cfg.History); err != nil {
		return nil, err
	}
	if err := api.CheckSocketPath(cfg.Dirs.Socket()); err != nil {
		return nil, err
	}
	if cfg.HTTPAddr != "" {
		if err := CheckHTTPAddr(cfg.HTTPAddr, cfg.HTTPAllowRemote); err != nil {
			return nil, err
		}
	}
	if err := cfg.Dirs.Ensure(); err != nil {
		return nil, fmt.Errorf("data folder: %w", err)
	}
	lock, err := cfg.Dirs.AcquireLock()
	if err != nil {
		return nil, err
	}
	dc := cfg.Drivers
	if dc.Home == "" {
		dc.Home = cfg.Dirs.Home
	}
	if dc.Logger == nil {
		dc.Logger = log
	}
	// The policy decides what agents may do; without a good one the daemon
	// does not start (a broken policy never means "allow").
	if created, err := policy.EnsureDefault(filepath.Join(cfg.Dirs.Home, policy.PolicyFile)); err != nil {
		lock.Release()
		return nil, err
	} else if created {
		log.Info("wrote the default policy; edit it to change what agents may do", "file", filepath.Join(cfg.Dirs.Home, policy.PolicyFile))
	}
	pol, err := policy.LoadStore(cfg.Dirs.Home)
	if err != nil {
		lock.Release()
		return nil, fmt.Errorf("the policy: %w", err)
	}
	// Gateways that share a PostgreSQL database tell their own sessions,
	// tasks and leases from the others' by the data folder's id.
	var gatewayID string
	if cfg.History != "" {
		if gatewayID, err = cfg.Dirs.GatewayID(); err != nil {
			lock.Release()
			return nil, err
		}
	}
	store, storeName, err := openHistory(cfg, gatewayID)
	if err != nil {
		lock.Release()
		return nil, err
	}
	// A daemon that died mid-recording may have left half a fragment at the
	// end of the file: cut it, so the file plays.
	repairRecordings(store, cfg.Dirs.Recordings(), log)
	// Tasks left open by a daemon that died cannot go on: end them.
	if n, err := store.CloseOpen(context.Background(), time.Now(), "daemon_restarted"); err != nil {
		log.Error("closing the tasks of the last run", "err", err)
	} else if n > 0 {
		log.Warn("ended the tasks the last daemon left open", "tasks", n)
	}
	// An action under way when that daemon died may or may not have
	// happened, and nobody will learn which.
	if n, err := store.SettleSteps(context.Background(), string(agent.CodeUncertain),
		"the daemon stopped before this action's end was recorded: it may or may not have happened"); err != nil {
		log.Error("settling the steps of the last run", "err", err)
	} else if n > 0 {
		log.Warn("settled the steps the last daemon left running as uncertain", "steps", n)
	}
	if h := store.Health(); h.Failing {
		log.Error("the history cannot be written: agents' actions are refused until it can; reads go on", "cause", h.Cause, "fix", h.Fix)
	}
	// With the history in PostgreSQL, the leases are there too, so that two
	// gateways on one database never lease one phone twice; each action
	// then carries its lease's fence to a phone host.
	var leases *lease.Postgres
	if cfg.History != "" {
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		leases, err = lease.OpenPostgres(ctx, cfg.History, lease.Config{Logger: log, IdleTimeout: cfg.LeaseIdle, Gateway: gatewayID})
		cancel()
		if err != nil {
			store.Close()
			lock.Release()
			return nil, fmt.Errorf("the leases: %w", err)
		}
		// The leases of this gateway's last run went with its agents (as a
		// table in memory loses them); another gateway's stay.
		if ended, err := leases.EndGateway(); err != nil {
			log.Error("ending the leases of the last run", "err", err)
		} else if len(ended) > 0 {
			log.Warn("ended the leases the last daemon left", "leases", len(ended))
		}
	}
	set, err := settings.Open(cfg.Dirs.Settings())
	if err != nil {
		if leases != nil {
			leases.Disconnect()
		}
		store.Close()
		lock.Release()
		return nil, err
	}
	g := &Gateway{cfg: cfg, log: log, lock: lock, host: driverhost.New(dc), api: api.NewServer(log), store: store, storeName: storeName, settings: set, stop: make(chan struct{})}
	g.screens = stream.NewScreens(func(device string) (sdk.Streamer, error) {
		drv, _, err := g.host.DriverForDevice(device)
		if err != nil || !g.host.Serves(device, sdk.CapVideo) {
			return nil, err
		}
		return drv, nil
	}, sdk.VideoRequest{MaxSide: VideoMaxSide}, stream.Options{})
	g.recorders = &recorders{
		dir: cfg.Dirs.Recordings(), host: g.host, screens: g.screens, store: store, settings: set,
		log: log.With("part", "recording"), byDevice: map[string]*taskRecording{}, waiting: map[string]waitingTask{},
	}
	g.media = history.NewMediaWriter(store, cfg.Dirs.Media(), history.MediaOptions{Logger: log})
	g.approvals = approval.NewBook(cfg.ApprovalTTL)
	g.approvals.OnChange = func(c approval.Card) {
		log.Info("approval", "id", c.ID, "status", c.Status, "device", c.Device, "agent", c.Agent, "tool", c.Tool, "commit", c.Commit)
	}
	recordApprovals(g.approvals, store, log)
	g.policy = pol
	g.wireEvents()
	g.agents = agent.NewManager(agent.Config{
		Drivers: g.host, Store: store, Media: g.media, MediaDir: cfg.Dirs.Media(), Logger: log,
		Guard: guard{policy: pol, settings: set}, Approvals: g.approvals, ApprovalWait: cfg.ApprovalWait, Events: g.events,
		PINs: autoUnlockPINs(cfg.AutoUnlock, log), Files: cfg.Dirs.Files(), Watcher: g.recorders,
		Leases: leaseTable(leases), IdleTimeout: cfg.LeaseIdle,
	})
	g.leases = leases
	g.recorders.private = g.agents.Private
	if cfg.HostsListen != "" {
		if err := g.openHosts(); err != nil {
			if leases != nil {
				leases.Disconnect()
			}
			store.Close()
			lock.Release()
			return nil, err
		}
	}
	g.registerAPI()
	return g, nil
}

// Run starts the drivers and the local API and serves until ctx ends or a
// client asks the daemon to stop; then it stops everything and releases
// the lock.
func (g *Gateway) Run(ctx context.Context) error {
	defer g.lock.Release()
	defer g.store.Close()
	if g.leases != nil {
		defer g.leases.Disconnect()
	}
	defer g.media.Close()
	g.started = time.Now()
	defer g.startEvents(ctx)()
	if err := g.host.Start(ctx); err != nil {
		return err
	}
	defer g.host.Stop()
	if g.hosts != nil {
		stopHosts, err := g.listenHosts()
		if err != nil {
			return err
		}
		defer stopHosts()
	}
	// Stopped in this order: the recordings end (a last read vouches for
	// what they hold), then the streams, then the drivers.
	defer g.screens.Close()
	defer g.recorders.Close()
	actx, stopAgents := context.WithCancel(context.Background())
	agentsDone := make(chan struct{})
	go func() { g.agents.Run(actx); close(agentsDone) }()
	go g.policy.Watch(actx, g.log) // an edit applies at once; a broken one keeps the last good policy
	defer func() { stopAgents(); <-agentsDone }()
	var bg sync.WaitGroup // the daemon's own background work, done before the store closes
	defer func() { stopAgents(); bg.Wait() }()
	bg.Go(func() { g.followDevices(actx) })
	pruneNow := make(chan struct{}, 1)
	g.settings.OnChange(func(old, new settings.Settings) {
		if old.Recording && !new.Recording {
			g.recorders.stopAll() // off means off now, not at the next task
		}
		if new.RetentionDays != old.RetentionDays {
			select {
			case pruneNow <- struct{}{}:
			default:
			}
		}
	})
	bg.Go(func() { g.retain(actx, pruneNow) })
	if g.cfg.ConsoleAddr != "off" {
		stopConsole, err := g.startConsole()
		if err != nil {
			return err
		}
		defer stopConsole()
	}
	if g.cfg.HTTPAddr != "" {
		stopHTTP, err := g.startHTTP(actx)
		if err != nil {
			return err
		}
		defer stopHTTP()
	}
	if err := g.api.Listen(g.cfg.Dirs.Socket()); err != nil {
		return fmt.Errorf("local API: %w", err)
	}
	defer os.Remove(g.cfg.Dirs.Socket())
	defer g.api.Close()
	mlis, err := api.ListenPrivate(g.cfg.Dirs.MCPSocket(), g.log)
	if err != nil {
		return fmt.Errorf("MCP socket: %w", err)
	}
	defer os.Remove(g.cfg.Dirs.MCPSocket())
	mcpDone := make(chan struct{})
	go func() { g.serveMCP(actx, mlis); close(mcpDone) }()
	defer func() { mlis.Close(); stopAgents(); <-mcpDone }()
	g.log.Info("pinky daemon ready", "pid", os.Getpid(), "home", g.cfg.Dirs.Home, "socket", g.cfg.Dirs.Socket(), "drivers", len(g.host.Drivers()))
	select {
	case <-ctx.Done():
	case <-g.stop:
	}
	g.log.Info("pinky daemon stopping")
	return nil
}

// serveMCP serves one MCP session per connection on the MCP socket (what
// `pinky mcp` bridges an agent host to), until the listener closes. It
// returns once every connection has ended.
func (g *Gateway) serveMCP(ctx context.Context, lis net.Listener) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := lis.Accept()
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			// A stopping daemon ends its connections; the bridge answers what
			// was in flight.
			stop := context.AfterFunc(ctx, func() { conn.Close() })
			defer stop()
			sess, err := g.agents.Open(ctx, agent.Client{}, "stdio")
			if err != nil {
				g.log.Error("opening an agent session", "err", err)
				return
			}
			defer sess.Close()
			opts := mcpserver.Options{
				Version: Version, Logger: g.log,
				OnInitialize: func(ctx context.Context, c agent.Client) {
					if err := sess.SetClient(ctx, c); err != nil {
						g.log.Error("recording an agent", "err", err)
					}
					g.log.Info("agent connected", "agent", c.Name, "version", c.Version, "session", sess.ID())
				},
			}
			if err := mcpserver.ServeStream(ctx, sess, conn, conn, opts); err != nil && ctx.Err() == nil {
				g.log.Warn("MCP session ended", "session", sess.ID(), "err", err)
			}
		}()
	}
}

// history is the history's health, for status and the console.
func (g *Gateway) history() api.History {
	h := g.store.Health()
	return api.History{
		Path: g.storeName, Writable: !h.Failing, Cause: h.Cause, Fix: h.Fix,
		Since: h.Since, Last: h.Last, Failures: h.Failures, Recovered: h.Recovered,
	}
}

// Host is the driver host, for wiring the later parts of the gateway.
func (g *Gateway) Host() *driverhost.Host { return g.host }

func apiTask(t history.TaskSummary) api.Task {
	return api.Task{
		ID: t.ID, Agent: t.AgentName, AgentVersion: t.AgentVersion, Device: t.DeviceID, DeviceName: t.DeviceName,
		Text: t.Text, Apps: t.Apps, StartedAt: t.StartedAt, EndedAt: t.EndedAt, Outcome: t.Outcome, Steps: t.Steps,
		LastOutcome: t.LastOutcome, Recording: t.Recording,
	}
}

// consoleAddr is where the web console listens, "" when it is off.
func (g *Gateway) consoleAddr() string {
	if g.console == nil {
		return ""
	}
	return g.console.Addr()
}

// videoAt is a step's place in the recording in milliseconds, -1 for none.
func videoAt(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

func (g *Gateway) driver(name string) (api.Driver, error) {
	for _, d := range g.drivers() {
		if d.Name == name {
			return d, nil
		}
	}
	return api.Driver{}, errors.New("driver " + name + " is not known")
}

func (g *Gateway) drivers() []api.Driver {
	st := g.host.Drivers()
	out := make([]api.Driver, len(st))
	for i, s := range st {
		out[i] = APIDriver(s)
	}
	return out
}

// APIDriver is a driver's status as the local API shows it.
func APIDriver(s driverhost.DriverStatus) api.Driver {
	caps := make([]string, len(s.Capabilities))
	for j, c := range s.Capabilities {
		caps[j] = string(c)
	}
	return api.Driver{
		Name: s.Name, Host: s.Host, Version: s.Version, Path: s.Path, Source: s.Source, Pid: s.Pid, State: string(s.State),
		Restarts: s.Restarts, Devices: s.Devices, Capabilities: caps, LastError: s.LastError, Stderr: s.Stderr,
		StartedAt: s.StartedAt,
	}
}

func (g *Gateway) devices() []api.Device { return APIDevices(g.host.Devices()) }

// autoUnlockPINs is the PIN source of automatic unlock: the OS keychain when
// the person turned it on, else none.
func autoUnlockPINs(on bool, log *slog.Logger) agent.PINSource {
	if !on {
		return nil
	}
	if _, _, err := pin.OS().PIN("pinky-keychain-check"); err != nil {
		log.Warn("automatic unlock is on but cannot read PINs", "err", err)
	} else {
		log.Info("automatic unlock is on: a locked phone an agent acts on is unlocked with its saved PIN")
	}
	return pin.OS()
}
