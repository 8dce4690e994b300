package android

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// ScrcpyServer is the scrcpy server on this computer: the file pushed to
// phones and its exact version (the server refuses any other).
type ScrcpyServer struct {
	Path    string
	Version string
}

// scrcpyServerPaths are where the scrcpy package installs its server.
var scrcpyServerPaths = []string{
	"/usr/share/scrcpy/scrcpy-server",
	"/usr/local/share/scrcpy/scrcpy-server",
	"/opt/homebrew/share/scrcpy/scrcpy-server",
	"/usr/local/Cellar/scrcpy/scrcpy-server",
	"/snap/scrcpy/current/usr/share/scrcpy/scrcpy-server",
}

// ErrNoScrcpyServer means no scrcpy server was found on this computer.
var ErrNoScrcpyServer = errors.New("no scrcpy server was found on this computer")

// FindScrcpyServer finds the scrcpy server: path when given (the driver's
// command reads it from $SCRCPY_SERVER_PATH), then the scrcpy package's
// install locations. Its version is version when given
// ($SCRCPY_SERVER_VERSION), else the first line of `scrcpy --version`.
func FindScrcpyServer(path, version string) (ScrcpyServer, error) {
	var s ScrcpyServer
	if path != "" {
		if _, err := os.Stat(path); err != nil {
			return s, fmt.Errorf("%w: SCRCPY_SERVER_PATH is %s, where there is none (%v)", ErrNoScrcpyServer, path, err)
		}
		s.Path = path
	} else {
		for _, p := range scrcpyServerPaths {
			if _, err := os.Stat(p); err == nil {
				s.Path = p
				break
			}
		}
	}
	if s.Path == "" {
		return s, fmt.Errorf("%w: SCRCPY_SERVER_PATH is not set, and the scrcpy package is not installed (looked in %s)", ErrNoScrcpyServer, strings.Join(scrcpyServerPaths, ", "))
	}
	s.Version = version
	if s.Version == "" {
		out, err := exec.Command("scrcpy", "--version").Output()
		if err == nil {
			// "scrcpy 3.1 <https://github.com/Genymobile/scrcpy>"
			if f := strings.Fields(firstLine(string(out))); len(f) >= 2 && f[0] == "scrcpy" {
				s.Version = f[1]
			}
		}
	}
	if s.Version == "" {
		return s, fmt.Errorf("the version of %s is unknown: set SCRCPY_SERVER_VERSION to it (scrcpy --version says it)", s.Path)
	}
	if _, err := scrcpy.ParseVersion(s.Version); err != nil {
		return s, fmt.Errorf("%s version %s: %w", filepath.Base(s.Path), s.Version, err)
	}
	return s, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// session is one scrcpy server running on a phone, and the client
// connected to it.
type session struct {
	c       *scrcpy.Client
	cancel  context.CancelFunc
	done    chan struct{} // closed when the server's shell returned
	pumped  chan struct{} // closed when the video stopped (see pump)
	sw, sh  int           // the screen's size (portrait)
	maxSize int           // the video's longer side asked of the server; 0 is the screen's
	log     serverLog     // what the server prints, line by line

	lastFrame stamp // when the last video frame came (WaitIdle)

	mu       sync.Mutex
	sink     func(sdk.VideoPacket) error // the stream watching, or nil
	sinkErr  chan error                  // gets what ended the watch
	config   *sdk.VideoPacket            // the last config packet
	keyWait  []chan [2]sdk.VideoPacket   // waiting for the next key frame, with its config
	ended    string                      // why the server's shell returned, when it failed
	abnormal bool                        // the server exited non-zero (or its status is unknown)
}

// alive reports whether the server still runs: its shell, its video and
// its control socket all still open. Whichever ends first tells that the
// server exited or the phone went away.
func (s *session) alive() bool {
	select {
	case <-s.done:
		return false
	case <-s.c.Done():
		return false
	case <-s.pumped:
		return false
	default:
		return true
	}
}

func (s *session) close() {
	s.c.Close()
	s.cancel()
	<-s.done
}

// serverPath is where the scrcpy server goes on the phone.
const serverPath = "/data/local/tmp/scrcpy-server.jar"

// startSession pushes the scrcpy server when needed, starts it with o, and
// connects to it over a forward tunnel (a stream to its local abstract
// socket through the adb server).
func (d *Driver) startSession(ctx context.Context, p *phone, dev *adb.Device, o scrcpy.Options) (*session, error) {
	found, noScrcpy := d.server()
	if found == nil {
		return nil, noScrcpyErr(dev.Serial(), noScrcpy)
	}
	srv := *found
	if err := d.push(ctx, p, dev, srv); err != nil {
		return nil, err
	}
	// The server deletes its jar when Cleanup is on; the driver keeps it,
	// since the phone's sessions restart.
	o.Cleanup = false
	args, err := scrcpy.ServerArgs(srv.Version, o)
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "scrcpy server arguments: %v", err)
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &session{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		// The server's log comes line by line while it runs: the new
		// display's id is in it, and what START_APP did.
		stdout, stderr := s.log.writer(false), s.log.writer(true)
		exit, err := dev.ShellTo(sctx, strings.Join(args, " "), stdout, stderr)
		stdout.Close()
		stderr.Close()
		s.mu.Lock()
		defer s.mu.Unlock()
		switch {
		case err != nil:
			s.ended = err.Error()
		case exit != 0:
			s.abnormal = true
		}
	}()
	name := scrcpy.SocketName(o.SCID)
	dctx, dcancel := context.WithTimeout(ctx, 15*time.Second)
	defer dcancel()
	c, err := scrcpy.Dial(dctx, srv.Version, o, func(ctx context.Context) (net.Conn, error) {
		select {
		case <-s.done:
			// A server that exited will not listen: stop Dial's retries
			// (ten seconds of them) now.
			dcancel()
			return nil, fmt.Errorf("the scrcpy server exited: %s", s.lastWords())
		default:
		}
		// The stream lives as long as the session: OpenStream closes it
		// when its context ends.
		return dev.OpenStream(sctx, "localabstract:"+name)
	})
	if err != nil {
		cancel()
		<-s.done
		if fix := s.startFix(srv); fix != "" {
			if s.log.has("Aborted") {
				// The jar may have gone (its cleanup deletes it): push it
				// again next time.
				p.pushMu.Lock()
				p.pushed = ""
				p.pushMu.Unlock()
			}
			return nil, sdk.Errorf(sdk.ErrInternal, "%s: the scrcpy server did not start: %s", dev.Serial(), fix)
		}
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: starting scrcpy %s: %v (server said: %s)", dev.Serial(), srv.Version, err, s.lastWords())
	}
	s.c = c
	return s, nil
}

