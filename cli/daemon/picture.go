package daemon

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/console"
	"github.com/pinky-gateway/pinky/gateway/export"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// DefaultConsoleAddr is where the web console listens unless told
// otherwise; when that port is taken the daemon takes a free one (pinky
// open always gives the right link).
const DefaultConsoleAddr = "127.0.0.1:4777"

// pruneEvery is how often the history's retention runs after the start.
const pruneEvery = 24 * time.Hour

// startConsole serves the web console; it returns the function that stops it.
func (g *Gateway) startConsole() (func(), error) {
	addr := g.cfg.ConsoleAddr
	if addr == "" {
		addr = DefaultConsoleAddr
	}
	srv, err := g.newConsole(addr)
	if err != nil {
		return nil, err
	}
	got, err := srv.Start()
	if err != nil && g.cfg.ConsoleAddr == "" {
		g.log.Warn("the console's usual port is taken; using a free one", "addr", addr, "err", err)
		if srv, err = g.newConsole("127.0.0.1:0"); err == nil {
			got, err = srv.Start()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("web console: %w", err)
	}
	g.console = srv
	g.log.Info("web console ready; pinky open logs you in", "addr", got)
	return func() { srv.Close() }, nil
}

func (g *Gateway) newConsole(addr string) (*console.Server, error) {
	return console.New(console.Config{
		Addr: addr,
		Call: g.api.Call,
		Mirror: func(ctx context.Context, device string, display int) (console.Packets, error) {
			return g.screens.JoinDisplay(ctx, device, display)
		},
		Still: g.still,
		Media: func(ctx context.Context, id string) (string, error) {
			m, err := g.store.Media(ctx, id)
			if err != nil {
				return "", err
			}
			return filepath.Join(g.cfg.Dirs.Media(), filepath.FromSlash(m.Path)), nil
		},
		Recording: func(ctx context.Context, task string) (string, error) {
			r, err := g.store.Recording(ctx, task)
			if err != nil {
				return "", err
			}
			return filepath.Join(g.cfg.Dirs.Recordings(), filepath.FromSlash(r.Path)), nil
		},
		Export: g.export,
		Logger: g.log.With("part", "console"),
	})
}

// still is a JPEG of a phone screen now, for the console's mirror while no
// video comes. An iPhone's driver gives it from the broadcast when one runs.
func (g *Gateway) still(ctx context.Context, device string, display int) ([]byte, error) {
	drv, _, err := g.host.DriverForDevice(device)
	if err != nil {
		return nil, err
	}
	img, err := drv.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: device, DisplayID: display, Format: sdk.FormatJPEG, MaxSide: 1280, Quality: 70})
	if err != nil {
		return nil, err
	}
	return img.Data, nil
}

// export writes the tasks' report folder.
func (g *Gateway) export(ctx context.Context, tasks []string, dir string) error {
	return export.Write(ctx, export.Source{Store: g.store, MediaDir: g.cfg.Dirs.Media(), RecordingsDir: g.cfg.Dirs.Recordings()}, tasks, dir)
}

// consoleLink makes a one-time login link to the web console.
func (g *Gateway) consoleLink(context.Context, api.NoParams) (api.ConsoleLink, error) {
	if g.console == nil {
		return api.ConsoleLink{}, errors.New("the web console is off in this daemon (started with --console off)")
	}
	return api.ConsoleLink{URL: g.console.Link()}, nil
}

// exportTasks writes the named tasks' report folder.
func (g *Gateway) exportTasks(ctx context.Context, e api.ExportParams) (api.ExportResult, error) {
	if len(e.Tasks) == 0 || e.Dir == "" {
		return api.ExportResult{}, errors.New("name the tasks and the folder to write")
	}
	if !filepath.IsAbs(e.Dir) {
		return api.ExportResult{}, fmt.Errorf("the export folder must be an absolute path, not %q", e.Dir)
	}
	if err := g.export(ctx, e.Tasks, e.Dir); err != nil {
		return api.ExportResult{}, err
	}
	return api.ExportResult{Index: filepath.Join(e.Dir, "index.html")}, nil
}

// retain deletes what the person's retention setting says is too old, at
// start, daily, and when the setting changes, until ctx ends.
func (g *Gateway) retain(ctx context.Context, changed <-chan struct{}) {
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		g.prune(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-changed:
		}
	}
}

func (g *Gateway) prune(ctx context.Context) {
	days := g.settings.Get().RetentionDays
	if days <= 0 {
		return
	}
	before := time.Now().Add(-time.Duration(days) * 24 * time.Hour)
	p, err := history.PruneFiles(ctx, g.store, g.cfg.Dirs.Media(), g.cfg.Dirs.Recordings(), before, g.log)
	if p.Tasks > 0 || p.Orphans > 0 {
		g.log.Info("retention: deleted old tasks", "days", days, "tasks", p.Tasks, "files", p.Removed, "orphans", p.Orphans)
	}
	if err != nil {
		// Rows already pruned stay pruned; a file left behind is swept as an
		// orphan next time.
		g.log.Error("retention", "days", days, "err", err)
	}
}
