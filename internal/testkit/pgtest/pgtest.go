// Package pgtest runs a real PostgreSQL server for a package's tests:
// Debian's postgresql package (initdb and postgres from
// /usr/lib/postgresql/VERSION/bin, or from PATH), started on a free port of
// 127.0.0.1 with its data in a folder of its own under the temporary
// folder. One server serves every test of the test binary; each test gets a
// new, empty database of its own (New), dropped when the test ends. The
// package's TestMain stops the server after the tests (Main).
//
// When the binaries are missing, a test that asks for a database is
// skipped, except in CI (CI=true), where scripts/test-deps.sh installs them
// and the test fails. initdb refuses to run as root: as root, the server
// runs as the postgres system user that Debian's package creates.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// startTimeout bounds initdb and the server's start.
const startTimeout = 60 * time.Second

var (
	once    sync.Once
	shared  *server
	missing string // why the binaries were not found
	failure error  // why the server did not start
	dbs     atomic.Int64
)

// A TestingM is what Main wraps and returns: *testing.M, or what a leak
// checker such as goleak.VerifyTestMain takes.
type TestingM interface{ Run() int }

// Main wraps a package's tests so that the shared server, if a test started
// it, stops after them: os.Exit(pgtest.Main(m).Run()), or
// goleak.VerifyTestMain(pgtest.Main(m)).
func Main(m TestingM) TestingM { return runner{m} }

type runner struct{ m TestingM }

func (r runner) Run() int {
	code := r.m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stopping the server: %v\n", err)
		}
	}
	return code
}

// New returns the URL of a new, empty database on the shared server, such
// as postgres://postgres@127.0.0.1:PORT/pinky_3?sslmode=disable, which
// connects without a password. The database is dropped when the test ends.
func New(t testing.TB) string {
	t.Helper()
	once.Do(func() { shared, missing, failure = start() })
	switch {
	case missing != "" && os.Getenv("CI") == "true":
		t.Fatalf("%s: scripts/test-deps.sh installs Debian's postgresql", missing)
	case missing != "":
		t.Skipf("%s (make test installs Debian's postgresql)", missing)
	case failure != nil:
		t.Fatalf("the PostgreSQL test server did not start: %v", failure)
	}
	name := fmt.Sprintf("pinky_%d", dbs.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := shared.admin(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
		defer cancel()
		// FORCE ends the connections a failed test left open.
		if err := shared.admin(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return shared.url(name)
}

// A server is the running postgres process.
type server struct {
	dir  string // the server's folder: data/, the socket, the log
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // how it exited, once done is closed
	mu   sync.Mutex    // one admin statement at a time
}

// binDir finds the folder of initdb and postgres: Debian's newest version,
// else the one on PATH.
func binDir() (string, bool) {
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	slices.SortFunc(found, func(a, b string) int { return version(a) - version(b) })
	if len(found) > 0 {
		return filepath.Dir(found[len(found)-1]), true
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), true
	}
	return "", false
}

// version reads VERSION from /usr/lib/postgresql/VERSION/bin/initdb.
func version(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// start initialises a data folder and starts the server; missing says
// which binaries are not installed.
func start() (_ *server, missing string, _ error) {
	bin, ok := binDir()
	if !ok {
		return nil, "PostgreSQL's initdb is not installed (in /usr/lib/postgresql/*/bin or on PATH)", nil
	}
	dir, err := os.MkdirTemp("", "pinky-pgtest-")
	if err != nil {
		return nil, "", err
	}
	attr, err := procAttr(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, "", err
	}
	env := []string{"HOME=" + dir, "LC_ALL=C", "PATH=" + os.Getenv("PATH")}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync")
	initdb.Env, initdb.SysProcAttr = env, attr
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("initdb: %v: %s", err, out)
	}
	// Another program may take the free port before the server does: try
	// another.
	for range 3 {
		s, err := launch(ctx, bin, dir, env, attr)
		if err == nil {
			return s, "", nil
		}
		if !strings.Contains(err.Error(), "already in use") {
			os.RemoveAll(dir)
			return nil, "", err
		}
	}
	os.RemoveAll(dir)
	return nil, "", errors.New("postgres found no free port in 3 tries")
}

// launch starts postgres on the initialised data folder in dir, on a free
// port, and waits until it accepts connections; when it does not, launch
// stops it and leaves dir as it is.
func launch(ctx context.Context, bin, dir string, env []string, attr *syscall.SysProcAttr) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	// fsync off: the tests need a server that commits, not one that
	// survives a power cut, and syncing makes every CREATE DATABASE slow.
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"), "-p", strconv.Itoa(port),
		"-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB")
	cmd.Env, cmd.SysProcAttr = env, attr
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	s := &server{dir: dir, port: port, cmd: cmd, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	if err := s.ready(ctx); err != nil {
		s.halt()
		return nil, err
	}
	return s, nil
}

// ready waits until the server accepts connections.
func (s *server) ready(ctx context.Context) error {
	for {
		err := s.admin(ctx, "SELECT 1")
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited (%v): %s", s.err, s.log())
		case <-ctx.Done():
			return fmt.Errorf("postgres did not accept connections: %v: %s", err, s.log())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *server) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return strings.TrimSpace(string(b))
}

func (s *server) url(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// admin runs one statement in the postgres database; CREATE and DROP
// DATABASE cannot run in a transaction, so each gets a connection of its
// own.
func (s *server) admin(ctx context.Context, sql string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// stop shuts the server down and removes its folder.
func (s *server) stop() error {
	return errors.Join(s.halt(), os.RemoveAll(s.dir))
}

// halt shuts the server down (SIGINT is PostgreSQL's fast shutdown) and
// kills it if it lingers.
func (s *server) halt() error {
	if s.cmd.Process.Signal(syscall.SIGINT) != nil {
		s.cmd.Process.Kill() // it had exited, or the system has no SIGINT (Windows)
		<-s.done
		return nil
	}
	select {
	case <-s.done:
		return nil
	case <-time.After(20 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		return errors.New("postgres did not stop in 20 s: killed")
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
