package ios

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestTreeDepth(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want int
	}{
		{"application alone", `{"type":"Application","rect":{"x":0}}`, 0},
		{"one child", `{"type":"Application","rect":{"x":0},"children":[{"type":"Window","rect":{"x":0}}]}`, 1},
		{"braces in strings", `{"type":"Application","label":"{{{\"}}}{","rect":{"x":0}}`, 0},
		{"deep", deepTree(7, "leaf"), 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := treeDepth([]byte(tt.src)); got != tt.want {
				t.Errorf("treeDepth = %d; want %d", got, tt.want)
			}
		})
	}
}

// deepTree is a JSON page source of an application with a chain of depth
// elements below it, the deepest a static text labelled leaf.
func deepTree(depth int, leaf string) string {
	rect := `"rect":{"x":0,"y":0,"width":390,"height":844}`
	var b strings.Builder
	b.WriteString(`{"type":"Application","name":"Deep","label":"Deep","isEnabled":"1",` + rect)
	for i := 1; i <= depth; i++ {
		typ, label := "Other", fmt.Sprintf("level %d", i)
		if i == depth {
			typ, label = "StaticText", leaf
		}
		fmt.Fprintf(&b, `,"children":[{"type":%q,"label":%q,"isEnabled":"1",%s`, typ, label, rect)
	}
	for i := 1; i <= depth; i++ {
		b.WriteString("}]")
	}
	b.WriteString("}")
	return b.String()
}

// recordingWDA is a WebDriverAgent that records the settings and source
// requests it gets and serves a tree of a fixed depth, cut at its
// snapshotMaxDepth as XCTest cuts it. Like WDA, a new session starts with
// the default settings.
type recordingWDA struct {
	srv   *httptest.Server
	depth int // the tree's depth

	mu       sync.Mutex
	session  string
	sessions int
	maxDepth int
	log      []string // "settings {…}" and "source QUERY", in order
}

func newRecordingWDA(t *testing.T, depth int) *recordingWDA {
	f := &recordingWDA{depth: depth, maxDepth: 50}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// restart forgets the session, as a relaunched WebDriverAgent does.
func (f *recordingWDA) restart() {
	f.mu.Lock()
	f.session = ""
	f.mu.Unlock()
}

func (f *recordingWDA) entries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.log...)
}

