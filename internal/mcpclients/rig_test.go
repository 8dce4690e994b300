package mcpclients

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// device is the virtual phone the tests use.
const device = "sim-android-1"

// nodeDir is the folder of the pinned npm packages and the node scripts.
var nodeDir = filepath.Join(e2e.Root(), "internal", "mcpclients", "testdata", "node")

// npmPackages are what the tests load from testdata/node/node_modules.
var npmPackages = []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector",
	"@modelcontextprotocol/conformance", "supergateway"}

// The least node the Inspector (2.x) runs on; the suite needs 22 too.
const nodeMajor, nodeMinor = 22, 19

// needNode returns the path of a node of version 22.19 or later once it
// and the pinned npm packages are installed: the one scripts/test-deps.sh
// put in testdata/node/.node, else the system's. Without them it skips
// the test, or fails it in CI.
func needNode(t *testing.T) string {
	t.Helper()
	node := filepath.Join(nodeDir, ".node", "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		node = testdep.Need(t, "node")
	}
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format+": scripts/test-deps.sh installs it", args...)
		}
		t.Skipf(format+" (make test installs it)", args...)
	}
	out, err := exec.Command(node, "-p", "process.versions.node").Output()
	v := strings.Split(strings.TrimSpace(string(out)), ".")
	major, _ := strconv.Atoi(v[0])
	minor := 0
	if len(v) > 1 {
		minor, _ = strconv.Atoi(v[1])
	}
	if err != nil || major < nodeMajor || (major == nodeMajor && minor < nodeMinor) {
		missing("%s is not node %d.%d or later (%s, %v)", node, nodeMajor, nodeMinor, strings.TrimSpace(string(out)), err)
	}
	for _, p := range npmPackages {
		if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", filepath.FromSlash(p), "package.json")); err != nil {
			missing("npm package %s is not installed in %s", p, nodeDir)
		}
	}
	return node
}

// rig is a daemon with the virtual phones and MCP over HTTP, its phone
// unlocked, and what a client needs to reach it either way.
type rig struct {
	e     *e2e.Env
	node  string
	url   string // MCP over HTTP, which wants the bearer token
	token string
	home  string // $HOME of the node tools (the Inspector keeps a catalog there)
}

// newRig starts `pinky daemon --sim --http 127.0.0.1:0` in a private data
// folder and unlocks the test's phone, as the person would.
func newRig(t *testing.T) *rig {
	t.Helper()
	node := needNode(t)
	e := e2e.New(t)
	tok, errs, code := e.Run("token")
	if code != 0 {
		t.Fatalf("pinky token: exit %d: %s", code, errs)
	}
	e.Daemon("--sim", "--console", "off", "--http", "127.0.0.1:0")
	var st api.Status
	e.JSON(&st, "status")
	if st.HTTP == "" {
		t.Fatalf("pinky status: no MCP over HTTP address in %+v", st)
	}
	e.Unlock(device)
	return &rig{e: e, node: node, url: "http://" + st.HTTP + "/mcp", token: strings.TrimSpace(tok), home: t.TempDir()}
}

// stdioEnv is the environment `pinky mcp` needs to reach the rig's daemon.
func (r *rig) stdioEnv() []string {
	return []string{"PINKY_HOME=" + r.e.Home, "XDG_RUNTIME_DIR=", "PATH=/usr/bin:/bin", "HOME=" + r.home}
}

// nodeCmd is node running a script or a package's program of testdata/node.
func (r *rig) nodeCmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, r.node, args...)
	c.Dir = nodeDir
	c.Env = append(os.Environ(), "HOME="+r.home, "XDG_RUNTIME_DIR=", "NO_COLOR=1")
	c.WaitDelay = 5 * time.Second
	return c
}

// run runs node with args and returns its stdout and stderr and its exit
// code; it fails the test only when node cannot run, or runs past limit.
func (r *rig) run(t *testing.T, limit time.Duration, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(testkit.Context(t), testkit.Scaled(limit))
	defer cancel()
	c := r.nodeCmd(ctx, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	if ctx.Err() != nil {
		t.Fatalf("node %v: not done within %s\nstdout: %s\nstderr: %s", args, limit, out.String(), errb.String())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("node %v: %v", args, err)
	}
	return out.String(), errb.String(), 0
}

// tokenProxy serves the rig's MCP over HTTP on another loopback address,
// adding the bearer token to every request, for a client that cannot send
// one (the conformance suite). It maps its own address to the daemon's in
// the Host and Origin headers, as a proxy in front of a server maps its
// public name, so that a client naming the address it was given is served;
// any other Host or Origin passes unchanged, and streams are flushed as
// they come.
func (r *rig) tokenProxy(t *testing.T) string {
	t.Helper()
	target, err := url.Parse(r.url)
	if err != nil {
		t.Fatal(err)
	}
	var own string // the proxy's port
	toDaemon := func(hostport string) string {
		host, port, err := net.SplitHostPort(hostport)
		if err != nil || port != own || (host != "127.0.0.1" && host != "localhost") {
			return hostport
		}
		return net.JoinHostPort(host, target.Port())
	}
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path, pr.Out.URL.RawPath = target.Path, ""
			pr.Out.Host = toDaemon(pr.In.Host)
			if o, ok := strings.CutPrefix(pr.In.Header.Get("Origin"), "http://"); ok {
				pr.Out.Header.Set("Origin", "http://"+toDaemon(o))
			}
			pr.Out.Header.Set("Authorization", "Bearer "+r.token)
		},
		FlushInterval: -1,
	}
	srv := httptest.NewUnstartedServer(p)
	_, own, _ = net.SplitHostPort(srv.Listener.Addr().String())
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

var bridgeListening = regexp.MustCompile(`bridge listening on (127\.0\.0\.1:\d+)`)

// bridge starts supergateway (testdata/node/bridge.mjs) in its stateful
// mode: each MCP session over HTTP is one `pinky mcp` over stdio, as an
// agent host would spawn it. It returns the bridge's MCP URL.
func (r *rig) bridge(t *testing.T) string {
	t.Helper()
	c := r.nodeCmd(context.Background(), "bridge.mjs", "--stdio", e2e.Bin.Pinky+" mcp",
		"--outputTransport", "streamableHttp", "--stateful", "--port", "0", "--logLevel", "none")
	c.Env = append(c.Env, r.stdioEnv()...)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &testkit.Buffer{}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.Write(append(sc.Bytes(), '\n'))
			if m := bridgeListening.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		c.Process.Signal(os.Interrupt) //nolint:errcheck // it may have exited
		done := make(chan struct{})
		go func() { c.Wait(); close(done) }() //nolint:errcheck // its exit status is the test's no longer
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.Process.Kill() //nolint:errcheck // stuck: end it
			<-done
		}
		if t.Failed() {
			t.Logf("bridge's log:\n%s", logs.String())
		}
	})
	select {
	case a := <-addr:
		return "http://" + a + "/mcp"
	case <-time.After(testkit.Scaled(60 * time.Second)):
		t.Fatalf("the bridge did not listen within 60 s:\n%s", logs.String())
	}
	return ""
}
