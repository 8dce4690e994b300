package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The kinds of a step's screenshots.
const (
	KindBefore = "before"
	KindAfter  = "after"
	// KindApproval is the screenshot of an approval's card: the screen
	// when the agent asked (a media row of the task, not of a step).
	KindApproval = "approval"
)

// A Shot is a screenshot to save: JPEG bytes as the driver encoded them.
type Shot struct {
	TaskID string
	StepID string // the step must be recorded before its shots are saved
	Kind   string // KindBefore or KindAfter
	JPEG   []byte // not modified by the caller once handed to Save
	Width  int
	Height int
}

// ApprovalMediaID is the ID of the Media row for an approval card's
// screenshot (KindApproval).
func ApprovalMediaID(approvalID string) string { return "approval-" + approvalID }

// MediaID is the ID of the Media row for a step's screenshot of a kind.
func MediaID(stepID, kind string) string { return stepID + "-" + kind }

// MediaOptions tune a MediaWriter; zero fields take defaults.
type MediaOptions struct {
	Queue   int          // screenshots waiting to be written; default 64
	Workers int          // goroutines writing them; default 2
	Logger  *slog.Logger // default slog.Default()
}

// A MediaWriter saves screenshots in the background: each becomes the file
// <dir>/<task id>/<step id>-<kind>.jpg (mode 0600, folders 0700), a Media
// row, and the step's Before or After. Save never waits: when the queue is
// full, the screenshot is dropped, logged and counted, because an agent's
// step must not wait for a disk.
type MediaWriter struct {
	store Store
	dir   string
	log   *slog.Logger
	queue chan Shot
	wg    sync.WaitGroup

	// mu guards closed against Save sending on a closed queue; Save holds
	// it for reading only around a send that cannot block.
	mu     sync.RWMutex
	closed bool

	dropped atomic.Int64
	now     func() time.Time
	hook    func(Shot) // for tests: runs before each write
}

// NewMediaWriter starts a writer that saves screenshots under dir, the media
// folder ($PINKY_HOME/media), and records them in store. Close it to flush.
func NewMediaWriter(store Store, dir string, opts MediaOptions) *MediaWriter {
	return newMediaWriter(store, dir, opts, nil)
}

// newMediaWriter is NewMediaWriter with a hook that runs before each write;
// tests use it to slow the writer down.
func newMediaWriter(store Store, dir string, opts MediaOptions, hook func(Shot)) *MediaWriter {
	if opts.Queue <= 0 {
		opts.Queue = 64
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	w := &MediaWriter{
		store: store,
		dir:   dir,
		log:   opts.Logger,
		queue: make(chan Shot, opts.Queue),
		now:   time.Now,
		hook:  hook,
	}
	w.wg.Add(opts.Workers)
	for range opts.Workers {
		go w.work()
	}
	return w
}

// Save queues a screenshot and reports whether it was queued. It returns
// false, without waiting, for a full queue (the shot is dropped and
// counted), an invalid shot, or a closed writer.
func (w *MediaWriter) Save(s Shot) bool {
	if err := checkShot(s); err != nil {
		w.log.Error("history: screenshot refused", "task", s.TaskID, "step", s.StepID, "err", err)
		return false
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.log.Warn("history: screenshot after close", "task", s.TaskID, "step", s.StepID)
		return false
	}
	select {
	case w.queue <- s:
		return true
	default:
		n := w.dropped.Add(1)
		w.log.Warn("history: screenshot dropped, writer queue full",
			"task", s.TaskID, "step", s.StepID, "kind", s.Kind, "dropped", n)
		return false
	}
}

// Dropped is the number of screenshots dropped because the queue was full.
func (w *MediaWriter) Dropped() int64 { return w.dropped.Load() }

// Close writes the queued screenshots and stops the writer. Later calls to
// Save return false.
func (w *MediaWriter) Close() error {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	w.wg.Wait()
	return nil
}

func (w *MediaWriter) work() {
	defer w.wg.Done()
	for s := range w.queue {
		if w.hook != nil {
			w.hook(s)
		}
		if err := w.write(s); err != nil {
			w.log.Error("history: screenshot not saved",
				"task", s.TaskID, "step", s.StepID, "kind", s.Kind, "err", err)
		}
	}
}

// write saves one screenshot. The file appears whole or not at all: it is
// written under a temporary name and renamed.
func (w *MediaWriter) write(s Shot) error {
	folder := filepath.Join(w.dir, s.TaskID)
	if err := os.MkdirAll(folder, 0o700); err != nil {
		return err
	}
	name := s.StepID + "-" + s.Kind + ".jpg"
	f, err := os.CreateTemp(folder, "."+name+".*") // mode 0600
	if err != nil {
		return err
	}
	_, err = f.Write(s.JPEG)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(folder, name))
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id := MediaID(s.StepID, s.Kind)
	err = w.store.AddMedia(ctx, Media{
		ID:        id,
		TaskID:    s.TaskID,
		StepID:    s.StepID,
		Kind:      s.Kind,
		Path:      s.TaskID + "/" + name,
		Width:     s.Width,
		Height:    s.Height,
		Bytes:     int64(len(s.JPEG)),
		CreatedAt: w.now(),
	})
	if err != nil && !errors.Is(err, ErrExists) {
		// No row refers to the file; do not leave it behind.
		os.Remove(filepath.Join(folder, name))
		return err
	}
	// A shot saved twice replaced the file; the row and the step already
	// name it.
	before, after := id, ""
	if s.Kind == KindAfter {
		before, after = "", id
	}
	return w.store.SetStepMedia(ctx, s.StepID, before, after)
}

func checkShot(s Shot) error {
	if !pathElem(s.TaskID) || !pathElem(s.StepID) {
		return fmt.Errorf("task %q, step %q: ids must be usable as file names: %w",
			s.TaskID, s.StepID, ErrInvalid)
	}
	if s.Kind != KindBefore && s.Kind != KindAfter {
		return fmt.Errorf("kind %q: %w", s.Kind, ErrInvalid)
	}
	if len(s.JPEG) == 0 {
		return fmt.Errorf("empty image: %w", ErrInvalid)
	}
	return nil
}

// pathElem reports whether id can be one element of a path inside the media
// folder: not empty, no separator, not "." or "..".
func pathElem(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\`+"\x00") && filepath.IsLocal(id)
}
