package driverhost

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// hostDriver is a phone host's driver as a test fakes it: it lists ids,
// records the device ids its actions name, and blocks the back key
// until its context ends.
type hostDriver struct {
	ids []string

	mu     sync.Mutex
	acted  []string
	inside chan struct{} // receives when a "wait" action has begun
}

func (d *hostDriver) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "sim", Version: "9.9"}, nil
}

func (d *hostDriver) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	for _, id := range d.ids {
		if err := send(sdk.DeviceEvent{Kind: sdk.DeviceAdded, Device: sdk.Device{ID: id, Name: id, Platform: sdk.PlatformAndroid, State: sdk.StateOnline}}); err != nil {
			return err
		}
	}
	if err := send(sdk.DeviceEvent{Kind: sdk.DevicesSynced}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func (d *hostDriver) Screen(context.Context, string, int) (*sdk.Screen, error) {
	return nil, sdk.ErrUnsupported
}

func (d *hostDriver) Screenshot(context.Context, sdk.ScreenshotRequest) (*sdk.Image, error) {
	return nil, sdk.ErrUnsupported
}

func (d *hostDriver) Act(ctx context.Context, id string, a sdk.Action) (sdk.ActResult, error) {
	d.mu.Lock()
	d.acted = append(d.acted, id)
	d.mu.Unlock()
	if a.Kind == sdk.ActKey && a.Key == sdk.KeyBack {
		d.inside <- struct{}{}
		<-ctx.Done()
		return sdk.ActResult{}, ctx.Err()
	}
	return sdk.ActResult{Detail: "done on " + id}, nil
}

func (d *hostDriver) actedOn() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.acted...)
}

// link serves d as a phone host's link does (the driver contract over one
// connection) and returns the client, the link's gone channel and a
// function that cuts the link.
func link(t *testing.T, d sdk.Driver) (*sdk.Client, <-chan struct{}, func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	pb.RegisterDriverServiceServer(srv, sdk.NewServer(d))
	go srv.Serve(lis) //nolint:errcheck // ends with Stop
	cc, err := grpc.NewClient("passthrough:///host",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan struct{})
	var once sync.Once
	cut := func() {
		once.Do(func() {
			close(gone)
			cc.Close()
			srv.Stop()
		})
	}
	t.Cleanup(cut)
	return sdk.NewClient(cc, gone), gone, cut
}

func remoteDevice(h *Host, id string) (Device, bool) {
	for _, d := range h.Devices() {
		if d.ID == id {
			return d, true
		}
	}
	return Device{}, false
}

func TestRemoteHost(t *testing.T) {
	h := New(testConfig(t.TempDir()))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer h.Stop()

	a := &hostDriver{ids: []string{"pixel", "only-a"}, inside: make(chan struct{}, 1)}
	b := &hostDriver{ids: []string{"pixel"}, inside: make(chan struct{}, 1)}
	ca, gonea, cuta := link(t, a)
	h.AddRemote("closet", ca, gonea)
	waitFor(t, 5*time.Second, "closet's phones listed", func() bool {
		d, ok := remoteDevice(h, "only-a")
		return ok && d.Online && status(h, "host:closet").State == StateLinked
	})
	cb, goneb, _ := link(t, b)
	h.AddRemote("mac", cb, goneb)
	waitFor(t, 5*time.Second, "mac's phone listed", func() bool {
		d, ok := remoteDevice(h, "mac/pixel")
		return ok && d.Online
	})

	// The clash: the host listed second has its id qualified, the first
	// keeps it, and each id reaches its own host's driver as its bare id.
	for _, c := range []struct {
		id, host string
		drv      *hostDriver
	}{{"pixel", "closet", a}, {"mac/pixel", "mac", b}, {"only-a", "closet", a}} {
		dev, ok := remoteDevice(h, c.id)
		if !ok || dev.Host != c.host || dev.Driver != RemotePrefix+c.host {
			t.Fatalf("device %s: %+v (listed %v), want host %s", c.id, dev, ok, c.host)
		}
		drv, name, err := h.DriverForDevice(c.id)
		if err != nil || name != RemotePrefix+c.host {
			t.Fatalf("DriverForDevice(%s) = %s, %v", c.id, name, err)
		}
		if _, err := drv.Act(context.Background(), c.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
			t.Fatalf("act on %s: %v", c.id, err)
		}
	}
	if got := b.actedOn(); len(got) != 1 || got[0] != "pixel" {
		t.Fatalf("mac's driver was asked for %v, want [pixel]", got)
	}

	// A link cut in the middle of an action: the call fails as a gone
	// driver (the gateway's uncertain), the phones go offline and the host
	// shows unlinked.
	drv, _, _ := h.DriverForDevice("only-a")
	errc := make(chan error, 1)
	go func() {
		_, err := drv.Act(context.Background(), "only-a", sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack})
		errc <- err
	}()
	<-a.inside
	cuta()
	if err := <-errc; !errors.Is(err, sdk.ErrDriverGone) {
		t.Fatalf("action cut by the link: %v, want ErrDriverGone", err)
	}
	waitFor(t, 5*time.Second, "closet unlinked", func() bool {
		d, _ := remoteDevice(h, "only-a")
		s := status(h, "host:closet")
		return !d.Online && s.State == StateUnlinked && !s.UnlinkedAt.IsZero()
	})
	if _, err := drv.Act(context.Background(), "only-a", sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); !errors.Is(err, sdk.ErrDriverGone) {
		t.Fatalf("act while unlinked: %v, want ErrDriverGone", err)
	}
	if d, _ := remoteDevice(h, "mac/pixel"); !d.Online {
		t.Fatal("the other host's phone went offline with the first host's link")
	}

	// The host links again: the same ids, online, through the same handle.
	ca2, gonea2, _ := link(t, a)
	h.AddRemote("closet", ca2, gonea2)
	waitFor(t, 5*time.Second, "closet linked again", func() bool {
		d, ok := remoteDevice(h, "only-a")
		p, okp := remoteDevice(h, "pixel")
		return ok && d.Online && okp && p.Online && status(h, "host:closet").State == StateLinked
	})
	if _, err := drv.Act(context.Background(), "only-a", sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
		t.Fatalf("act after the host linked again: %v", err)
	}
	if err := h.Restart(context.Background(), "host:closet"); err == nil {
		t.Fatal("Restart of a phone host's link succeeded; want a refusal that says where to restart it")
	}
}
