package adb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
)

// Device runs services on one device. It is cheap; it caches the device's
// feature list after the first successful read.
type Device struct {
	c      *Client
	serial string

	mu       sync.Mutex
	features map[string]bool
}

// Device returns a handle for the device with that serial; an empty serial
// means the only device (adb's -d/-e "any").
func (c *Client) Device(serial string) *Device {
	return &Device{c: c, serial: serial}
}

// Serial returns the device's serial.
func (d *Device) Serial() string { return d.serial }

// hostPrefix is the prefix of host requests about this device.
func (d *Device) hostPrefix() string {
	if d.serial == "" {
		return "host:"
	}
	return "host-serial:" + d.serial + ":"
}

// State returns the device's state (adb get-state).
func (d *Device) State(ctx context.Context) (State, error) {
	s, err := d.c.query(ctx, d.hostPrefix()+"get-state")
	return State(s), err
}

// Features returns the adbd features the device and server share, e.g.
// "shell_v2", "cmd", "stat_v2".
func (d *Device) Features(ctx context.Context) ([]string, error) {
	s, err := d.c.query(ctx, d.hostPrefix()+"features")
	if err != nil {
		return nil, err
	}
	var fs []string
	for f := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		if f != "" {
			fs = append(fs, f)
		}
	}
	d.mu.Lock()
	d.features = make(map[string]bool, len(fs))
	for _, f := range fs {
		d.features[f] = true
	}
	d.mu.Unlock()
	return fs, nil
}

// HasFeature reports whether the device has the feature, reading the
// feature list once.
func (d *Device) HasFeature(ctx context.Context, name string) (bool, error) {
	d.mu.Lock()
	fs := d.features
	d.mu.Unlock()
	if fs == nil {
		if _, err := d.Features(ctx); err != nil {
			return false, err
		}
		d.mu.Lock()
		fs = d.features
		d.mu.Unlock()
	}
	return fs[name], nil
}

// OpenStream opens a raw device service; see Client.OpenStream.
func (d *Device) OpenStream(ctx context.Context, service string) (net.Conn, error) {
	return d.c.OpenStream(ctx, d.serial, service)
}

// ExitUnknown is ShellResult.Exit when the exit code could not be read.
const ExitUnknown = -1

// ShellResult is the outcome of a shell command.
type ShellResult struct {
	Stdout []byte
	// Stderr is empty on devices without shell_v2, where stderr is merged
	// into Stdout.
	Stderr []byte
	// Exit is the command's exit code (0–255), or ExitUnknown.
	Exit int
}

// Shell runs cmd with the device's sh -c and returns its output and exit
// code. The command's stdin is closed. On devices with the shell_v2 feature
// (Android 7+) it uses "shell,v2,raw:" (pipes, no TTY); on older ones
// "shell:", with stderr merged into stdout and the exit code read from a
// marker the command line prints last. Quote arguments with Quote.
func (d *Device) Shell(ctx context.Context, cmd string) (ShellResult, error) {
	v2, err := d.HasFeature(ctx, "shell_v2")
	if err != nil {
		return ShellResult{}, err
	}
	if !v2 {
		return d.shellV1(ctx, cmd)
	}
	cn, err := d.c.transport(ctx, d.serial)
	if err != nil {
		return ShellResult{}, err
	}
	defer cn.Close()
	req := "shell,v2,raw:" + cmd
	if err := cn.request(req); err != nil {
		return ShellResult{}, err
	}
	// Close the command's stdin, as adb does when its own stdin ends.
	if _, err := cn.Write([]byte{shellCloseStdin, 0, 0, 0, 0}); err != nil {
		return ShellResult{}, cn.err(fmt.Errorf("adb shell: %w", err))
	}
	res, err := readShellV2(bufio.NewReader(cn))
	if err != nil {
		return res, cn.err(fmt.Errorf("adb shell %q: %w", cmd, err))
	}
	return res, nil
}

// The shell protocol v2 packet ids (shell_protocol.h).
const (
	shellStdin      = 0
	shellStdout     = 1
	shellStderr     = 2
	shellExit       = 3
	shellCloseStdin = 4
)

// readShellV2 reads shell v2 packets until EOF: a 5-byte header (id, u32 LE
// length) and the data. Unknown ids are skipped, as adb does.
func readShellV2(r io.Reader) (res ShellResult, err error) {
	var stdout, stderr bytes.Buffer
	res.Exit, err = copyShellV2(r, &stdout, &stderr)
	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	return res, err
}

