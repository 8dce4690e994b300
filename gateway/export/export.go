package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// ErrNotEmpty means the export folder already holds something; an export
// never writes over files.
var ErrNotEmpty = errors.New("export folder exists and is not empty")

// A Source is where an export reads from.
type Source struct {
	Store         history.Store
	MediaDir      string // the media folder, where media paths are relative to
	RecordingsDir string // the recordings folder, where recording paths are relative to
}

// File modes of an export: it is the person's own copy, made to be opened
// and shared, not the private history.
const (
	fileMode = 0o644
	dirMode  = 0o755
)

// Write exports the tasks with the given IDs, in that order, to dir: it
// writes dir/index.html, copies the steps' screenshots to dir/media/ (at
// their paths relative to the media folder) and each task's recording to
// dir/<task>.mp4. dir must not exist or be an empty folder; Write creates
// it, and refuses with ErrNotEmpty a folder that holds anything.
//
// Write reads everything from the store before it writes: an unknown task
// ID fails with an error naming it and wrapping history.ErrNotFound, and
// nothing is written. A screenshot or recording whose file is missing is
// left out of the report with a note. When writing fails part way, Write
// removes what it wrote.
func Write(ctx context.Context, src Source, taskIDs []string, dir string) error {
	if len(taskIDs) == 0 {
		return errors.New("export: no tasks to export")
	}
	if src.Store == nil {
		return errors.New("export: no history store")
	}
	created, err := checkDir(dir)
	if err != nil {
		return err
	}
	r, err := load(ctx, src, dedupe(taskIDs))
	if err != nil {
		return err
	}
	if err := r.write(ctx, dir, created); err != nil {
		return fmt.Errorf("export to %s: %w", dir, err)
	}
	return nil
}

// checkDir reports whether dir is yet to be created, and fails when it is
// not an empty folder.
func checkDir(dir string) (create bool, err error) {
	if dir == "" {
		return false, errors.New("export: no folder to write to")
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("export: %w", err)
	case !fi.IsDir():
		return false, fmt.Errorf("export: %s: %w (it is not a folder)", dir, ErrNotEmpty)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("export: %w", err)
	}
	if len(entries) > 0 {
		return false, fmt.Errorf("export: %s: %w", dir, ErrNotEmpty)
	}
	return false, nil
}

func dedupe(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// A report is what index.html shows and the files it needs.
type report struct {
	Generated time.Time
	Tasks     []*taskView
	copies    []copyFile
}

// A copyFile is a file to copy into the export.
type copyFile struct {
	src string // absolute, or relative to the working folder
	dst string // relative to the export folder, with forward slashes
}

type taskView struct {
	history.TaskSummary
	Anchor    string // the section's id
	Agent     string
	Device    string
	Approvals []approvalView // those not tied to a step shown
	Steps     []*stepView

	// The recording, when there is one to show.
	VideoID   string // the <video> element's id
	Video     string // its URL relative to index.html
	VideoFile string // its file name in the export
	Codec     string
	VideoNote string // why a recording is not shown, or empty
}

type stepView struct {
	history.Step
	MarkID    string // the step mark's id; empty without a recording
	DetailID  string
	ArgsText  string // the arguments, indented when they are JSON
	Before    image
	After     image
	Approvals []approvalView
}

// approvalView is an approval with the screenshot of its card: the screen
// the person saw when they decided.
type approvalView struct {
	history.Approval
	Picture image
}

type image struct {
	URL  string // relative to index.html; empty when missing
	Note string // why there is no image, when there was one
}

// load reads the tasks and plans the copies. It writes nothing.
func load(ctx context.Context, src Source, ids []string) (*report, error) {
	r := &report{Generated: time.Now()}
	videoNames := make(map[string]bool)
	for i, id := range ids {
		sum, steps, err := src.Store.Task(ctx, id)
		if err != nil {
			if errors.Is(err, history.ErrNotFound) {
				return nil, fmt.Errorf("export: unknown task %q: %w", id, history.ErrNotFound)
			}
			return nil, fmt.Errorf("export: task %q: %w", id, err)
		}
		prefix := ""
		if i > 0 {
			prefix = fmt.Sprintf("task%d-", i+1)
		}
		tv := &taskView{TaskSummary: sum, Anchor: fmt.Sprintf("task-%d", i+1),
			Agent: agentName(sum), Device: sum.DeviceName}
		if tv.Device == "" {
			tv.Device = sum.DeviceID
		}
		if sum.DeviceID != "" {
			if d, err := src.Store.Device(ctx, sum.DeviceID); err == nil {
				tv.Device = deviceName(d)
			}
		}

		if err := r.loadRecording(ctx, src, tv, prefix, videoNames); err != nil {
			return nil, err
		}
		bySeq := make(map[string]*stepView, len(steps))
		for _, st := range steps {
			sv := &stepView{Step: st, ArgsText: prettyJSON(st.Args),
				DetailID: fmt.Sprintf("%sdetail-%d", prefix, st.Seq)}
			if tv.Video != "" {
				sv.MarkID = fmt.Sprintf("%sstep-%d", prefix, st.Seq)
			}
			if sv.Before, err = r.loadImage(ctx, src, st.Before); err != nil {
				return nil, fmt.Errorf("export: task %q: step %d: %w", id, st.Seq, err)
			}
			if sv.After, err = r.loadImage(ctx, src, st.After); err != nil {
				return nil, fmt.Errorf("export: task %q: step %d: %w", id, st.Seq, err)
			}
			tv.Steps = append(tv.Steps, sv)
			bySeq[st.ID] = sv
		}

		aps, err := src.Store.Approvals(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("export: task %q: approvals: %w", id, err)
		}
		for _, a := range aps {
			a.Args = prettyJSON(a.Args)
			av := approvalView{Approval: a}
			if av.Picture, err = r.loadImage(ctx, src, a.Screenshot); err != nil {
				return nil, fmt.Errorf("export: task %q: approval %s: %w", id, a.ID, err)
			}
			if sv, ok := bySeq[a.StepID]; ok {
				sv.Approvals = append(sv.Approvals, av)
			} else {
				tv.Approvals = append(tv.Approvals, av)
			}
		}
		r.Tasks = append(r.Tasks, tv)
	}
	return r, nil
}

// loadRecording finds a task's recording and plans its copy.
func (r *report) loadRecording(ctx context.Context, src Source, tv *taskView, prefix string, names map[string]bool) error {
	rec, err := src.Store.Recording(ctx, tv.ID)
	switch {
	case errors.Is(err, history.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("export: task %q: %w", tv.ID, err)
	case rec.Bytes <= 0:
		return nil
	case !localPath(rec.Path):
		tv.VideoNote = "The recording's path is not inside the recordings folder; it was left out."
		return nil
	}
	file := filepath.Join(src.RecordingsDir, filepath.FromSlash(rec.Path))
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		tv.VideoNote = "The recording's file is missing; it may have been deleted."
		return nil
	}
	ext := path.Ext(rec.Path)
	if ext == "" {
		ext = ".mp4"
	}
	// The task's ID names the file when it can; IDs are the gateway's,
	// but the export must not trust them as file names.
	name := tv.ID + ext
	if !safeName(tv.ID) || names[name] {
		name = tv.Anchor + ext
	}
	names[name] = true
	r.copies = append(r.copies, copyFile{src: file, dst: name})
	tv.VideoID = prefix + "recording"
	tv.VideoFile = name
	tv.Video = escapePath(name)
	tv.Codec = rec.Codec
	return nil
}

// loadImage finds a screenshot by media ID and plans its copy.
func (r *report) loadImage(ctx context.Context, src Source, mediaID string) (image, error) {
	if mediaID == "" {
		return image{}, nil
	}
	m, err := src.Store.Media(ctx, mediaID)
	switch {
	case errors.Is(err, history.ErrNotFound):
		return image{Note: "screenshot not kept"}, nil
	case err != nil:
		return image{}, err
	case !localPath(m.Path):
		return image{Note: "screenshot left out: its path is not inside the media folder"}, nil
	}
	file := filepath.Join(src.MediaDir, filepath.FromSlash(m.Path))
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return image{Note: "screenshot file missing"}, nil
	}
	dst := "media/" + m.Path
	r.copies = append(r.copies, copyFile{src: file, dst: dst})
	return image{URL: escapePath(dst)}, nil
}