// startFix says what to do about a server that would not start for a
// reason the person fixes on this computer, or "" for any other reason. The
// real server refuses any version but its own ("The server version (4.1)
// does not match the client (3.3.4)", then a stack trace), and app_process
// aborts when it finds no jar or no server class in it.
func (s *session) startFix(srv ScrcpyServer) string {
	if line, ok := s.log.find("does not match the client"); ok {
		theirs := ""
		if _, rest, ok := strings.Cut(line, "The server version ("); ok {
			theirs, _, _ = strings.Cut(rest, ")")
		}
		if theirs != "" {
			return fmt.Sprintf("%s is scrcpy server %s, not %s (%s): set SCRCPY_SERVER_VERSION=%s, or point SCRCPY_SERVER_PATH at the server of scrcpy %s", srv.Path, theirs, srv.Version, line, theirs, srv.Version)
		}
		return fmt.Sprintf("%s is not scrcpy server %s (%s): set SCRCPY_SERVER_VERSION to its version (scrcpy --version says it)", srv.Path, srv.Version, line)
	}
	if s.log.has("Aborted") {
		return fmt.Sprintf("app_process aborted: the phone found no scrcpy server in %s pushed from %s (is SCRCPY_SERVER_PATH a scrcpy-server file?)", serverPath, srv.Path)
	}
	return ""
}

// lastWords is what the server said last, for errors: its last lines of
// stderr (of stdout too when it exited with an error), then why its shell
// ended.
func (s *session) lastWords() string {
	s.mu.Lock()
	ended, abnormal := s.ended, s.abnormal
	s.mu.Unlock()
	last := s.log.tail(3, !abnormal)
	if ended != "" {
		last = append(last, ended)
	}
	if len(last) > 3 {
		last = last[len(last)-3:]
	}
	return strings.Join(last, " / ")
}