// copyShellV2 reads shell v2 packets until EOF, writing stdout and stderr
// as they come, and returns the exit code (ExitUnknown when none came).
// A write that fails ends the copy with its error.
func copyShellV2(r io.Reader, stdout, stderr io.Writer) (int, error) {
	exit := ExitUnknown
	var h [5]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			switch {
			case err == io.EOF && exit == ExitUnknown:
				return exit, protoErrorf("the shell stream ended without an exit code")
			case err == io.EOF:
				return exit, nil
			}
			return exit, shortPacket(err)
		}
		n := int64(binary.LittleEndian.Uint32(h[1:]))
		var dst io.Writer = io.Discard
		switch h[0] {
		case shellStdout:
			dst = stdout
		case shellStderr:
			dst = stderr
		case shellExit:
			if n < 1 {
				return exit, protoErrorf("empty shell exit packet")
			}
			var code [1]byte
			if _, err := io.ReadFull(r, code[:]); err != nil {
				return exit, shortPacket(err)
			}
			exit = int(code[0])
			n--
		}
		if _, err := copyN(dst, r, n); err != nil {
			return exit, err
		}
	}
}

// copyN copies n bytes of a packet: a short read is a cut stream; a
// failed write is the writer's error.
func copyN(dst io.Writer, r io.Reader, n int64) (int64, error) {
	w := &writeErr{w: dst}
	copied, err := io.CopyN(w, r, n)
	if w.err != nil {
		return copied, w.err
	}
	if err != nil {
		return copied, shortPacket(err)
	}
	return copied, nil
}

// writeErr remembers the error of the writer it wraps.
type writeErr struct {
	w   io.Writer
	err error
}

func (w *writeErr) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	if err != nil {
		w.err = err
	}
	return n, err
}

// ShellTo runs cmd like Shell, but hands its stdout and stderr to the
// writers as they come (a long-running command's log, line by line) and
// returns its exit code. Without shell_v2, stderr is merged into stdout
// and the exit code is ExitUnknown. The command runs until it exits, ctx
// ends (which hangs it up) or a writer fails.
func (d *Device) ShellTo(ctx context.Context, cmd string, stdout, stderr io.Writer) (int, error) {
	v2, err := d.HasFeature(ctx, "shell_v2")
	if err != nil {
		return ExitUnknown, err
	}
	service := "shell:" + cmd
	if v2 {
		service = "shell,v2,raw:" + cmd
	}
	cn, err := d.c.transport(ctx, d.serial)
	if err != nil {
		return ExitUnknown, err
	}
	defer cn.Close() // the connection also closes when ctx ends
	if err := cn.request(service); err != nil {
		return ExitUnknown, err
	}
	if !v2 {
		if _, err := io.Copy(stdout, cn); err != nil {
			return ExitUnknown, cn.err(fmt.Errorf("adb shell %q: %w", cmd, err))
		}
		return ExitUnknown, nil
	}
	if _, err := cn.Write([]byte{shellCloseStdin, 0, 0, 0, 0}); err != nil {
		return ExitUnknown, cn.err(fmt.Errorf("adb shell: %w", err))
	}
	exit, err := copyShellV2(bufio.NewReader(cn), stdout, stderr)
	if err != nil {
		return exit, cn.err(fmt.Errorf("adb shell %q: %w", cmd, err))
	}
	return exit, nil
}

func shortPacket(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return protoErrorf("the shell stream ended inside a packet")
	}
	return err
}

// exitMarker ends the output of a legacy shell command, followed by $?.
const exitMarker = "\x1fpinky-exit:"

func (d *Device) shellV1(ctx context.Context, cmd string) (ShellResult, error) {
	// The subshell keeps "exit N" in cmd from skipping the marker; the
	// newline ends a trailing comment.
	out, err := d.output(ctx, "shell:("+cmd+"\n); echo \""+exitMarker+"$?\"")
	if err != nil {
		return ShellResult{}, err
	}
	return parseShellV1(out), nil
}

func parseShellV1(out []byte) ShellResult {
	res := ShellResult{Stdout: out, Exit: ExitUnknown}
	i := bytes.LastIndex(out, []byte(exitMarker))
	if i < 0 {
		return res
	}
	code := strings.TrimRight(string(out[i+len(exitMarker):]), "\r\n")
	if n, err := strconv.Atoi(code); err == nil && n >= 0 && n <= 255 {
		res.Stdout, res.Exit = out[:i], n
	}
	return res
}

