package cli_test

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// agentTask runs a task on the unlocked sim-android-1 over MCP: it opens
// Notes and types, with pauses so that the recording spans several
// fragments. It returns the host, still holding the phone.
func (e *env) agentTask(t *testing.T) *e2e.Host {
	t.Helper()
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "write a note"}, "Pixel Launcher")
	for _, step := range []struct {
		tool string
		args map[string]any
	}{
		{"phone_tap", map[string]any{"text": "Notes"}},
		{"phone_key", map[string]any{"key": "home"}},
		{"phone_tap", map[string]any{"text": "Notes"}},
		{"phone_key", map[string]any{"key": "home"}},
	} {
		time.Sleep(700 * time.Millisecond)
		step.args["device"] = "sim-android-1"
		h.OK(step.tool, step.args, "")
	}
	return h
}

// lastTask is the newest task in the history.
func (e *env) lastTask(t *testing.T) api.Task {
	t.Helper()
	var ts []api.Task
	e.JSON(&ts, "history")
	if len(ts) == 0 {
		t.Fatal("no task in the history")
	}
	return ts[0]
}

// recordedTask waits for the newest task's recording row, and returns the
// task and its detail.
func (e *env) recordedTask(t *testing.T) (api.Task, api.TaskDetail) {
	t.Helper()
	task := e.lastTask(t)
	var d api.TaskDetail
	e.Eventually("the recording's row", func() bool {
		e.JSON(&d, "history", "show", task.ID)
		return d.Recording
	})
	return task, d
}

// wantH264 fails t unless ffprobe decodes the task's recording as H.264
// with frames; what names the recording in the failure.
func (e *env) wantH264(t *testing.T, task, what string) {
	t.Helper()
	codec, w, h, frames := ffprobeFrames(t, filepath.Join(e.Home, "recordings", task+".mp4"))
	if codec != "h264" || w <= 0 || h <= 0 || frames < 2 {
		t.Errorf("%s: codec %q, %dx%d, %d frames; want h264 with frames", what, codec, w, h, frames)
	}
}

// ffprobeFrames decodes a file with ffprobe and returns its codec, size and
// the number of frames it read.
func ffprobeFrames(t *testing.T, path string) (codec string, w, h, frames int) {
	t.Helper()
	out, err := exec.Command(testdep.Need(t, "ffprobe"), "-v", "error", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "default=nw=1", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe refuses %s: %v\n%s", path, err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		n, _ := strconv.Atoi(v)
		switch k {
		case "codec_name":
			codec = v
		case "width":
			w = n
		case "height":
			h = n
		case "nb_read_frames":
			frames = n
		}
	}
	return codec, w, h, frames
}

// fragments walks an fMP4 file's top-level boxes and returns the number of
// complete fragments (moof and its mdat) and the samples they hold; a box
// cut short by a crash ends the walk.
func fragments(t *testing.T, b []byte) (frags, samples int) {
	t.Helper()
	pending := 0 // samples of a moof whose mdat has not come yet
	for off := 0; off+8 <= len(b); {
		size, typ := int(binary.BigEndian.Uint32(b[off:])), string(b[off+4:off+8])
		if size < 8 || off+size > len(b) {
			break
		}
		switch typ {
		case "moof":
			pending = trunSamples(b[off+8 : off+size])
		case "mdat":
			frags++
			samples += pending
			pending = 0
		}
		off += size
	}
	return frags, samples
}

// trunSamples sums the sample counts of the trun boxes in a moof's body.
func trunSamples(b []byte) (n int) {
	for off := 0; off+8 <= len(b); {
		size, typ := int(binary.BigEndian.Uint32(b[off:])), string(b[off+4:off+8])
		if size < 8 || off+size > len(b) {
			return n
		}
		switch typ {
		case "traf":
			n += trunSamples(b[off+8 : off+size])
		case "trun":
			n += int(binary.BigEndian.Uint32(b[off+12:]))
		}
		off += size
	}
	return n
}

// TestTaskRecording: an agent's task on the virtual phone is recorded as an
// H.264 fMP4 that ffprobe decodes, with a history row and each step's place
// in the video.
func TestTaskRecording(t *testing.T) {
	testdep.Need(t, "ffprobe")
	e := newEnv(t)
	e.Daemon("--sim", "--console", "off")
	h := e.agentTask(t)
	h.OK("phone_release", map[string]any{"device": "sim-android-1"}, "")
	task, d := e.recordedTask(t)
	e.wantH264(t, task.ID, "the recording")
	last := int64(-1)
	for _, s := range d.StepList {
		if s.VideoAtMS < 0 || s.VideoAtMS < last {
			t.Errorf("step %d (%s) at %d ms in the video; want a place, in step order", s.Seq, s.Tool, s.VideoAtMS)
		}
		last = s.VideoAtMS
	}
	if last < 1000 {
		t.Errorf("the last step is %d ms into the video; the task took over two seconds", last)
	}
	// Every step mark is inside the video, so that a viewer can seek to it.
	e.Eventually("the recording covers every step", func() bool {
		e.JSON(&d, "history", "show", task.ID)
		return d.RecordingMS >= d.StepList[len(d.StepList)-1].VideoAtMS
	})
}

