package policy

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultPolicy is the commented policy.yaml that EnsureDefault writes.
//
//go:embed default_policy.yaml
var DefaultPolicy []byte

// The files in $PINKY_HOME.
const (
	PolicyFile = "policy.yaml"
	AppsFile   = "apps.yaml" // optional: the person's app table
)

// EnsureDefault writes the default policy to path, private to the user
// (0600), unless a file is already there.
func EnsureDefault(path string) (created bool, err error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write the default policy: %w", err)
	}
	_, err = f.Write(DefaultPolicy)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path) // a half-written policy would stop the next start
		return false, fmt.Errorf("write the default policy: %w", err)
	}
	return true, nil
}

// Load reads policy.yaml and, when there is one, apps.yaml from home.
func Load(home string) (*Policy, error) {
	return LoadFiles(filepath.Join(home, PolicyFile), filepath.Join(home, AppsFile))
}

// LoadFiles reads a policy file and, when there is one, an app table file;
// errors name the files.
func LoadFiles(policyPath, appsPath string) (*Policy, error) {
	policy, apps, err := readFiles(policyPath, appsPath)
	if err != nil {
		return nil, err
	}
	return parse(policyPath, policy, appsPath, apps)
}

// readFiles reads a policy file and an app table file (nil when there is
// none).
func readFiles(policyPath, appsPath string) (policy, apps []byte, err error) {
	policy, err = os.ReadFile(policyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("read the policy: %w", err)
	}
	apps, err = os.ReadFile(appsPath)
	if errors.Is(err, fs.ErrNotExist) {
		return policy, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read the app table: %w", err)
	}
	return policy, apps, nil
}

// stamp is what a Store compares to see an edit: both files' contents.
func stamp(policy, apps []byte) []byte {
	s := make([]byte, 0, len(policy)+len(apps)+2)
	s = append(append(append(s, policy...), 0), apps...)
	if apps == nil {
		s = append(s, 0) // no apps.yaml differs from an empty one
	}
	return s
}

// Store holds the current policy of a Pinky home and reloads it when the
// files change, never falling back to allow: a broken edit keeps the last
// good policy.
type Store struct {
	home  string
	every time.Duration // how often Watch looks at the files

	cur atomic.Pointer[Policy]

	mu   sync.Mutex // serializes reloads; guards seen
	seen []byte     // the files' contents at the last load, good or not
}

// LoadStore loads the policy of home. It fails when the policy is missing
// or broken: there is then no good policy, and the daemon must not start.
func LoadStore(home string) (*Store, error) {
	s := &Store{home: home, every: 2 * time.Second}
	if _, err := s.reload(true); err != nil {
		return nil, err
	}
	return s, nil
}

// Current returns the policy in force.
func (s *Store) Current() *Policy { return s.cur.Load() }

// Reload reads the files again. On an error the last good policy stays in
// force and the error (file, line and problem) is returned for the caller
// to log loudly.
func (s *Store) Reload() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.reload(true)
	if err != nil && s.cur.Load() != nil {
		err = fmt.Errorf("policy not reloaded, the last good one stays in force: %w", err)
	}
	return err
}

// reload parses the files when they changed since the last look, or
// always with force; changed reports whether they did. s.mu is held, or s
// is not shared yet.
func (s *Store) reload(force bool) (changed bool, err error) {
	policyPath, appsPath := filepath.Join(s.home, PolicyFile), filepath.Join(s.home, AppsFile)
	policy, apps, err := readFiles(policyPath, appsPath)
	if err != nil {
		changed, s.seen = s.seen != nil, nil
		return changed, err
	}
	st := stamp(policy, apps)
	if !force && bytes.Equal(st, s.seen) {
		return false, nil
	}
	s.seen = st
	p, err := parse(policyPath, policy, appsPath, apps)
	if err != nil {
		return true, err
	}
	s.cur.Store(p)
	return true, nil
}

// Watch reloads the policy when its files change, until ctx ends. It polls
// (every 2 s) rather than watching the folder, which editors that replace
// files make unreliable, and logs each broken edit once, at ERROR level,
// with its file and lines.
func (s *Store) Watch(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(s.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		changed, err := s.reload(false)
		s.mu.Unlock()
		switch {
		case err != nil && changed:
			log.Error("policy: a broken edit; the last good policy stays in force", "err", err)
		case changed:
			log.Info("policy: reloaded", "file", filepath.Join(s.home, PolicyFile))
		}
	}
}
