package export_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/export"
	"github.com/pinky-gateway/pinky/gateway/history"
)

var t0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

const evil = `<script>alert("pwned")</script>`

// fixture is a history with task k1 (steps with screenshots, an approval,
// a recording; texts an attacker chose) and task k2 (a step, nothing else),
// and their files.
type fixture struct {
	src  export.Source
	home string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	home := t.TempDir()
	s := history.NewMemory()
	f := &fixture{home: home, src: export.Source{Store: s,
		MediaDir: filepath.Join(home, "media"), RecordingsDir: filepath.Join(home, "recordings")}}
	must(t, s.UpsertDevice(ctx, history.Device{ID: "d1", Name: "Ada's Pixel", Model: "Pixel 8", Platform: "android"}))
	must(t, s.UpsertAgent(ctx, history.Agent{ID: "a1", Name: "claude-code", Version: "2.1"}))
	for _, k := range []string{"k1", "k2"} {
		must(t, s.StartTask(ctx, history.Task{ID: k, AgentID: "a1", DeviceID: "d1",
			Text: "reply to Ben " + evil, Apps: []string{"com.whatsapp"}, StartedAt: t0}))
	}
	steps := []history.Step{
		{ID: "p1", TaskID: "k1", Seq: 1, Tool: "tap", Args: `{"ref":7,"text":"[redacted]"}`, Outcome: "ok",
			Message: "tapped " + evil, Diff: `+ [7] button "Send <b>now</b>"`, StartedAt: t0.Add(time.Second),
			Duration: 120 * time.Millisecond},
		{ID: "p2", TaskID: "k1", Seq: 2, Tool: "type_text", Args: `not json & <i>`, Outcome: "approval_denied",
			StartedAt: t0.Add(4 * time.Second)},
		{ID: "q1", TaskID: "k2", Seq: 1, Tool: "observe", Outcome: "ok", StartedAt: t0},
	}
	for _, st := range steps {
		must(t, s.AddStep(ctx, st))
	}
	for _, m := range []history.Media{
		{ID: "p1-before", TaskID: "k1", StepID: "p1", Kind: history.KindBefore, Path: "k1/p1-before.jpg"},
		{ID: "p1-after", TaskID: "k1", StepID: "p1", Kind: history.KindAfter, Path: "k1/p1-after.jpg"},
		{ID: "p2-before", TaskID: "k1", StepID: "p2", Kind: history.KindBefore, Path: "k1/p2-before.jpg"}, // no file
	} {
		must(t, s.AddMedia(ctx, m))
		must(t, s.SetStepMedia(ctx, m.StepID, ifKind(m, history.KindBefore), ifKind(m, history.KindAfter)))
	}
	writeFile(t, filepath.Join(f.src.MediaDir, "k1", "p1-before.jpg"), "before-jpeg")
	writeFile(t, filepath.Join(f.src.MediaDir, "k1", "p1-after.jpg"), "after-jpeg")
	must(t, s.UpsertApproval(ctx, history.Approval{ID: "ap1", TaskID: "k1", StepID: "p2", Tool: "type_text",
		Args: `{"text":"[redacted]"}`, Commit: "send_message", Rule: "ask-before-sending",
		Target: `[12] button "Send"`, Status: history.ApprovalDenied, CreatedAt: t0.Add(4 * time.Second),
		DecidedAt: t0.Add(9 * time.Second), DecidedBy: "person", Reason: "not to my boss " + evil}))
	// The recording began 1.5 s after the task: step 1 is at its start,
	// step 2 at 2.5 s.
	must(t, s.PutRecording(ctx, history.Recording{TaskID: "k1", Path: "k1.mp4", Codec: history.CodecH264,
		Width: 1080, Height: 2400, StartedAt: t0.Add(1500 * time.Millisecond), Duration: 10 * time.Second, Bytes: 9}))
	writeFile(t, filepath.Join(f.src.RecordingsDir, "k1.mp4"), "fake-mp4!")
	must(t, s.EndTask(ctx, "k1", t0.Add(time.Minute), "released"))
	return f
}

func ifKind(m history.Media, kind string) string {
	if m.Kind == kind {
		return m.ID
	}
	return ""
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o700))
	must(t, os.WriteFile(path, []byte(data), 0o600))
}

// files lists the files under dir with their contents, index.html aside.
func files(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		if filepath.Base(p) == "index.html" {
			b = nil
		}
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	must(t, err)
	return out
}

