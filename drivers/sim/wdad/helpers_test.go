package wdad_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

const iphone = "sim-ios-1"

// rig is a sim driver with its WebDriverAgent face on 127.0.0.1.
type rig struct {
	t    *testing.T
	d    *sim.Driver
	srv  *wdad.Server
	base string
}

// newRig serves the bundled world's iPhone, or cfg's phone of w.
func newRig(t *testing.T, w *sim.World, cfg wdad.Config) *rig {
	t.Helper()
	if w == nil {
		var err error
		if w, err = sim.DefaultWorld(); err != nil {
			t.Fatal(err)
		}
	}
	d := sim.New(w)
	cfg.Driver = d
	if cfg.Logger == nil {
		cfg.Logger = testkit.Logger(t)
	}
	srv, err := wdad.Listen("127.0.0.1:0", cfg)
	if err != nil {
		d.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		d.Close()
	})
	return &rig{t: t, d: d, srv: srv, base: "http://" + srv.Addr().String()}
}

// testWorld is testdata/world.yaml: iPhones that show captured sources.
func testWorld(t *testing.T) *sim.World {
	t.Helper()
	w, err := sim.Load("testdata/world.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// reply is a decoded WebDriverAgent response.
type reply struct {
	status    int
	body      []byte
	value     json.RawMessage
	sessionID *string
}

// wdaErr is the W3C error in a reply's value.
type wdaErr struct {
	Error     string `json:"error"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
}

func (r reply) err(t *testing.T) wdaErr {
	t.Helper()
	var e wdaErr
	if err := json.Unmarshal(r.value, &e); err != nil {
		t.Fatalf("error value %s: %v", r.value, err)
	}
	return e
}

// do sends a request; body is JSON-encoded unless it is a string.
func (g *rig) do(method, path string, body any) reply {
	g.t.Helper()
	return g.doCtx(context.Background(), method, path, body)
}

func (g *rig) doCtx(ctx context.Context, method, path string, body any) reply {
	g.t.Helper()
	r, err := g.send(ctx, method, path, body)
	if err != nil {
		g.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

func (g *rig) send(ctx context.Context, method, path string, body any) (reply, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return reply{}, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		return reply{}, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{status: resp.StatusCode, body: data}
	var env struct {
		Value     json.RawMessage `json:"value"`
		SessionID *string         `json:"sessionId"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return reply{}, err
	}
	r.value, r.sessionID = env.Value, env.SessionID
	return r, nil
}

// ok sends a request that must answer 200 and decodes its value into v.
func (g *rig) ok(method, path string, body any, v any) reply {
	g.t.Helper()
	r := g.do(method, path, body)
	if r.status != http.StatusOK {
		g.t.Fatalf("%s %s: status %d, body %s; want 200", method, path, r.status, r.body)
	}
	if v != nil {
		if err := json.Unmarshal(r.value, v); err != nil {
			g.t.Fatalf("%s %s: value %s: %v", method, path, r.value, err)
		}
	}
	return r
}

// fails sends a request that must fail with status and W3C code.
func (g *rig) fails(method, path string, body any, status int, code string) wdaErr {
	g.t.Helper()
	r := g.do(method, path, body)
	e := r.err(g.t)
	if r.status != status || e.Error != code {
		g.t.Fatalf("%s %s: got %d %q (%s); want %d %q", method, path, r.status, e.Error, e.Message, status, code)
	}
	return e
}

// session creates a session and returns its id.
func (g *rig) session(caps map[string]any) string {
	g.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	var v struct {
		SessionID string `json:"sessionId"`
	}
	r := g.ok("POST", "/session", map[string]any{"capabilities": map[string]any{"alwaysMatch": caps, "firstMatch": []any{map[string]any{}}}}, &v)
	if v.SessionID == "" || r.sessionID == nil || *r.sessionID != v.SessionID {
		g.t.Fatalf("POST /session: value %s, envelope sessionId %v; want the same new id in both", r.value, r.sessionID)
	}
	return v.SessionID
}

// unlock unlocks the bundled iPhone through the driver.
func (g *rig) unlock() {
	g.t.Helper()
	if err := g.d.Unlock(context.Background(), iphone, "1234"); err != nil {
		g.t.Fatal(err)
	}
}

// simScreen is the sim's own view of the phone's screen.
func (g *rig) simScreen(id string) *sdk.Screen {
	g.t.Helper()
	s, err := g.d.Screen(context.Background(), id, 0)
	if err != nil {
		g.t.Fatal(err)
	}
	return s
}

// sourceJSON reads /source?format=json and parses it as the iOS driver does.
func (g *rig) sourceJSON(sid string) *sdk.Screen {
	g.t.Helper()
	r := g.ok("GET", "/session/"+sid+"/source?format=json", nil, nil)
	s, err := dump.ParseWDA(r.body)
	if err != nil {
		g.t.Fatalf("ParseWDA(json source): %v\n%s", err, r.body)
	}
	return s
}

// sourceXML reads /source?format=xml and returns the XML.
func (g *rig) sourceXML(sid string) string {
	g.t.Helper()
	var x string
	g.ok("GET", "/session/"+sid+"/source?format=xml", nil, &x)
	return x
}

// find returns the first element whose text, label, identifier or hint is want.
func find(s *sdk.Screen, want string) (sdk.Element, bool) {
	for _, e := range s.Elements {
		if e.Text == want || e.ContentDescription == want || e.ResourceID == want || e.Hint == want {
			return e, true
		}
	}
	return sdk.Element{}, false
}

// has reports whether an element shows want.
func has(s *sdk.Screen, want string) bool {
	_, ok := find(s, want)
	return ok
}

// tapOn taps the middle of the element showing what, in points from the
// JSON source, as a driver would.
func (g *rig) tapOn(sid, what string) {
	g.t.Helper()
	e, ok := find(g.sourceJSON(sid), what)
	if !ok {
		g.t.Fatalf("tap %q: not in the source", what)
	}
	c := e.Bounds.Center()
	g.ok("POST", "/session/"+sid+"/wda/tap", map[string]any{"x": c.X, "y": c.Y}, nil)
}

// activeApp is /wda/activeAppInfo's bundleId.
func (g *rig) activeApp() string {
	g.t.Helper()
	var v struct {
		BundleID string `json:"bundleId"`
	}
	g.ok("GET", "/wda/activeAppInfo", nil, &v)
	return v.BundleID
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// pngSize decodes a base64 PNG and returns its size.
func pngSize(t *testing.T, enc string) (int, int) {
	t.Helper()
	data, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		t.Fatalf("screenshot is not base64: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	return cfg.Width, cfg.Height
}

// on returns the rig reporting to t, for subtests.
func (g *rig) on(t *testing.T) *rig {
	c := *g
	c.t = t
	return &c
}
