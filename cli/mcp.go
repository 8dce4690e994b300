package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/mcpserver"
)

func newMCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve MCP on stdin/stdout for an agent host (starts the daemon when none runs)",
		Long: `Serve the Model Context Protocol on stdin and stdout: this is the command an
agent host (Claude Code, Codex, Cursor…) runs. It is a thin bridge to the
pinky daemon, which it starts in the background when none runs (logging to
$PINKY_HOME/logs/daemon.log; PINKY_ENABLE_DRIVERS=sim or PINKY_SIM=1 gives
that daemon the virtual phones). Stdout carries only JSON-RPC; diagnostics go to stderr.

To add pinky to an agent host, run pinky mcp install --host HOST (claude-code,
codex, cursor, vscode or claude-desktop; --print shows the configuration,
--http points the host to a daemon's URL). pinky skill prints the agent's
guide, and pinky skill --install DIR puts it in the host's skills folder.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bridge(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.AddCommand(newMCPInstallCmd(), newMCPUninstallCmd())
	return cmd
}

// bridge copies JSON-RPC lines between the agent host and the daemon. It
// remembers which requests are unanswered so that, if the daemon goes
// away, each gets a JSON-RPC error instead of a hang; and when no daemon
// can be reached it answers every request with an error.
func bridge(ctx context.Context, in io.Reader, out, errw io.Writer) error {
	b := &bridger{out: out, errw: errw, pending: map[string]json.RawMessage{}}
	conn, err := connectDaemon(ctx, errw)
	if err != nil {
		fmt.Fprintln(errw, "pinky mcp:", err)
		b.down = err
	}
	if conn != nil {
		defer conn.Close()
		go b.fromDaemon(conn)
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, head, err := readLine(r, mcpserver.MaxMessageBytes)
		if err != nil && len(line) == 0 && head == nil {
			break // stdin ended
		}
		if head != nil {
			// Too large for the daemon: answer here, with the id from the
			// line's start, so the request does not hang.
			b.reply(idIn(head), -32600, fmt.Sprintf("message larger than %d bytes", mcpserver.MaxMessageBytes))
			continue
		}
		// A byte-order mark is dropped, so that the request is served; a
		// message nested too deep is answered here (mcpserver.MaxNesting).
		line, refused := mcpserver.PrepareMessage(line)
		if refused != nil {
			if msg, err := json.Marshal(refused); err == nil {
				b.write(msg)
			}
			continue
		}
		if len(line) == 0 {
			continue
		}
		id, isRequest, ok := requestID(line)
		b.mu.Lock()
		down := b.down
		if down == nil && isRequest {
			b.pending[string(id)] = id
		}
		b.mu.Unlock()
		switch {
		case !ok && down != nil:
			b.reply(json.RawMessage("null"), -32700, "parse error: not a JSON-RPC message")
		case down != nil:
			if isRequest {
				b.reply(id, -32000, "the pinky daemon is not available: "+down.Error())
			}
		default:
			if _, err := conn.Write(append(append([]byte(nil), line...), '\n')); err != nil {
				b.lost(fmt.Errorf("writing to the daemon: %w", err))
			}
		}
	}
	// The host closed stdin: answer what it still waits for, then end
	// (closing the connection ends the agent's session and its leases).
	b.drain()
	b.mu.Lock()
	b.closing = true
	b.mu.Unlock()
	return nil
}

// readLine reads one line of at most limit bytes. A longer line is read to
// its end and dropped; then head holds its first 4 KiB, to find its id.
func readLine(r *bufio.Reader, limit int) (line, head []byte, err error) {
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case tooLong:
		case len(line)+len(chunk) > limit:
			tooLong = true
			head = append(line, chunk...)
			head = head[:min(len(head), 4096)]
			line = nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, head, err
	}
}

var idRE = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)`)

// idIn finds a request's id at the start of its line, or null.
func idIn(head []byte) json.RawMessage {
	if m := idRE.FindSubmatch(head); m != nil {
		return json.RawMessage(m[1])
	}
	return json.RawMessage("null")
}