// Exec runs cmd with "exec:" and returns its raw output stream: binary-safe
// stdout with no shell protocol, on a raw PTY (so /dev/tty works, e.g.
// "uiautomator dump /dev/tty"; stderr is merged). Closing the stream hangs
// the command up; so does cancelling ctx, which must last as long as the
// stream.
func (d *Device) Exec(ctx context.Context, cmd string) (io.ReadCloser, error) {
	return d.c.OpenStream(ctx, d.serial, "exec:"+cmd)
}

// ExecOutput runs cmd with "exec:" and returns all its output.
func (d *Device) ExecOutput(ctx context.Context, cmd string) ([]byte, error) {
	return d.output(ctx, "exec:"+cmd)
}

func (d *Device) output(ctx context.Context, service string) ([]byte, error) {
	cn, err := d.c.transport(ctx, d.serial)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	if err := cn.request(service); err != nil {
		return nil, err
	}
	out, err := io.ReadAll(cn)
	if err != nil {
		return out, cn.err(fmt.Errorf("adb %s: %w", service, err))
	}
	return out, nil
}

// Quote returns args as one sh command line, each quoted when needed.
func Quote(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}

func quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Forward makes the server listen at local (on this computer, e.g. "tcp:0",
// "tcp:27183") and connect each client to remote on the device (e.g.
// "localabstract:scrcpy_0001"), like adb forward. It returns the local TCP
// port, the one the server picked for "tcp:0", or 0 for a non-TCP local.
func (d *Device) Forward(ctx context.Context, local, remote string) (int, error) {
	cn, err := d.c.open(ctx)
	if err != nil {
		return 0, err
	}
	defer cn.Close()
	return forwardReply(cn, d.hostPrefix()+"forward:"+local+";"+remote, local)
}

// KillForward removes the forward listening at local.
func (d *Device) KillForward(ctx context.Context, local string) error {
	cn, err := d.c.open(ctx)
	if err != nil {
		return err
	}
	defer cn.Close()
	_, err = forwardReply(cn, d.hostPrefix()+"killforward:"+local, "")
	return err
}

// Reverse makes the device listen at remote (on the device, e.g. "tcp:0",
// "localabstract:NAME") and connect each client to local on this computer,
// like adb reverse. It returns the device's TCP port, the one it picked for
// "tcp:0" (Android 8+), or 0 for a non-TCP remote.
func (d *Device) Reverse(ctx context.Context, remote, local string) (int, error) {
	cn, err := d.c.transport(ctx, d.serial)
	if err != nil {
		return 0, err
	}
	defer cn.Close()
	return forwardReply(cn, "reverse:forward:"+remote+";"+local, remote)
}

// KillReverse removes the reverse forward listening at remote on the device.
func (d *Device) KillReverse(ctx context.Context, remote string) error {
	cn, err := d.c.transport(ctx, d.serial)
	if err != nil {
		return err
	}
	defer cn.Close()
	_, err = forwardReply(cn, "reverse:killforward:"+remote, "")
	return err
}

// ListReverse returns the device's reverse forwards; their Serial is "host".
func (d *Device) ListReverse(ctx context.Context) ([]Forward, error) {
	cn, err := d.c.transport(ctx, d.serial)
	if err != nil {
		return nil, err
	}
	defer cn.Close()
	const req = "reverse:list-forward"
	if err := cn.request(req); err != nil {
		return nil, err
	}
	s, err := cn.readString(req)
	if err != nil {
		return nil, err
	}
	return parseForwards(s), nil
}

// forwardReply sends a forward request and reads its two statuses (accepted,
// then done) and, for a listener at "tcp:0", the port that was picked.
func forwardReply(cn *conn, req, listen string) (int, error) {
	if err := cn.request(req); err != nil {
		return 0, err
	}
	if err := cn.status(req); err != nil {
		return 0, err
	}
	port, ok := strings.CutPrefix(listen, "tcp:")
	if !ok {
		return 0, nil
	}
	if port == "0" {
		var err error
		if port, err = cn.readString(req); err != nil {
			return 0, err
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		if listen == "tcp:0" {
			return 0, protoErrorf("adb %s: bad port %q in the reply", req, port)
		}
		return 0, nil
	}
	return n, nil
}
