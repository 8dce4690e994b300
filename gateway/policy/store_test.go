package policy

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testkit"
)

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestEnsureDefault(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, PolicyFile)
	created, err := EnsureDefault(path)
	if err != nil || !created {
		t.Fatalf("EnsureDefault: got %v, %v; want true, nil", created, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: got %v; want 0600", fi.Mode().Perm())
	}
	// A second start keeps the person's file.
	writeFile(t, path, "rules: [{decision: deny}]\n")
	if created, err := EnsureDefault(path); err != nil || created {
		t.Fatalf("EnsureDefault again: got %v, %v; want false, nil", created, err)
	}
	if b, _ := os.ReadFile(path); string(b) != "rules: [{decision: deny}]\n" {
		t.Errorf("EnsureDefault overwrote the file: %q", b)
	}
	if _, err := EnsureDefault(filepath.Join(home, "no", "such", "dir", PolicyFile)); err == nil {
		t.Error("EnsureDefault in a missing folder: got no error")
	}
}

// The default file must decide what its comments say.
func TestDefaultPolicy(t *testing.T) {
	home := t.TempDir()
	if _, err := EnsureDefault(filepath.Join(home, PolicyFile)); err != nil {
		t.Fatal(err)
	}
	p, err := Load(home)
	if err != nil {
		t.Fatalf("Load of the default policy: %v", err)
	}
	for _, c := range Commits {
		if got := p.Decide(Request{App: "com.whatsapp", Device: "d", Agent: "a", Action: "tap", Commit: c}); got.Decision != Ask {
			t.Errorf("commit %s: got %+v; want ask", c, got)
		}
	}
	for _, a := range Actions {
		want := Allow
		if a == "files_push" {
			want = Ask
		}
		if got := p.Decide(Request{App: "com.whatsapp", Device: "d", Agent: "a", Action: a}); got.Decision != want {
			t.Errorf("action %s: got %+v; want %s", a, got, want)
		}
	}
	blocked := map[string]bool{"banking": true, "wallets": true, "password_managers": true, "authenticators": true}
	for id, cat := range p.apps {
		got := p.Decide(Request{App: id, Action: "read"})
		if blocked[cat] != (got.Code == CodeBlockedApp && got.Decision == Deny) {
			t.Errorf("%s (%s): got %+v; want blocked %v", id, cat, got, blocked[cat])
		}
	}
	if got := p.Decide(Request{App: "com.pinky.sim.bank", Action: "launch"}); got.Code != CodeBlockedApp {
		t.Errorf("the virtual Bank: got %+v; want blocked", got)
	}
	if got := p.Decide(Request{App: "com.google.android.apps.authenticator2", Action: "read"}); got.Code != CodeBlockedApp {
		t.Errorf("the virtual Authenticator: got %+v; want blocked", got)
	}
	// Read-only mode is off.
	if got := p.Decide(Request{Device: "sim-android-1", Action: "tap"}); got.Decision != Allow {
		t.Errorf("a plain tap: got %+v; want allow", got)
	}
}

const (
	goodPolicy  = "rules:\n  - name: all\n    decision: allow\n"
	otherPolicy = "rules:\n  - name: nothing\n    decision: deny\n"
	badPolicy   = "rules:\n  - name: all\n    decision: alow\n"
)