// push copies the scrcpy server to the phone once per driver run and file,
// or again when it is missing on the phone or of another size. A file gone
// since the driver last looked makes the driver look now (caps.go), and
// the phone lacks the server: the action goes through adb instead.
func (d *Driver) push(ctx context.Context, p *phone, dev *adb.Device, srv ScrcpyServer) error {
	p.pushMu.Lock()
	defer p.pushMu.Unlock()
	fi, err := os.Stat(srv.Path)
	if errors.Is(err, fs.ErrNotExist) {
		d.scrMu.Lock()
		d.looked = time.Time{}
		d.scrMu.Unlock()
		if _, why := d.server(); why != nil {
			return noScrcpyErr(dev.Serial(), why)
		}
	}
	if err != nil {
		return sdk.Errorf(sdk.ErrInternal, "scrcpy server: %v", err)
	}
	id := pushedID(srv.Path, fi)
	if p.pushed == id {
		return nil
	}
	if st, err := dev.Stat(ctx, serverPath); err == nil && st.Size == fi.Size() {
		p.pushed = id
		return nil
	}
	f, err := os.Open(srv.Path)
	if err != nil {
		return sdk.Errorf(sdk.ErrInternal, "scrcpy server: %v", err)
	}
	defer f.Close()
	if err := dev.Push(ctx, f, serverPath, 0o644, fi.ModTime()); err != nil {
		return mapErr(err)
	}
	p.pushed = id
	return nil
}

// pushedID names a scrcpy server file as pushed: another file (a server
// found again at another path, or installed anew) is pushed again.
func pushedID(path string, fi fs.FileInfo) string {
	return fmt.Sprintf("%s %d %d", path, fi.Size(), fi.ModTime().UnixNano())
}

// control returns the phone's session, starting it when there is none or
// it died. maxSize, when not -1, is the video size a stream wants: a
// session of another size is started again (only a stream asks, and a
// phone has one stream at a time). p.ctlMu is held.
func (d *Driver) control(ctx context.Context, p *phone, dev *adb.Device, maxSize int) (*session, error) {
	if s := p.ctl; s != nil && s.alive() && (maxSize == -1 || maxSize == s.maxSize) {
		return s, nil
	}
	if s := p.ctl; s != nil {
		if !s.alive() {
			d.log.Warn("the scrcpy server died; starting it again", "serial", p.serial, "said", s.lastWords())
		}
		s.close()
		p.ctl = nil
		p.vid.Store(nil)
	}
	if maxSize == -1 {
		maxSize = defaultVideoSize
	}
	o := scrcpy.DefaultOptions()
	o.MaxSize = maxSize
	o.ClipboardAutosync = false
	w, h, err := screenSize(ctx, dev)
	if err != nil {
		return nil, mapErr(fmt.Errorf("%s: %w", p.serial, err))
	}
	// A server that exits at once may be racing the one just closed for
	// the phone's screen capture: try again, twice, a moment later.
	var s *session
	for try := 0; ; try++ {
		if s, err = d.startSession(ctx, p, dev, o); err == nil || try == 2 || sdk.Category(err) != sdk.ErrInternal {
			break
		}
		d.log.Debug("the scrcpy server did not start; trying again", "serial", p.serial, "err", err)
		select {
		case <-ctx.Done():
			return nil, mapErr(ctx.Err())
		case <-time.After(time.Duration(try+1) * 200 * time.Millisecond):
		}
		o.SCID = scrcpy.NewSCID()
	}
	if err != nil {
		return nil, err
	}
	s.sw, s.sh, s.maxSize = w, h, maxSize
	s.pumped = make(chan struct{})
	go s.pump()
	p.ctl = s
	p.vid.Store(s)
	return s, nil
}

// defaultVideoSize is the video's longer side when an action, not a
// stream, starts the session.
const defaultVideoSize = 1280

