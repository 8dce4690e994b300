package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/recording"
	"github.com/pinky-gateway/pinky/gateway/recording/fmp4"
	"github.com/pinky-gateway/pinky/gateway/settings"
	"github.com/pinky-gateway/pinky/gateway/stream"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// recorders records each agent task's screen, when the person left
// recording on and the phone's driver streams video. It is the agent
// manager's Watcher: the reads of the agents, and the recorder's own
// (classified by the same Manager.Private), vouch for what is recorded by
// the rule in package recording; the person's take-overs and unlocks, and
// the phone's lock changes and going offline, count as private screens.
type recorders struct {
	dir      string // $PINKY_HOME/recordings
	host     agent.Drivers
	screens  *stream.Screens
	store    history.Store
	settings *settings.Store
	log      *slog.Logger
	// private classifies a screen like the agents' reads do; set once the
	// agent manager exists.
	private func(device string, sc *sdk.Screen) string

	mu       sync.Mutex
	byDevice map[string]*taskRecording
	waiting  map[string]waitingTask // tasks whose phone did not serve video at their start
	closing  sync.WaitGroup         // recordings being closed
	closed   bool
}

type taskRecording struct {
	task    string
	display int
	rec     *recording.Recorder
}

// waitingTask is a task whose recording waits for its phone's video.
type waitingTask struct {
	task    string
	display int
}

var _ agent.Watcher = (*recorders)(nil)

// TaskStarted starts the task's recording, of the display it runs on. A
// phone that does not serve video now (an iPhone whose broadcast has not
// connected, a phone without scrcpy yet) keeps the task waiting: its
// recording starts when the phone serves video (videoServed).
func (r *recorders) TaskStarted(device, task string, display int) {
	if !r.settings.Get().Recording {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if old := r.byDevice[device]; old != nil { // a task that ended without TaskEnded
		r.finish(device, old)
	}
	delete(r.waiting, device)
	if !r.streams(device) {
		r.waiting[device] = waitingTask{task: task, display: display}
		r.log.Info("the task's recording waits: the phone does not serve video now", "device", device, "task", task)
		return
	}
	r.startLocked(device, task, display)
}

// startLocked starts a task's recording; r.mu is held.
func (r *recorders) startLocked(device, task string, display int) {
	rel := task + ".mp4"
	rec, err := recording.Start(context.Background(), recording.Config{
		Path: filepath.Join(r.dir, rel),
		Join: func(ctx context.Context) (recording.Packets, error) {
			return r.screens.JoinDisplay(ctx, device, display)
		},
		Read: func(ctx context.Context) (recording.Verdict, error) {
			d, _, err := r.host.DriverForDevice(device)
			if err != nil {
				return recording.Verdict{}, err
			}
			sc, err := d.Screen(ctx, device, display)
			if err != nil {
				return recording.Verdict{}, err
			}
			why := r.private(device, sc)
			return recording.Verdict{OK: why == "", Why: why}, nil
		},
		OnUpdate: func(in recording.Info) { r.saveRow(task, rel, in) },
		Logger:   r.log.With("task", task, "device", device),
	})
	if err != nil {
		r.log.Error("the task's recording did not start", "task", task, "device", device, "err", err)
		return
	}
	r.byDevice[device] = &taskRecording{task: task, display: display, rec: rec}
	r.log.Info("recording the task", "task", task, "device", device)
}

// videoServed is told that device serves video now, where it did not
// (its broadcast connected, scrcpy was found, it came back online): the
// task that waits for it starts its recording, and a recording waiting to
// join the stream again joins at once.
func (r *recorders) videoServed(device string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if tr := r.byDevice[device]; tr != nil {
		tr.rec.Rejoin()
		return
	}
	w, ok := r.waiting[device]
	switch {
	case !ok:
	case !r.settings.Get().Recording:
		delete(r.waiting, device)
	case r.streams(device): // else its video went again: the task waits on
		delete(r.waiting, device)
		r.startLocked(device, w.task, w.display)
	}
}

// streams reports whether the phone's driver streams video.
func (r *recorders) streams(device string) bool {
	return r.host.Serves(device, sdk.CapVideo)
}

// saveRow writes the recording's row; a recording with nothing in it yet
// has none.
func (r *recorders) saveRow(task, rel string, in recording.Info) {
	if in.Bytes == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.store.PutRecording(ctx, history.Recording{
		TaskID: task, Path: rel, Codec: in.Codec, Width: in.Width, Height: in.Height,
		StartedAt: in.Start, Duration: in.Duration, Bytes: in.Bytes,
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		r.log.Error("recording's history row", "task", task, "err", err)
	}
}

// TaskEnded ends the task's recording in the background.
func (r *recorders) TaskEnded(device, task string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if tr := r.byDevice[device]; tr != nil && tr.task == task {
		r.finish(device, tr)
	}
	if w, ok := r.waiting[device]; ok && w.task == task {
		delete(r.waiting, device)
	}
}

// finish closes a recording in the background; r.mu is held.
func (r *recorders) finish(device string, tr *taskRecording) {
	delete(r.byDevice, device)
	r.closing.Add(1)
	go func() {
		defer r.closing.Done()
		in, err := tr.rec.Close()
		if tr.display != 0 {
			// The task's background display goes with it: so does its stream.
			r.screens.EndDisplay(device, tr.display, stream.ErrStreamEnded)
		}
		if err != nil {
			r.log.Error("closing the task's recording", "task", tr.task, "err", err)
		}
		r.log.Info("recording ended", "task", tr.task, "bytes", in.Bytes, "duration", in.Duration.Round(time.Millisecond))
	}()
}

func (r *recorders) get(device string) *recording.Recorder {
	r.mu.Lock()
	defer r.mu.Unlock()
	if tr := r.byDevice[device]; tr != nil {
		return tr.rec
	}
	return nil
}

// ScreenRead vouches for what the recording holds, or starts a private
// span.
func (r *recorders) ScreenRead(device string, at time.Time, private string) {
	if rec := r.get(device); rec != nil {
		rec.Vouch(at, recording.Verdict{OK: private == "", Why: private})
	}
}

// ScreenHidden starts a private span: what the recording holds is
// dropped, and so is what comes until a read finds the screen public.
func (r *recorders) ScreenHidden(device, why string) {
	if rec := r.get(device); rec != nil {
		rec.Drop(why)
	}
}

// stopAll ends every recording, e.g. when the person turns recording off.
func (r *recorders) stopAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for d, tr := range r.byDevice {
		r.finish(d, tr)
	}
	clear(r.waiting)
}

// Close ends every recording and waits until their files are complete.
func (r *recorders) Close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stopAll()
	r.closing.Wait()
}