// write writes the report into dir; created says whether dir is new. When
// it fails, it removes what it wrote.
func (r *report) write(ctx context.Context, dir string, created bool) (err error) {
	if created {
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return err
		}
	}
	defer func() {
		if err == nil {
			return
		}
		// The folder was new or empty: everything in it is ours.
		if created {
			os.RemoveAll(dir)
			return
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}()
	done := make(map[string]bool)
	for _, c := range r.copies {
		if done[c.dst] {
			continue // two steps may show one screenshot
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := copyOne(c.src, filepath.Join(dir, filepath.FromSlash(c.dst))); err != nil {
			return err
		}
		done[c.dst] = true
	}
	var b bytes.Buffer
	if err := page.Execute(&b, r); err != nil {
		return err
	}
	// The page shows what agents typed and phones showed: html/template
	// escaped its markup, and the control characters and bidirectional
	// controls in it become visible escapes (‹U+202E›), so that nothing
	// reorders what the person reads. The template has none of its own.
	return os.WriteFile(filepath.Join(dir, "index.html"), []byte(safetext.Text(b.String())), fileMode)
}

func copyOne(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), dirMode); err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func agentName(t history.TaskSummary) string {
	switch {
	case t.AgentName != "" && t.AgentVersion != "":
		return t.AgentName + " " + t.AgentVersion
	case t.AgentName != "":
		return t.AgentName
	}
	return t.AgentID
}

func deviceName(d history.Device) string {
	name := d.Name
	if name == "" {
		name = d.ID
	}
	var about []string
	for _, s := range []string{d.Model, d.Platform} {
		if s != "" {
			about = append(about, s)
		}
	}
	if len(about) > 0 {
		name += " (" + strings.Join(about, ", ") + ")"
	}
	return name
}

// prettyJSON indents s when it is JSON, and returns it as it is otherwise.
func prettyJSON(s string) string {
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		return s
	}
	return b.String()
}

// localPath reports whether p, a path as the history keeps them, stays
// inside its folder.
func localPath(p string) bool {
	return p != "" && !strings.ContainsAny(p, `\`+"\x00") && filepath.IsLocal(filepath.FromSlash(p))
}

// safeName reports whether s can be a file name as it is.
func safeName(s string) bool {
	return s != "" && len(s) <= 128 && !strings.ContainsAny(s, `/\:*?"<>|`+"\x00") &&
		filepath.IsLocal(s) && !strings.HasPrefix(s, ".")
}

// escapePath makes a relative URL of a relative path, escaping each
// element, so that a file name with '#', '?' or '%' still points at itself.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}
