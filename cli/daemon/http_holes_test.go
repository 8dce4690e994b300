package daemon

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

func TestOriginAllowed(t *testing.T) {
	allowed := allowedOrigins([]string{"127.0.0.1:0", "127.0.0.1:8765"})
	remote := allowedOrigins([]string{"phones.lan:443", "10.0.0.5:443"})
	for _, tt := range []struct {
		origin string
		in     map[string]bool
		want   bool
	}{
		{"http://127.0.0.1:8765", allowed, true},
		{"http://localhost:8765", allowed, true},
		{"HTTP://LOCALHOST:8765", allowed, true},
		{"http://[::1]:8765", allowed, true},
		{"https://127.0.0.1:8765", allowed, true},
		{"http://127.0.0.1:8765/", allowed, true},
		{"http://127.0.0.1:8766", allowed, false},
		{"http://127.0.0.1", allowed, false}, // port 80
		{"http://127.0.0.1:0", allowed, false},
		{"http://evil.example", allowed, false},
		{"http://evil.example:8765", allowed, false},
		{"http://127.0.0.1.evil.example:8765", allowed, false},
		{"http://user@127.0.0.1:8765", allowed, false},
		{"http://127.0.0.1:8765/path", allowed, false},
		{"null", allowed, false},
		{"file://", allowed, false},
		{"ws://127.0.0.1:8765", allowed, false},
		{"https://phones.lan", remote, true}, // port 443
		{"https://10.0.0.5", remote, true},
		{"https://localhost", remote, true},
		{"http://phones.lan", remote, false},
		{"https://evil.example", remote, false},
		{"http://127.0.0.1:8765", nil, false},
	} {
		if got := originAllowed(tt.origin, tt.in); got != tt.want {
			t.Errorf("originAllowed(%q) = %v; want %v", tt.origin, got, tt.want)
		}
	}
}

// TestHTTPForeignOrigin: a request with a foreign Origin is refused with
// 403 before the token is looked at, the right token or not.
func TestHTTPForeignOrigin(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	for _, auth := range []string{"Bearer " + f.token, ""} {
		req, _ := http.NewRequest("POST", f.url, strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Origin", "http://evil.example")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("foreign Origin, auth %q: got HTTP %d; want 403", auth, resp.StatusCode)
		}
	}
}

// TestHTTPTokenMadeReadableAfterLoad: a chmod changes neither the token
// nor its modification time, yet the daemon notices it at the next
// request.
func TestHTTPTokenMadeReadableAfterLoad(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	auth := "Bearer " + f.token
	if resp := post(t, f.url, auth, "", initializeBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("with the token: got HTTP %d; want 200", resp.StatusCode)
	}
	if err := os.Chmod(f.tokenPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if resp := post(t, f.url, auth, "", initializeBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after chmod 644: got HTTP %d; want 401", resp.StatusCode)
	}
	if logs := f.logs.String(); !strings.Contains(logs, "are too open") {
		t.Errorf("the log does not say why the token is refused:\n%s", logs)
	}
	if err := os.Chmod(f.tokenPath, 0o600); err != nil {
		t.Fatal(err)
	}
	if resp := post(t, f.url, auth, "", initializeBody); resp.StatusCode != http.StatusOK {
		t.Errorf("after chmod 600: got HTTP %d; want 200", resp.StatusCode)
	}
}

// TestHTTPResumeByCleanedName: an agent whose name holds controls gets a
// printable name at initialize, the same every time, so its new session
// still takes over the leases its last one left.
func TestHTTPResumeByCleanedName(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	const name = "evil\x1b[2J\nfake card line\u202e"
	a := f.connect(t, name, f.token)
	mustCall(t, a, "phone_connect", connectAndroid)
	if ls := f.agents.Leases(); len(ls) != 1 || ls[0].Agent != `evil\x1b[2J\nfake card line‹U+202E›` {
		t.Fatalf("leases: got %+v; want one held by the cleaned name", ls)
	}
	a.Close()
	waitFor(t, "the lease is parked", func() bool {
		ls := f.agents.Leases()
		return len(ls) == 1 && !ls[0].ParkedUntil.IsZero()
	})
	b := f.connect(t, name, f.token)
	defer b.Close()
	if ls := f.agents.Leases(); len(ls) != 1 || !ls[0].ParkedUntil.IsZero() {
		t.Errorf("leases after the same agent came back: got %+v; want it resumed", ls)
	}
	mustCall(t, b, "phone_observe", map[string]any{"device": "sim-android-1"})
}

// TestHTTPBatchIsRefusedAsABatch: a JSON-RPC batch is valid JSON; in a
// session of 2025-06-18, which has no batches, the answer says batches are
// not taken, not that the body is not JSON. Without a session id the batch
// goes into the client's kept session, of 2025-03-26, which has them: its
// initialize is refused there, the rest served.
func TestHTTPBatchIsRefusedAsABatch(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	resp := post(t, f.url, "Bearer "+f.token, "", initializeBody) // 2025-06-18
	sid := resp.Header.Get("Mcp-Session-Id")
	batch := `[` + initializeBody + `,{"jsonrpc":"2.0","id":9,"method":"ping"}]`
	resp = post(t, f.url, "Bearer "+f.token, sid, batch)
	var got struct {
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || got.Error.Code != -32600 || !strings.Contains(got.Error.Message, "batch") || strings.Contains(got.Error.Message, "not valid json") {
		t.Errorf("a batch: HTTP %d, %+v; want 400 and an invalid request that says batches are not taken", resp.StatusCode, got.Error)
	}
	resp = post(t, f.url, "Bearer "+f.token, "", batch)
	var answers []struct {
		ID     int
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&answers); err != nil || resp.StatusCode != http.StatusOK || len(answers) != 2 {
		t.Fatalf("an id-less batch: HTTP %d, %+v, %v", resp.StatusCode, answers, err)
	}
	for _, a := range answers {
		switch {
		case a.ID == 1 && (a.Error == nil || !strings.Contains(a.Error.Message, "initialize")):
			t.Errorf("initialize in a batch: %+v; want refused", a)
		case a.ID == 9 && a.Result == nil:
			t.Errorf("ping in the batch: %+v; want answered", a)
		}
	}
}