// pump reads the session's video, always, so that the server never blocks
// and the client's video size (which touches are sized to) stays current;
// it hands the packets to the stream that watches, if one does, and keeps
// the last config packet for the next one.
func (s *session) pump() {
	defer close(s.pumped)
	for {
		pk, err := s.c.ReadPacket()
		s.mu.Lock()
		if err != nil {
			if s.sink != nil {
				s.sinkErr <- err
				s.sink = nil
			}
			s.mu.Unlock()
			return
		}
		if pk.Config {
			c := pk
			s.config = &c
		} else {
			s.lastFrame.now() // the screen changed (scrcpy sends frames only then)
		}
		if pk.KeyFrame && s.config != nil {
			for _, w := range s.keyWait {
				w <- [2]sdk.VideoPacket{*s.config, pk}
			}
			s.keyWait = nil
		}
		sink := s.sink
		s.mu.Unlock()
		if sink != nil {
			if err := sink(pk); err != nil {
				s.mu.Lock()
				if s.sink != nil {
					s.sinkErr <- err
					s.sink = nil
				}
				s.mu.Unlock()
			}
		}
	}
}

// watch makes send the session's stream: it gets the last config packet,
// then every packet, starting at a key frame it asks for. It returns a
// channel that gets the error that ends the watch (the session's end, or
// send's), and a function that stops watching.
func (s *session) watch(send func(sdk.VideoPacket) error) (<-chan error, func(), error) {
	ended := make(chan error, 1)
	s.mu.Lock()
	if s.sink != nil {
		s.mu.Unlock()
		return nil, nil, sdk.Errorf(sdk.ErrBusy, "a video stream of this phone is already running")
	}
	config := s.config
	waitingKey := true
	s.sink = func(pk sdk.VideoPacket) error {
		if pk.Config {
			return send(pk)
		}
		if waitingKey && !pk.KeyFrame {
			return nil // a member starts at a key frame
		}
		waitingKey = false
		return send(pk)
	}
	s.sinkErr = ended
	s.mu.Unlock()
	stop := func() {
		s.mu.Lock()
		if s.sinkErr == ended {
			s.sink, s.sinkErr = nil, nil
		}
		s.mu.Unlock()
	}
	if config != nil {
		if err := send(*config); err != nil {
			stop()
			return nil, nil, err
		}
	}
	if err := s.c.ResetVideo(); err != nil {
		stop()
		return nil, nil, err
	}
	return ended, stop, nil
}

// keyFrame asks the server for a key frame and returns it with the config
// packet before it: together they decode to a picture of the screen.
func (s *session) keyFrame(ctx context.Context) (config, key sdk.VideoPacket, err error) {
	ch := make(chan [2]sdk.VideoPacket, 1)
	s.mu.Lock()
	s.keyWait = append(s.keyWait, ch)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.keyWait = slices.DeleteFunc(s.keyWait, func(w chan [2]sdk.VideoPacket) bool { return w == ch })
		s.mu.Unlock()
	}()
	if err := s.c.ResetVideo(); err != nil {
		return config, key, err
	}
	select {
	case pks := <-ch:
		return pks[0], pks[1], nil
	case <-s.pumped:
		return config, key, fmt.Errorf("the scrcpy server ended: %s", s.lastWords())
	case <-ctx.Done():
		return config, key, fmt.Errorf("no key frame came: %w", ctx.Err())
	}
}

// point maps a point in the screen's pixels to the video's, which touches
// are given in: the video's current size, so after a turn the point is in
// the turned frame (rotate.go).
func (s *session) point(p sdk.Point) (x, y int) {
	w, h := s.c.VideoSize()
	return toVideo(p, s.sw, s.sh, w, h)
}

// screen is the screen's size in the video's orientation (wm size gives
// the natural one).
func (s *session) screen() (int, int) {
	w, h := s.c.VideoSize()
	return turned(s.sw, s.sh, w, h)
}

// onScreen says whether p is on the screen.
func (s *session) onScreen(p sdk.Point) error {
	sw, sh := s.screen()
	if p.X < 0 || p.Y < 0 || (sw > 0 && p.X >= sw) || (sh > 0 && p.Y >= sh) {
		return sdk.Invalid("point (%d,%d) is off the %dx%d screen", p.X, p.Y, sw, sh)
	}
	return nil
}
