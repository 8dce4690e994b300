// Package settings keeps the person's settings of the daemon in
// $PINKY_HOME/settings.json: recording on or off, how long the history is
// kept, and read-only mode. The console and the CLI change them through
// the daemon; a change applies at once and survives a restart.
package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// MaxRetentionDays bounds RetentionDays (ten years).
const MaxRetentionDays = 3650

// Settings are the person's choices.
type Settings struct {
	// Recording records each agent task's screen as a video.
	Recording bool `json:"recording"`
	// RetentionDays deletes tasks that ended more than this many days ago,
	// with their screenshots and recordings; 0 keeps everything.
	RetentionDays int `json:"retention_days"`
	// ReadOnly lets agents read the phones but not act on them.
	ReadOnly bool `json:"read_only"`
}

// Defaults are the settings of a new data folder.
func Defaults() Settings { return Settings{Recording: true, RetentionDays: 30} }

// Check reports a setting out of range.
func (s Settings) Check() error {
	if s.RetentionDays < 0 || s.RetentionDays > MaxRetentionDays {
		return fmt.Errorf("retention_days must be 0 (keep everything) to %d, not %d", MaxRetentionDays, s.RetentionDays)
	}
	return nil
}

// Store holds the settings and their file. Its methods may be called
// concurrently.
type Store struct {
	path string

	mu       sync.Mutex
	cur      Settings
	onChange []func(old, new Settings)
}

// Open reads the settings file at path, or starts from Defaults when there
// is none. A file that does not parse is an error: the daemon does not
// guess the person's choices.
func Open(path string) (*Store, error) {
	st := &Store{path: path, cur: Defaults()}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return st, nil
	case err != nil:
		return nil, fmt.Errorf("settings: %w", err)
	}
	s := Defaults() // a field the file lacks keeps its default
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("settings: %s: %w (fix or delete the file)", path, err)
	}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("settings: %s: %w", path, err)
	}
	st.cur = s
	return st, nil
}

// Get returns the current settings.
func (st *Store) Get() Settings {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cur
}

// OnChange calls f after each change that Set saved, with the settings
// before and after it.
func (st *Store) OnChange(f func(old, new Settings)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.onChange = append(st.onChange, f)
}

// Set checks s, saves it (replacing the file in one step) and applies it.
// On error nothing changes.
func (st *Store) Set(s Settings) (Settings, error) {
	if err := s.Check(); err != nil {
		return Settings{}, err
	}
	st.mu.Lock()
	old := st.cur
	if err := write(st.path, s); err != nil {
		st.mu.Unlock()
		return Settings{}, fmt.Errorf("settings: %w", err)
	}
	st.cur = s
	fs := append([]func(old, new Settings){}, st.onChange...)
	st.mu.Unlock()
	for _, f := range fs {
		f(old, s)
	}
	return s, nil
}

func write(path string, s Settings) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'))
}