// followDevices ends the streams of phones that went offline, or stopped
// serving video (an iPhone's broadcast dropped), so that every mirror and
// recording sees the end (the recorder drops what it held and joins again
// when the phone serves video again, told at once by videoServed); and
// starts a private span of the recording when a phone's driver reports it
// locked or unlocked: the lock screen and the PIN pad are never written,
// even between two reads.
func (g *Gateway) followDevices(ctx context.Context) {
	evs, cancel := g.host.Subscribe()
	defer cancel()
	locks := map[string]sdk.LockState{}
	video := map[string]bool{} // whether each online phone served video at its last event
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-evs:
			if !ok {
				return
			}
			id := ev.Device.ID
			switch ev.Kind {
			case driverhost.EventOffline, driverhost.EventRemoved:
				delete(locks, id)
				delete(video, id)
				g.sizes.forget(id)
				g.recorders.ScreenHidden(id, "the phone went offline")
				g.screens.End(id, sdk.ErrDeviceOffline)
			case driverhost.EventAdded, driverhost.EventChanged, driverhost.EventOnline:
				now := ev.Device.LockState
				if before, ok := locks[id]; ok && now != before {
					g.recorders.ScreenHidden(id, "the phone was "+string(now))
				}
				locks[id] = now
				served, before := g.host.Serves(id, sdk.CapVideo), video[id]
				video[id] = served
				switch {
				case served && !before:
					g.recorders.videoServed(id)
				case !served && before:
					g.recorders.ScreenHidden(id, "the phone stopped serving video")
					g.screens.End(id, stopped(g.host, id))
				}
			}
		}
	}
}

// stopped is the end of the streams of a phone that stopped serving video:
// ErrNoVideo, with the phone's reason when it gives one.
func stopped(host *driverhost.Host, device string) error {
	if m, ok := host.Missing(device, sdk.CapVideo); ok && m.Reason != "" {
		return fmt.Errorf("%w now: %s", stream.ErrNoVideo, safetext.Line(m.Reason))
	}
	return fmt.Errorf("%w now", stream.ErrNoVideo)
}

// repairRecordings cuts the recordings of the tasks the last daemon left
// open back to their last whole fragment.
func repairRecordings(store history.Store, dir string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	open, err := store.OpenTasks(ctx)
	if err != nil {
		log.Error("listing the tasks the last daemon left open", "err", err)
		return
	}
	for _, t := range open {
		path := filepath.Join(dir, t.ID+".mp4")
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if n, err := fmp4.Repair(path); err != nil {
			log.Warn("a recording the last daemon left could not be repaired", "task", t.ID, "err", err)
		} else {
			log.Info("repaired the recording the last daemon left", "task", t.ID, "bytes", n)
		}
	}
}