// TestRecordingSurvivesKill9: a daemon killed mid-task leaves a recording
// ffprobe accepts, with every fragment but the one being written.
func TestRecordingSurvivesKill9(t *testing.T) {
	testdep.Need(t, "ffprobe")
	e := newEnv(t)
	d := e.Daemon("--sim", "--console", "off")
	e.agentTask(t)
	task := e.lastTask(t)
	path := filepath.Join(e.Home, "recordings", task.ID+".mp4")
	e.Eventually("two fragments on disk", func() bool {
		b, _ := os.ReadFile(path)
		n, _ := fragments(t, b)
		return n >= 2
	})
	if err := d.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	frags, samples := fragments(t, b)
	_, _, _, frames := ffprobeFrames(t, path)
	if frames != samples || frags < 2 {
		t.Errorf("after kill -9: ffprobe read %d frames; the %d complete fragments hold %d", frames, frags, samples)
	}
}

// TestRecordingWaitsForVideo: a task started while its phone does not
// serve video (as an iPhone whose broadcast has not connected yet) is
// recorded from when the phone serves it: the recording starts on the
// phone's CHANGED event, not only at the task's start. Video that goes
// away mid-task (a broadcast dropped) and comes back goes on in the same
// recording.
func TestRecordingWaitsForVideo(t *testing.T) {
	testdep.Need(t, "ffprobe")
	e := newEnv(t)
	// No video for the first 6 s, and again from 12 s to 15 s after the
	// driver's start.
	e.Extra = append(e.Extra, "PINKY_SIM_FAULTS=lack=sim-android-1:video@0s/6s,lack=sim-android-1:video@12s/3s")
	started := time.Now()
	e.Daemon("--sim", "--console", "off")
	lacksVideo := func() bool {
		var devs []api.Device
		e.JSON(&devs, "devices")
		for _, d := range devs {
			if d.ID == "sim-android-1" {
				for _, m := range d.Missing {
					if m.Capability == "video" {
						return true
					}
				}
			}
		}
		return false
	}
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "write a note"}, "Pixel Launcher")
	if !lacksVideo() {
		t.Fatalf("the task started %s after the daemon, and the phone serves video already: the test proves nothing (a slow machine?)", time.Since(started).Round(time.Millisecond))
	}
	h.OK("phone_tap", map[string]any{"device": "sim-android-1", "text": "Notes"}, "")
	e.Eventually("the phone serves video again", func() bool { return !lacksVideo() })
	// steps taps texts and presses keys, apart, so that the recording
	// spans several fragments.
	steps := func(list ...map[string]any) {
		for _, step := range list {
			time.Sleep(700 * time.Millisecond)
			step["device"] = "sim-android-1"
			tool := "phone_tap"
			if _, ok := step["key"]; ok {
				tool = "phone_key"
			}
			h.OK(tool, step, "")
		}
	}
	steps(map[string]any{"key": "home"}, map[string]any{"text": "Notes"}, map[string]any{"key": "home"})
	e.Eventually("the phone's video goes away again", lacksVideo)
	e.Eventually("the phone's video comes back", func() bool { return !lacksVideo() })
	steps(map[string]any{"text": "Notes"}, map[string]any{"key": "home"})
	h.OK("phone_release", map[string]any{"device": "sim-android-1"}, "")
	task, d := e.recordedTask(t)
	e.wantH264(t, task.ID, "the recording")
	// The steps after the video came are in it (the connect and the tap
	// before it may not be), and the recording runs past the last one,
	// made after the video came back.
	if len(d.StepList) < 7 {
		t.Fatalf("the task has %d steps; want 7", len(d.StepList))
	}
	for _, s := range d.StepList[2:] {
		if s.VideoAtMS < 0 {
			t.Errorf("step %d (%s), after the video came, has no place in the video", s.Seq, s.Tool)
		}
	}
	last := d.StepList[len(d.StepList)-1]
	e.Eventually("the recording covers the steps after the video came back", func() bool {
		e.JSON(&d, "history", "show", task.ID)
		return d.RecordingMS >= last.VideoAtMS
	})
}
