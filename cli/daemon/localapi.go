package daemon

import (
	"context"
	"encoding/json"
	"os"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/doctor"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// registerAPI registers every method of the local API, the person's CLI
// and web console's way into the daemon, in one table. Each handler takes
// the method's params and returns its result as the wire types of package
// api; the handlers live next to the part of the daemon they serve. New
// calls it once, before the socket listens.
func (g *Gateway) registerAPI() {
	s := g.api
	// The daemon, its drivers and the phones.
	api.Handle(s, api.MethodStatus, g.status)
	api.Handle(s, api.MethodStop, g.stopDaemon)
	api.Handle(s, api.MethodDrivers, g.listDrivers)
	api.Handle(s, api.MethodDriverRestart, g.restartDriver)
	api.Handle(s, api.MethodDriverAttach, g.attachDriver)
	api.Handle(s, api.MethodDriverChecks, g.driverChecks)
	api.Handle(s, api.MethodDevices, g.listDevices)
	api.Handle(s, api.MethodScreen, g.screen)
	// The phone hosts (hosts.go).
	api.Handle(s, api.MethodHosts, g.listHosts)
	api.Handle(s, api.MethodHostAdd, g.addHost)
	api.Handle(s, api.MethodHostRemove, g.removeHost)
	// The person's controls (person.go, input.go).
	api.Handle(s, api.MethodLeases, g.listLeases)
	api.Handle(s, api.MethodStopLease, g.stopLeases)
	api.Handle(s, api.MethodTakeOver, g.takeOver)
	api.Handle(s, api.MethodHandBack, g.handBack)
	api.Handle(s, api.MethodUnlock, g.unlock)
	api.Handle(s, api.MethodInput, g.input)
	// Approvals (approvals.go): the only path to a decision.
	api.Handle(s, api.MethodApprovals, g.listApprovals)
	api.Handle(s, api.MethodDecide, g.decide)
	// The history, its export (picture.go) and the event log (events_wiring.go).
	api.Handle(s, api.MethodTasks, g.listTasks)
	api.Handle(s, api.MethodTask, g.showTask)
	api.Handle(s, api.MethodExport, g.exportTasks)
	api.Handle(s, api.MethodEvents, g.eventsSince)
	// The settings (input.go) and the web console (picture.go).
	api.Handle(s, api.MethodSettings, g.getSettings)
	api.Handle(s, api.MethodSetSettings, g.setSettings)
	api.Handle(s, api.MethodConsoleLink, g.consoleLink)
}

// status is the daemon's state at a glance.
func (g *Gateway) status(context.Context, api.NoParams) (api.Status, error) {
	return api.Status{
		Pid: os.Getpid(), Version: Version, Home: g.cfg.Dirs.Home, Socket: g.cfg.Dirs.Socket(), HTTP: g.httpAddr, Console: g.consoleAddr(),
		Started: g.started, Drivers: g.drivers(), Devices: g.devices(), Leases: apiLeases(g.agents.Leases()), History: g.history(),
		Hosts: g.statusHosts(),
	}, nil
}

// stopDaemon tells Run to stop; the answer goes out before the socket closes.
func (g *Gateway) stopDaemon(context.Context, api.NoParams) (api.Empty, error) {
	select {
	case <-g.stop:
	default:
		close(g.stop)
	}
	return api.Empty{}, nil
}

func (g *Gateway) listDrivers(context.Context, api.NoParams) ([]api.Driver, error) {
	return g.drivers(), nil
}

// driverChecks lists the checks the drivers log of themselves, read as
// `pinky doctor` reads them, so that the console says the same.
func (g *Gateway) driverChecks(context.Context, api.NoParams) ([]api.DriverCheck, error) {
	out := []api.DriverCheck{}
	for _, d := range g.drivers() {
		for _, c := range doctor.DriverChecks(d.Stderr) {
			out = append(out, api.DriverCheck{Driver: d.Name, Check: c.Name, OK: c.OK, Detail: c.Msg, Fix: c.Fix})
		}
	}
	return out, nil
}

func (g *Gateway) restartDriver(ctx context.Context, n api.DriverName) (api.Driver, error) {
	if err := g.host.Restart(ctx, n.Name); err != nil {
		return api.Driver{}, err
	}
	return g.driver(n.Name)
}

func (g *Gateway) attachDriver(ctx context.Context, a api.AttachParams) (api.Driver, error) {
	if err := g.host.Attach(ctx, a.Name, sdk.Reattach{Network: a.Network, Addr: a.Addr, Pid: a.Pid}); err != nil {
		return api.Driver{}, err
	}
	return g.driver(a.Name)
}

func (g *Gateway) listDevices(context.Context, api.NoParams) ([]api.Device, error) {
	return g.devices(), nil
}

// screen reads a phone's screen as its driver gives it (the driver
// contract's type is the wire type here).
func (g *Gateway) screen(ctx context.Context, d api.DeviceParams) (*sdk.Screen, error) {
	drv, _, err := g.host.DriverForDevice(d.Device)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return drv.Screen(ctx, d.Device, 0)
}

func (g *Gateway) listTasks(ctx context.Context, f api.TaskFilter) ([]api.Task, error) {
	ts, err := g.store.Tasks(ctx, history.TaskFilter{Device: f.Device, Limit: f.Limit})
	if err != nil {
		return nil, err
	}
	out := make([]api.Task, len(ts))
	for i, t := range ts {
		out[i] = apiTask(t)
	}
	return out, nil
}

// showTask is a task with its steps and the approvals it asked for.
func (g *Gateway) showTask(ctx context.Context, id api.TaskID) (api.TaskDetail, error) {
	t, steps, err := g.store.Task(ctx, id.ID)
	if err != nil {
		return api.TaskDetail{}, err
	}
	out := api.TaskDetail{Task: apiTask(t)}
	if t.Recording {
		if r, err := g.store.Recording(ctx, id.ID); err == nil {
			out.RecordingMS = r.Duration.Milliseconds()
		}
	}
	for _, s := range steps {
		out.StepList = append(out.StepList, api.Step{
			Seq: s.Seq, Tool: s.Tool, Args: json.RawMessage(s.Args), Outcome: s.Outcome, Message: s.Message,
			Diff: s.Diff, StartedAt: s.StartedAt, DurationMS: s.Duration.Milliseconds(), Before: s.Before, After: s.After,
			VideoAtMS: videoAt(s.VideoAt),
		})
	}
	aps, err := g.store.Approvals(ctx, id.ID)
	if err != nil {
		return api.TaskDetail{}, err
	}
	for _, a := range aps {
		out.Approvals = append(out.Approvals, apiApproval(a))
	}
	return out, nil
}