func TestStoreReload(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, PolicyFile)
	writeFile(t, path, goodPolicy)
	s, err := LoadStore(home)
	if err != nil {
		t.Fatal(err)
	}
	tap := Request{Action: "tap"}
	if got := s.Current().Decide(tap); got.Decision != Allow {
		t.Fatalf("got %+v; want allow", got)
	}

	// A broken edit: reported with the file and line, the last good policy
	// stays.
	writeFile(t, path, badPolicy)
	err = s.Reload()
	if err == nil || !strings.Contains(err.Error(), path+":3: unknown decision") || !strings.Contains(err.Error(), "last good") {
		t.Errorf("Reload of a broken edit: got %v; want the file, line 3 and the last good policy", err)
	}
	if got := s.Current().Decide(tap); got.Decision != Allow || got.Rule != "all" {
		t.Errorf("after a broken edit: got %+v; want the last good policy's allow", got)
	}

	// A broken app table is a broken policy too.
	writeFile(t, path, otherPolicy)
	writeFile(t, filepath.Join(home, AppsFile), "banks: [com.b]\n")
	if err := s.Reload(); err == nil || !strings.Contains(err.Error(), filepath.Join(home, AppsFile)+":1:") {
		t.Errorf("Reload with a broken apps.yaml: got %v; want its file and line", err)
	}
	if got := s.Current().Decide(tap); got.Rule != "all" {
		t.Errorf("after a broken apps.yaml: got %+v; want the last good policy", got)
	}

	// A good edit is picked up, with the person's app table.
	writeFile(t, filepath.Join(home, AppsFile), "banking: [com.b]\n")
	if err := s.Reload(); err != nil {
		t.Fatalf("Reload of a good edit: %v", err)
	}
	if got := s.Current().Decide(tap); got.Decision != Deny || got.Rule != "nothing" {
		t.Errorf("after a good edit: got %+v; want the new deny", got)
	}
	if got := s.Current().Category("com.b"); got != "banking" {
		t.Errorf("Category from apps.yaml: got %q; want banking", got)
	}

	// A deleted file keeps the last good policy.
	os.Remove(path)
	if err := s.Reload(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Reload of a deleted policy: got %v; want not exist", err)
	}
	if got := s.Current().Decide(tap); got.Rule != "nothing" {
		t.Errorf("after a delete: got %+v; want the last good policy", got)
	}
}

func TestLoadStoreFailsWithoutAGoodPolicy(t *testing.T) {
	home := t.TempDir()
	if s, err := LoadStore(home); err == nil || s != nil || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("LoadStore with no policy: got %v, %v; want no store and not exist", s, err)
	}
	writeFile(t, filepath.Join(home, PolicyFile), badPolicy)
	s, err := LoadStore(home)
	if err == nil || s != nil {
		t.Fatalf("LoadStore with a broken policy: got %v, %v; want no store and an error", s, err)
	}
	if !strings.Contains(err.Error(), filepath.Join(home, PolicyFile)+":3:") {
		t.Errorf("LoadStore with a broken policy: got %v; want the file and line", err)
	}
}

func TestWatch(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, PolicyFile)
	writeFile(t, path, goodPolicy)
	s, err := LoadStore(home)
	if err != nil {
		t.Fatal(err)
	}
	s.every = 5 * time.Millisecond
	var logs testkit.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Watch(ctx, log); close(done) }()
	defer func() { cancel(); <-done }()

	waitFor := func(what string, ok func() bool) {
		t.Helper()
		if !testkit.Poll(testkit.Limit, ok) {
			t.Fatalf("%s: not within %s; logs:\n%s", what, testkit.Limit, logs.String())
		}
	}
	writeFile(t, path, badPolicy)
	waitFor("the ERROR", func() bool { return strings.Contains(logs.String(), "level=ERROR") })
	if !strings.Contains(logs.String(), path+":3: unknown decision") {
		t.Errorf("the ERROR does not name the file and line:\n%s", logs.String())
	}
	if got := s.Current().Decide(Request{Action: "tap"}); got.Rule != "all" {
		t.Errorf("after a broken edit: got %+v; want the last good policy", got)
	}
	time.Sleep(30 * time.Millisecond) // several polls of the same broken file
	if n := strings.Count(logs.String(), "level=ERROR"); n != 1 {
		t.Errorf("a broken edit logged %d times; want once:\n%s", n, logs.String())
	}
	writeFile(t, path, otherPolicy)
	waitFor("the good edit", func() bool { return s.Current().Decide(Request{Action: "tap"}).Rule == "nothing" })
	waitFor("the INFO", func() bool { return strings.Contains(logs.String(), "policy: reloaded") })
}
