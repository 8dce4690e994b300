package console

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// callRequest is the body of POST /api/call.
type callRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// handleCall runs an allowed daemon method. Parameters are never logged:
// devices.unlock carries the PIN and devices.input typed text.
func (s *Server) handleCall(w http.ResponseWriter, r *http.Request) {
	var req callRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCallBody))
	if err := dec.Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "bad request: "+err.Error())
		return
	}
	if !s.methods[req.Method] {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("method %q is not available in the console", req.Method))
		return
	}
	params := req.Params
	if len(bytes.TrimSpace(params)) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	res, err := s.cfg.Call(r.Context(), req.Method, params)
	if err != nil {
		if r.Context().Err() == nil {
			s.log.Debug("console: call failed", "method", req.Method, "err", err)
		}
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	b, err := json.Marshal(res)
	if err != nil {
		s.log.Error("console: result does not marshal", "method", req.Method, "err", err)
		writeError(w, http.StatusInternalServerError, "the daemon's answer could not be encoded")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b) //nolint:errcheck // the client went away
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg}) //nolint:errcheck // the client went away
}

// handleMedia serves a screenshot.
func (s *Server) handleMedia(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Media == nil {
		http.NotFound(w, r)
		return
	}
	path, err := s.cfg.Media(r.Context(), r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	s.serveFile(w, r, path, "")
}

// handleRecording serves GET /recordings/{task}.mp4 with Range support, so
// the video can seek.
func (s *Server) handleRecording(w http.ResponseWriter, r *http.Request) {
	task, ok := strings.CutSuffix(r.PathValue("file"), ".mp4")
	if !ok || task == "" || s.cfg.Recording == nil {
		http.NotFound(w, r)
		return
	}
	path, err := s.cfg.Recording(r.Context(), task)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	s.serveFile(w, r, path, "video/mp4")
}

// serveFile serves a file the daemon named, with Range and conditional
// requests (http.ServeContent).
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, path, ctype string) {
	f, err := os.Open(path)
	if err != nil {
		s.log.Warn("console: file missing", "err", err)
		http.Error(w, "file not found", http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		http.Error(w, "file not found", http.StatusNotFound)
		return
	}
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	w.Header().Set("Cache-Control", "private, max-age=3600")
	http.ServeContent(w, r, filepath.Base(path), st.ModTime(), f)
}

// unsafeName matches what a download's name does not keep: all but letters,
// digits, '-', '_' and '.'.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// handleExport exports tasks into a temporary folder and sends it as a zip.
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	tasks := r.URL.Query()["task"]
	if len(tasks) == 0 {
		http.Error(w, "name at least one task: /export?task=ID", http.StatusBadRequest)
		return
	}
	if s.cfg.Export == nil {
		http.NotFound(w, r)
		return
	}
	tmp, err := os.MkdirTemp("", "pinky-export-")
	if err != nil {
		s.log.Error("console: export", "err", err)
		http.Error(w, "could not make a temporary folder", http.StatusInternalServerError)
		return
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "report")
	if err := s.cfg.Export(r.Context(), tasks, dir); err != nil {
		http.Error(w, "export failed: "+err.Error(), http.StatusBadRequest)
		return
	}
	name := "pinky-report"
	if len(tasks) == 1 {
		name += "-" + unsafeName.ReplaceAllString(tasks[0], "_")
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.zip"`)
	w.Header().Set("Cache-Control", "no-store")
	if err := zipDir(w, dir, name); err != nil {
		// The status is sent; the client sees a truncated zip.
		s.log.Error("console: export zip", "err", err)
	}
}

// zipDir writes dir's files into a zip under the folder prefix.
func zipDir(w io.Writer, dir, prefix string) error {
	zw := zip.NewWriter(w)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(filepath.Join(prefix, rel))
		if d.IsDir() {
			_, err := zw.Create(name + "/")
			return err
		}
		if !d.Type().IsRegular() {
			return nil // no symlinks or devices out of the report
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		hdr, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		hdr.Name, hdr.Method = name, zip.Deflate
		out, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(out, f)
		return err
	})
	if err != nil {
		return errors.Join(err, zw.Close())
	}
	return zw.Close()
}