func (f *recordingWDA) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	answer := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"value": v, "sessionId": f.session})
	}
	path := r.URL.Path
	if rest, ok := strings.CutPrefix(path, "/session/"); ok {
		id, sub, _ := strings.Cut(rest, "/")
		if id != f.session || f.session == "" {
			answer(http.StatusNotFound, map[string]any{"error": "invalid session id", "message": "Session does not exist"})
			return
		}
		path = "/" + sub
	}
	switch {
	case r.Method == http.MethodPost && path == "/session":
		f.sessions++
		f.session = fmt.Sprintf("S%d", f.sessions)
		f.maxDepth = 50 // FBConfiguration resetSessionSettings
		answer(http.StatusOK, map[string]any{"sessionId": f.session, "capabilities": map[string]any{}})
	case path == "/appium/settings" && r.Method == http.MethodPost:
		var body struct {
			Settings map[string]any `json:"settings"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if d, ok := body.Settings["snapshotMaxDepth"].(float64); ok {
			f.maxDepth = int(d)
		}
		keys, _ := json.Marshal(body.Settings)
		f.log = append(f.log, "settings "+string(keys))
		answer(http.StatusOK, body.Settings)
	case path == "/source":
		f.log = append(f.log, "source "+r.URL.RawQuery)
		leaf := "leaf"
		if f.maxDepth < f.depth {
			leaf = "cut here" // the element at the limit, its children left out
		}
		answer(http.StatusOK, json.RawMessage(deepTree(min(f.depth, f.maxDepth), leaf)))
	case path == "/status":
		answer(http.StatusOK, map[string]any{"ready": true, "message": "WebDriverAgent is ready to accept commands"})
	case path == "/wda/locked":
		answer(http.StatusOK, false)
	case path == "/wda/activeAppInfo":
		answer(http.StatusOK, map[string]any{"bundleId": "com.example.deep", "name": "Deep", "pid": 7})
	case path == "/wda/screen":
		answer(http.StatusOK, map[string]any{"screenSize": map[string]any{"width": 390, "height": 844}, "scale": 3})
	case path == "/wda/device/info":
		answer(http.StatusOK, map[string]any{"name": "Deep iPhone", "model": "iPhone"})
	default:
		answer(http.StatusNotFound, map[string]any{"error": "unknown command", "message": "Unhandled endpoint: " + r.URL.Path})
	}
}

// recordingDriver is a driver of one phone whose WDA is f.
func recordingDriver(t *testing.T, f *recordingWDA, stock bool) *Driver {
	t.Helper()
	path := filepath.Join(t.TempDir(), config.FileName)
	if err := config.Save(path, &config.File{Phones: []config.Phone{{ID: "deep", Name: "Deep iPhone", WDA: f.srv.URL}}}); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Path: path, Poll: 100 * time.Millisecond, StockWDA: stock, Logger: testkit.Logger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	testkit.WaitUntil(t, "the driver knows the phone", func() bool {
		_, err := d.phone("deep")
		return err == nil
	})
	return d
}

// hasLeaf reports whether the screen holds the deepest element.
func hasLeaf(d *Driver, t *testing.T) bool {
	t.Helper()
	s, err := d.Screen(context.Background(), "deep", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Elements {
		if e.Text == "leaf" || e.ContentDescription == "leaf" {
			return true
		}
	}
	return false
}

const wantSettings = `settings {"animationCoolOffTimeout":0,"snapshotMaxDepth":60,"waitForIdleTimeout":0}`

// TestSessionSettings checks that the driver sets its settings in a new
// session before its first source, asks the source without the attributes
// it does not read, and sets the settings again in the session it makes
// after WDA restarted.
func TestSessionSettings(t *testing.T) {
	f := newRecordingWDA(t, 10)
	d := recordingDriver(t, f, false)
	if !hasLeaf(d, t) {
		t.Error("a tree 10 deep lost its deepest element")
	}
	const source = "source format=json&excluded_attributes=frame%2CnativeFrame%2Caccessible%2CnativeAccessibilityElement%2Ctraits%2CminValue%2CmaxValue"
	want := []string{wantSettings, source}
	if got := f.entries(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("WDA got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	f.restart()
	hasLeaf(d, t)
	want = append(want, wantSettings, source)
	if got := f.entries(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after a restart WDA got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestStockSettings checks that Config.StockWDA leaves WDA's settings and
// the source's attributes alone.
func TestStockSettings(t *testing.T) {
	f := newRecordingWDA(t, 10)
	d := recordingDriver(t, f, true)
	hasLeaf(d, t)
	if got, want := strings.Join(f.entries(), "\n"), "source format=json"; got != want {
		t.Errorf("WDA got\n%s\nwant\n%s", got, want)
	}
}

// TestDeepTree checks the depth detection: a tree that reaches the
// session's snapshotMaxDepth is read again deeper, the deeper limit holds
// in the session WDA makes after a restart, and a shallow tree brings it
// back down.
func TestDeepTree(t *testing.T) {
	tests := []struct {
		name  string
		depth int
		leaf  bool // the deepest element is read
		reads int  // sources read
	}{
		{"within the base depth", baseDepth - 1, true, 1},
		{"at the base depth", baseDepth, true, 2},
		{"beyond the base depth", 80, true, 2},
		{"beyond the deepest limit", deepDepth + 5, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newRecordingWDA(t, tt.depth)
			d := recordingDriver(t, f, false)
			if got := hasLeaf(d, t); got != tt.leaf {
				t.Errorf("deepest element read: %v; want %v", got, tt.leaf)
			}
			reads := 0
			for _, e := range f.entries() {
				if strings.HasPrefix(e, "source ") {
					reads++
				}
			}
			if reads != tt.reads {
				t.Errorf("%d sources read; want %d (%q)", reads, tt.reads, f.entries())
			}
		})
	}
	t.Run("kept across a restart, lowered by a shallow tree", func(t *testing.T) {
		f := newRecordingWDA(t, 80)
		d := recordingDriver(t, f, false)
		hasLeaf(d, t)
		f.restart()
		n := len(f.entries())
		if !hasLeaf(d, t) {
			t.Error("after a restart the deepest element is lost")
		}
		if got := f.entries()[n:]; len(got) != 2 || !strings.Contains(got[0], `"snapshotMaxDepth":120`) {
			t.Errorf("after a restart WDA got %q; want the settings at depth 120, then one source", got)
		}
		f.mu.Lock()
		f.depth = 5
		f.mu.Unlock()
		n = len(f.entries())
		hasLeaf(d, t)
		if got := f.entries()[n:]; len(got) != 2 || got[1] != `settings {"snapshotMaxDepth":60}` {
			t.Errorf("after a shallow tree WDA got %q; want a source, then depth 60", got)
		}
	})
}