// drain waits until every forwarded request has its answer, or the
// daemon is gone.
func (b *bridger) drain() {
	for {
		b.mu.Lock()
		done := len(b.pending) == 0 || b.down != nil
		b.mu.Unlock()
		if done {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type bridger struct {
	out, errw io.Writer
	wmu       sync.Mutex // one line at a time on stdout
	mu        sync.Mutex
	pending   map[string]json.RawMessage
	down      error
	closing   bool // this side is closing the connection: its end is no loss
}

// fromDaemon copies the daemon's lines to stdout until it goes away.
func (b *bridger) fromDaemon(conn net.Conn) {
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &msg) != nil {
			continue // never let a non-JSON-RPC line reach stdout
		}
		if msg.Method == "" && msg.ID != nil {
			b.mu.Lock()
			delete(b.pending, string(msg.ID))
			b.mu.Unlock()
		}
		b.write(line)
	}
	err := sc.Err()
	if err == nil {
		err = errors.New("the daemon closed the connection")
	}
	b.lost(err)
}

// lost answers every pending request with an error; later ones get one too.
func (b *bridger) lost(err error) {
	b.mu.Lock()
	if b.down != nil || b.closing {
		b.mu.Unlock()
		return
	}
	b.down = err
	pending := b.pending
	b.pending = map[string]json.RawMessage{}
	b.mu.Unlock()
	fmt.Fprintln(b.errw, "pinky mcp: lost the daemon:", err)
	for _, id := range pending {
		b.reply(id, -32000, "the pinky daemon went away during the call: if it acted on a phone, it may or may not have happened; observe before repeating")
	}
}

func (b *bridger) reply(id json.RawMessage, code int, msg string) {
	line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	b.write(line)
}

func (b *bridger) write(line []byte) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.out.Write(append(append([]byte(nil), line...), '\n'))
}

// requestID returns a message's id, whether it is a request (has a method
// and an id), and whether it parsed at all.
func requestID(line []byte) (json.RawMessage, bool, bool) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		return nil, false, false
	}
	return msg.ID, msg.Method != "" && msg.ID != nil && string(msg.ID) != "null", true
}

// connectDaemon dials the daemon's MCP socket, starting the daemon when
// none runs.
func connectDaemon(ctx context.Context, errw io.Writer) (net.Conn, error) {
	dirs, err := home.Resolve()
	if err != nil {
		return nil, err
	}
	conn, err := api.DialPrivate(ctx, dirs.MCPSocket())
	if err == nil {
		return conn, nil
	}
	if !errors.Is(err, api.ErrNoDaemon) {
		return nil, err
	}
	exited, err := startDaemon(dirs)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dirs.Logs(), "daemon.log")
	fmt.Fprintln(errw, "pinky mcp: started the pinky daemon; its log is", logPath)
	deadline := time.Now().Add(15 * time.Second)
	for {
		conn, err := api.DialPrivate(ctx, dirs.MCPSocket())
		if err == nil {
			return conn, nil
		}
		select {
		case <-exited:
			// Another pinky mcp may have started one at the same moment:
			// that daemon wins the lock and opens the socket.
			if conn, err := api.DialPrivate(ctx, dirs.MCPSocket()); err == nil {
				return conn, nil
			}
			return nil, fmt.Errorf("the daemon exited at start; its log %s says why:\n%s", logPath, tail(logPath, 5))
		default:
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon did not open %s within 15 s; see %s", dirs.MCPSocket(), logPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail returns the last n lines of a file, for an error message.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startDaemon starts `pinky daemon` detached from this process, logging to
// $PINKY_HOME/logs/daemon.log. The channel closes if it exits while this
// process runs.
func startDaemon(dirs home.Dirs) (<-chan struct{}, error) {
	if err := dirs.Ensure(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dirs.Logs(), 0o700); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dirs.Logs(), "daemon.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The daemon inherits the environment: PINKY_ENABLE_DRIVERS (or
	// PINKY_SIM=1) and PINKY_DISABLE_DRIVERS choose its drivers.
	cmd := exec.Command(exe, "daemon")
	cmd.Stdout, cmd.Stderr = logf, logf
	detach(cmd) // outlives the agent host's session
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the daemon: %w", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }() //nolint:errcheck // reaps it if it exits while we run
	return exited, nil
}
