package history

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// OrphanAge is how old a file in the media or recordings folder that no row
// names must be before PruneFiles deletes it. A screenshot is written before
// its row, and a recording may be too; an hour leaves any writer in flight
// far behind.
const OrphanAge = time.Hour

// sweepBatch is the number of files the orphan sweep looks up at once.
const sweepBatch = 1000

// PruneFiles applies retention: it prunes the store (see [Store.Prune]),
// then deletes the files the pruned rows named, from mediaDir (the media
// folder) and recordingsDir (the recordings folder), with the task folders
// they leave empty. Last it sweeps both folders for orphans: regular files
// older than OrphanAge that no row names, such as the files of an earlier
// prune that a crash kept from being deleted after its commit, or a
// screenshot whose row was never written. It never deletes a file that a
// row names, nor anything outside the two folders, nor follows a symbolic
// link.
//
// The rows go first and the files after, so that a crash in between leaves
// orphan files, which the next sweep deletes, and never a row naming a
// deleted file. Once the store is pruned, a file that cannot be deleted is
// logged and reported in the error, and the Pruned result still says what
// was done; the next run tries it again as an orphan.
//
// log may be nil for slog.Default().
func PruneFiles(ctx context.Context, store Store, mediaDir, recordingsDir string, before time.Time, log *slog.Logger) (Pruned, error) {
	if log == nil {
		log = slog.Default()
	}
	if mediaDir == "" || recordingsDir == "" {
		return Pruned{}, fmt.Errorf("prune files: empty folder name: %w", ErrInvalid)
	}
	p, err := store.Prune(ctx, before)
	if err != nil {
		return Pruned{}, err
	}
	var errs []error
	// Two rows may name one file; a file a row left standing still names
	// is kept.
	still, err := store.NamedFiles(ctx, p.Files)
	if err != nil {
		// The files stay for the next sweep, which checks them again.
		return p, fmt.Errorf("prune files: %w", err)
	}
	for _, f := range []struct {
		dir         string
		paths, keep []string
	}{
		{mediaDir, p.Files.Media, still.Media},
		{recordingsDir, p.Files.Recordings, still.Recordings},
	} {
		for _, rel := range f.paths {
			if slices.Contains(f.keep, rel) {
				continue
			}
			removed, err := removeFile(f.dir, rel)
			if err != nil {
				log.Error("history: pruned file not deleted", "dir", f.dir, "path", rel, "err", err)
				errs = append(errs, err)
			}
			if removed {
				p.Removed++
			}
		}
	}
	for _, f := range []struct {
		dir   string
		media bool
	}{{mediaDir, true}, {recordingsDir, false}} {
		n, err := sweep(ctx, store, f.dir, f.media, time.Now().Add(-OrphanAge), log)
		p.Orphans += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	if len(p.Files.Media)+len(p.Files.Recordings) > 0 || p.Tasks > 0 || p.Orphans > 0 {
		log.Info("history: pruned", "before", before, "tasks", p.Tasks, "steps", p.Steps,
			"sessions", p.Sessions, "files", p.Removed, "orphans", p.Orphans)
	}
	return p, errors.Join(errs...)
}

// removeFile deletes the file at rel, a path as the history keeps it, under
// dir, and then the folders between them that this leaves empty. It reports
// whether it deleted the file; one already gone is not an error.
func removeFile(dir, rel string) (bool, error) {
	if !localPath(rel) {
		return false, fmt.Errorf("%s: path %q is not inside the folder: %w", dir, rel, ErrInvalid)
	}
	full := filepath.Join(dir, filepath.FromSlash(rel))
	err := os.Remove(full)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	// The task folder of a pruned task's screenshots; os.Remove leaves
	// a folder that still holds something.
	for d := filepath.Dir(full); d != filepath.Clean(dir); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break
		}
	}
	return err == nil, nil
}

// sweep deletes the regular files under dir last modified before cutoff
// that no row names (media rows when media is true, else recording rows),
// then the folders under dir that were last modified before cutoff and are
// now empty. It returns the number of files deleted. A missing dir has
// nothing to sweep.
func sweep(ctx context.Context, store Store, dir string, media bool, cutoff time.Time, log *slog.Logger) (int, error) {
	var (
		n     int
		batch []string
		dirs  []string // old folders, parents first
		errs  []error
	)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		q := Files{Recordings: batch}
		if media {
			q = Files{Media: batch}
		}
		named, err := store.NamedFiles(ctx, q)
		if err != nil {
			return fmt.Errorf("sweep %s: %w", dir, err)
		}
		keep := named.Recordings
		if media {
			keep = named.Media
		}
		for _, rel := range batch {
			if _, ok := slices.BinarySearch(keep, rel); ok {
				continue
			}
			// A row naming a file written over an hour ago cannot be on
			// its way, so the check above cannot race with a writer.
			err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel)))
			switch {
			case err == nil:
				n++
				log.Info("history: orphan file deleted", "dir", dir, "path", rel)
			case !errors.Is(err, fs.ErrNotExist):
				log.Error("history: orphan file not deleted", "dir", dir, "path", rel, "err", err)
				errs = append(errs, err)
			}
		}
		batch = batch[:0]
		return nil
	}
	root := filepath.Clean(dir)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			// An unreadable folder is skipped, not the whole sweep.
			log.Warn("history: sweep skips", "path", p, "err", err)
			if p == root {
				return err
			}
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !d.IsDir() && !d.Type().IsRegular() {
			return nil // symbolic links and the like are not ours
		}
		info, err := d.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		if d.IsDir() {
			if p != root {
				dirs = append(dirs, p)
			}
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		batch = append(batch, filepath.ToSlash(rel))
		if len(batch) == sweepBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, errors.Join(append(errs, err)...)
	}
	// Deepest first. A folder that was old before the sweep and is empty
	// now held only orphans; os.Remove leaves one that is not empty.
	for _, d := range slices.Backward(dirs) {
		os.Remove(d)
	}
	return n, errors.Join(errs...)
}