func TestWrite(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.home, "export")
	must(t, export.Write(context.Background(), f.src, []string{"k1"}, dir))

	want := map[string]string{
		"index.html":             "",
		"k1.mp4":                 "fake-mp4!",
		"media/k1/p1-before.jpg": "before-jpeg",
		"media/k1/p1-after.jpg":  "after-jpeg",
	}
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	must(t, err)
	html := string(b)

	// What the agent and apps wrote is text, never markup.
	if strings.Contains(html, "<script>alert") || strings.Contains(html, "<b>now") || strings.Contains(html, "<i>") {
		t.Errorf("index.html carries markup from the history:\n%s", html)
	}
	if n := strings.Count(html, "<script"); n != 1 {
		t.Errorf("index.html has %d scripts; want 1, its own", n)
	}
	for _, s := range []string{"http://", "https://", "//cdn", "@import", "url("} {
		if strings.Contains(html, s) {
			t.Errorf("index.html refers to something outside the folder: %q", s)
		}
	}
	for _, want := range []string{
		`&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;`, // the task text, message and reason
		`Send &lt;b&gt;now&lt;/b&gt;`,                         // the diff
		`not json &amp; &lt;i&gt;`,                            // arguments that are not JSON, as they are
		`&#34;text&#34;: &#34;[redacted]&#34;`,                // JSON arguments, indented
		"claude-code 2.1",
		"Ada&#39;s Pixel (Pixel 8, android)",
		"com.whatsapp",
		"released",
		"approval_denied",
		`<video id="recording" controls preload="metadata" src="k1.mp4">`,
		`<img src="media/k1/p1-before.jpg"`,
		`<img src="media/k1/p1-after.jpg"`,
		"Before: screenshot file missing", // p2's
		`Approval: <span class="outcome">denied</span> by person`,
		"send_message", "ask-before-sending", `[12] button &#34;Send&#34;`,
		"not to my boss &lt;script&gt;",
	} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %s", want)
		}
	}

	// The step marks seek the video: ids step-<seq>, data-at in seconds.
	marks := regexp.MustCompile(`<button type="button" class="step-mark" id="([^"]+)" data-video="([^"]+)" data-at="([^"]+)"`).
		FindAllStringSubmatch(html, -1)
	var got [][]string
	for _, m := range marks {
		got = append(got, m[1:])
	}
	wantMarks := [][]string{{"step-1", "recording", "0.000"}, {"step-2", "recording", "2.500"}}
	if diff := cmp.Diff(wantMarks, got); diff != "" {
		t.Errorf("step marks (-want +got):\n%s", diff)
	}
	if !strings.Contains(html, "video.currentTime = parseFloat(mark.getAttribute(\"data-at\"))") {
		t.Error("index.html lacks the script that seeks the video")
	}

	// The modes of a copy the person asked for.
	for _, p := range []string{dir, filepath.Join(dir, "media", "k1")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("%s: got %v, %v; want mode 0755", p, fi.Mode(), err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "index.html")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("index.html: got %v, %v; want mode 0644", fi.Mode(), err)
	}
}

// A task without a recording has no video and no step marks; several tasks
// have ids of their own.
func TestWriteSeveral(t *testing.T) {
	f := newFixture(t)
	dir := filepath.Join(f.home, "export")
	// An empty folder will do; a repeated id is exported once.
	must(t, os.Mkdir(dir, 0o700))
	must(t, export.Write(context.Background(), f.src, []string{"k2", "k1", "k2"}, dir))
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	must(t, err)
	html := string(b)
	if n := strings.Count(html, `<section class="task"`); n != 2 {
		t.Errorf("index.html has %d tasks; want 2", n)
	}
	// k2 comes first and has no recording; k1 is the second task.
	for _, want := range []string{`id="task2-recording"`, `id="task2-step-1"`, `data-video="task2-recording"`} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %s", want)
		}
	}
	for _, bad := range []string{`id="recording"`, `id="step-1"`} {
		if strings.Contains(html, bad) {
			t.Errorf("index.html has %s; the first task has no recording", bad)
		}
	}
	if strings.Index(html, `id="task-1"`) > strings.Index(html, `id="task-2"`) {
		t.Error("tasks are not in the order asked")
	}
}

func TestWriteErrors(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	full := filepath.Join(f.home, "full")
	writeFile(t, filepath.Join(full, "keep.txt"), "mine")
	aFile := filepath.Join(f.home, "a-file")
	writeFile(t, aFile, "mine")

	tests := []struct {
		name    string
		ids     []string
		dir     string
		want    error
		wantMsg string
	}{
		{"unknown task", []string{"k1", "nope"}, filepath.Join(f.home, "new"), history.ErrNotFound, `"nope"`},
		{"no tasks", nil, filepath.Join(f.home, "new"), nil, "no tasks"},
		{"folder not empty", []string{"k1"}, full, export.ErrNotEmpty, full},
		{"a file", []string{"k1"}, aFile, export.ErrNotEmpty, aFile},
		{"no folder", []string{"k1"}, "", nil, "no folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := export.Write(ctx, f.src, tt.ids, tt.dir)
			if err == nil {
				t.Fatal("Write: got nil error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Write: got %v; want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Write: got %q; want it to mention %s", err, tt.wantMsg)
			}
		})
	}
	// Nothing was written anywhere.
	if _, err := os.Stat(filepath.Join(f.home, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed export left its folder: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"keep.txt": "mine"}, files(t, full)); diff != "" {
		t.Errorf("the full folder (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(aFile); err != nil || string(b) != "mine" {
		t.Errorf("the file: got %q, %v; want it untouched", b, err)
	}
}
