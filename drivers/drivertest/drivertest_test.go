package drivertest

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// quick keeps the suite's own tests short.
var quick = Options{PIN: fakePIN, SyncTimeout: time.Second, CaseTimeout: 15 * time.Second}

func TestRunFake(t *testing.T) {
	Run(t, Config{Driver: newFake(""), Options: quick})
}

// resultOf finds a case's result in a summary.
func resultOf(t *testing.T, sum Summary, name string) Result {
	t.Helper()
	for _, r := range sum.Results {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no result for case %q", name)
	return Result{}
}

func TestCheckFake(t *testing.T) {
	var out bytes.Buffer
	sum, err := Check(context.Background(), newFake(""), quick, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", out.String())
	if sum.Failed != 0 {
		t.Errorf("failed: got %d; want 0", sum.Failed)
	}
	if got, want := sum.Passed+sum.Failed+sum.Skipped, len(Cases()); got != want {
		t.Errorf("cases run: got %d; want %d", got, want)
	}
	// The fake serves everything and starts locked with a known PIN: no
	// case has a reason to skip.
	for _, r := range sum.Results {
		if r.Status != Pass {
			t.Errorf("case %s: got %s %q; want PASS", r.Name, r.Status, r.Messages)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last, want := lines[len(lines)-1], regexp.MustCompile(`^\d+ passed, \d+ failed, \d+ skipped$`); !want.MatchString(last) {
		t.Errorf("last line: got %q; want %q", last, want)
	}
	if !strings.Contains(out.String(), "PASS info") {
		t.Errorf("report: no line %q in\n%s", "PASS info", out.String())
	}
}

// TestCheckBroken runs the suite against fakes that each break one rule,
// and asserts that the case for that rule fails with a telling message.
func TestCheckBroken(t *testing.T) {
	tests := []struct {
		bug, failing, message string
	}{
		{"duplicate-ids", "screen-wellformed", "appears twice"},
		{"parent-after-child", "screen-wellformed", "comes after it"},
		{"unknown-offline", "unknown-device", "DEVICE_OFFLINE"},
		{"wake-unsupported", "capabilities", `declares "wake"`},
		{"wake-unsupported", "wake-idempotent", "UNSUPPORTED"},
		{"screenshot-size", "screenshot-png", "want the declared"},
		{"no-synced", "devices-sync", "no SYNCED event within"},
		{"max-side-ignored", "screenshot-max-side", "longer side at most"},
		{"video-no-config", "video-stream", "config packet"},
		{"any-pin", "unlock-wrong-pin", "want WRONG_PIN"},
		{"push-truncates", "files-round-trip", "wrote 1048576 bytes"},
		{"tap-no-effect", "act-tap-effect", "did not change"},
		{"off-screen", "screen-wellformed", "want them inside the 200x400 screen"},
		{"second-stream", "video-stream", "want BUSY"},
		{"remove-display-strict", "displays", "RemoveDisplay(1) #2"},
		{"delete-keeps", "files-delete", "DeleteFile"},
		{"notes-oldest-first", "notifications-list", "want newest first"},
		{"pinch-off-screen", "act-pinch", "centre right of the screen"},
		{"caps-video-unsupported", "device-capabilities", `device "fake-1" declares "video", but StreamVideo answers UNSUPPORTED`},
		{"caps-missing-served", "device-capabilities", `names "files", which the device also serves`},
		{"caps-no-reason", "device-capabilities", `missing "video" has no reason`},
	}
	for _, tt := range tests {
		t.Run(tt.bug+"/"+tt.failing, func(t *testing.T) {
			t.Parallel()
			opts := quick
			opts.Run = "^" + regexp.QuoteMeta(tt.failing) + "$"
			var out bytes.Buffer
			// A broken driver must not hang the check: it ends with its
			// cases' deadlines, well before this one (no timing asserted).
			ctx, cancel := context.WithTimeout(context.Background(), testkit.Scaled(60*time.Second))
			defer cancel()
			sum, err := Check(ctx, newFake(tt.bug), opts, &out)
			if err != nil {
				t.Fatal(err)
			}
			if ctx.Err() != nil {
				t.Fatalf("the check of a driver with bug %s did not end on its own:\n%s", tt.bug, out.String())
			}
			r := resultOf(t, sum, tt.failing)
			if r.Status != Fail {
				t.Fatalf("case %s: got %s; want FAIL. Report:\n%s", tt.failing, r.Status, out.String())
			}
			if msgs := strings.Join(r.Messages, "\n"); !strings.Contains(msgs, tt.message) {
				t.Errorf("case %s: messages %q; want one containing %q", tt.failing, msgs, tt.message)
			}
			if !strings.Contains(out.String(), "FAIL "+tt.failing) {
				t.Errorf("report: no FAIL line for %s in\n%s", tt.failing, out.String())
			}
		})
	}
}

// servesUndeclared serves Wake although the driver does not declare it,
// which no SDK driver can do: the check must catch a driver in another
// language that does.
type servesUndeclared struct {
	pb.DriverServiceServer
}

func (servesUndeclared) Wake(context.Context, *pb.WakeRequest) (*pb.WakeResponse, error) {
	return &pb.WakeResponse{}, nil
}

// noWake is a fake without sdk.Waker.
type noWake struct{ sdk.Driver }

// rawClient serves srv on a Unix socket with no SDK in between, as a
// driver in another language would, and returns a client of it.
func rawClient(t *testing.T, srv pb.DriverServiceServer) *sdk.Client {
	t.Helper()
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "driver.sock"))
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	pb.RegisterDriverServiceServer(g, srv)
	go g.Serve(lis)
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sdk.NewClient(conn, nil)
}

func TestCheckUndeclaredServed(t *testing.T) {
	c := rawClient(t, servesUndeclared{sdk.NewServer(noWake{newFake("")})})
	opts := quick
	opts.Run = "^capabilities$"
	var out bytes.Buffer
	sum, err := Check(context.Background(), c, opts, &out)
	if err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, sum, "capabilities")
	if r.Status != Fail || !strings.Contains(strings.Join(r.Messages, "\n"), `does not declare "wake"`) {
		t.Errorf("case capabilities: got %s %q; want FAIL about the undeclared wake. Report:\n%s", r.Status, r.Messages, out.String())
	}
}

// listsAnyPath answers ListFiles for any path, "..", "/etc" and all: the
// SDK's server refuses such paths before a Go driver sees them, so only a
// driver in another language can make this mistake.
type listsAnyPath struct {
	pb.DriverServiceServer
}

func (listsAnyPath) ListFiles(context.Context, *pb.ListFilesRequest) (*pb.ListFilesResponse, error) {
	return &pb.ListFilesResponse{}, nil
}

func TestCheckPathTraversal(t *testing.T) {
	c := rawClient(t, listsAnyPath{sdk.NewServer(newFake(""))})
	opts := quick
	opts.Run = "^files-bad-paths$"
	var out bytes.Buffer
	sum, err := Check(context.Background(), c, opts, &out)
	if err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, sum, "files-bad-paths")
	if r.Status != Fail || !strings.Contains(strings.Join(r.Messages, "\n"), `ListFiles("../x")`) {
		t.Errorf("case files-bad-paths: got %s %q; want FAIL naming ListFiles(\"../x\"). Report:\n%s", r.Status, r.Messages, out.String())
	}
}

// buildDriver builds a driver command of this module into a temporary folder.
func buildDriver(t *testing.T, pkg string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a driver binary")
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func TestCheckBinaryExample(t *testing.T) {
	bin := buildDriver(t, "github.com/pinky-gateway/pinky/drivers/sdk/example")
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sum, err := CheckBinary(ctx, bin, BinaryOptions{Options: Options{SyncTimeout: 5 * time.Second}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", out.String())
	if sum.Failed != 0 {
		t.Errorf("failed: got %d; want 0", sum.Failed)
	}
	// Without devices, only the device-free cases can pass.
	for _, name := range []string{"info", "capabilities", "devices-sync", "devices-two-watchers", "unknown-device"} {
		if r := resultOf(t, sum, name); r.Status != Pass {
			t.Errorf("case %s: got %s; want PASS", name, r.Status)
		}
	}
	for _, r := range sum.Results {
		if r.Status == Skip && len(r.Messages) == 0 {
			t.Errorf("case %s: skipped without a reason", r.Name)
		}
	}
}

func TestCheckBinaryNotADriver(t *testing.T) {
	_, err := CheckBinary(context.Background(), filepath.Join(t.TempDir(), "missing"), BinaryOptions{}, &bytes.Buffer{})
	if err == nil {
		t.Errorf("CheckBinary of a missing file: got no error; want one")
	}
}

// TestCheckBinaryShowsWhyItDied: a driver that exits before its handshake
// is reported with the last of what it wrote to stderr.
func TestCheckBinaryShowsWhyItDied(t *testing.T) {
	script := filepath.Join(t.TempDir(), "pinky-driver-dies")
	body := "#!/bin/sh\necho 'pinky-driver-dies: no phone list: set PINKY_HOME' >&2\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := CheckBinary(context.Background(), script, BinaryOptions{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "no phone list: set PINKY_HOME") {
		t.Errorf("CheckBinary of a driver that dies: %v; want the error to quote its stderr", err)
	}
}

func TestCheckBadFilter(t *testing.T) {
	_, err := Check(context.Background(), newFake(""), Options{Run: "("}, &bytes.Buffer{})
	if err == nil {
		t.Errorf("Check with filter %q: got no error; want one", "(")
	}
}

func TestNoDevicesOption(t *testing.T) {
	opts := quick
	opts.NoDevices = true
	sum, err := Check(context.Background(), newFake(""), opts, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Cases() {
		r := resultOf(t, sum, c.Name)
		if c.NeedsDevice && r.Status != Skip {
			t.Errorf("case %s with NoDevices: got %s; want SKIP", c.Name, r.Status)
		}
	}
}

func TestCaseNames(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, c := range Cases() {
		if !re.MatchString(c.Name) {
			t.Errorf("case name %q; want lowercase words joined by dashes", c.Name)
		}
		if seen[c.Name] {
			t.Errorf("case name %q is used twice", c.Name)
		}
		seen[c.Name] = true
		if c.Doc == "" || c.run == nil {
			t.Errorf("case %q: no doc or no run function", c.Name)
		}
	}
}

// TestCLIT checks the runner's T: Fatalf and Skipf end the case, cleanups
// run last first even after a Fatalf, and a panic is a failure.
func TestCLIT(t *testing.T) {
	s := newSuite(nil, Options{CaseTimeout: time.Second})
	var order []int
	tests := []struct {
		name string
		run  func(T, *suite)
		want Status
	}{
		{"pass", func(t T, _ *suite) { t.Logf("fine") }, Pass},
		{"fatal", func(t T, _ *suite) {
			t.Cleanup(func() { order = append(order, 1) })
			t.Cleanup(func() { order = append(order, 2); t.Fatalf("in cleanup") })
			t.Fatalf("stop")
			t.Errorf("not reached")
		}, Fail},
		{"skip", func(t T, _ *suite) { t.Skipf("why") }, Skip},
		{"panic", func(T, *suite) { panic("boom") }, Fail},
	}
	for _, tt := range tests {
		r := runOne(context.Background(), s, Case{Name: tt.name, run: tt.run})
		if r.Status != tt.want {
			t.Errorf("%s: got %s %q; want %s", tt.name, r.Status, r.Messages, tt.want)
		}
	}
	if got := len(order); got != 2 || order[0] != 2 || order[1] != 1 {
		t.Errorf("cleanup order: got %v; want [2 1]", order)
	}
}

// actsOnAnything answers every Act with success, as a driver in another
// language that ignores what it cannot read might.
type actsOnAnything struct {
	pb.DriverServiceServer
}

func (actsOnAnything) Act(context.Context, *pb.ActRequest) (*pb.ActResponse, error) {
	return &pb.ActResponse{}, nil
}

// predatesPinch answers a pinch as a driver built before the field: the
// request carries no action it knows.
type predatesPinch struct {
	pb.DriverServiceServer
}

func (p predatesPinch) Act(ctx context.Context, r *pb.ActRequest) (*pb.ActResponse, error) {
	if r.GetPinch() != nil {
		return nil, status.Error(codes.InvalidArgument, "the request carries no action")
	}
	return p.DriverServiceServer.Act(ctx, r)
}

// hidesPinch is the fake declaring no pinch.
type hidesPinch struct{ *fake }

func (hidesPinch) Pinches() bool { return false }

func TestCheckPinchUndeclared(t *testing.T) {
	tests := []struct {
		name string
		c    *sdk.Client
		want Status
	}{
		{"refused by the SDK", rawClient(t, sdk.NewServer(hidesPinch{newFake("")})), Pass},
		{"refused by an older driver", rawClient(t, predatesPinch{sdk.NewServer(hidesPinch{newFake("")})}), Pass},
		{"done although undeclared", rawClient(t, actsOnAnything{sdk.NewServer(hidesPinch{newFake("")})}), Fail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := quick
			opts.Run = "^act-pinch$"
			var out bytes.Buffer
			sum, err := Check(context.Background(), tt.c, opts, &out)
			if err != nil {
				t.Fatal(err)
			}
			if r := resultOf(t, sum, "act-pinch"); r.Status != tt.want {
				t.Errorf("case act-pinch: got %s %q; want %s. Report:\n%s", r.Status, r.Messages, tt.want, out.String())
			}
		})
	}
}

// TestCheckDeviceLacks: a device that lacks video, says so with a reason
// and answers UNSUPPORTED for it passes; its video case skips with the
// device's reason and fix.
func TestCheckDeviceLacks(t *testing.T) {
	var out bytes.Buffer
	sum, err := Check(context.Background(), newFake("caps-lacks-video"), quick, &out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", out.String())
	if sum.Failed != 0 {
		t.Errorf("failed: got %d; want 0", sum.Failed)
	}
	r := resultOf(t, sum, "video-stream")
	if r.Status != Skip || !strings.Contains(strings.Join(r.Messages, " "), "no encoder on this fake (fix: install one)") {
		t.Errorf("video-stream: got %s %q; want SKIP with the device's reason and fix", r.Status, r.Messages)
	}
	if r := resultOf(t, sum, "device-capabilities"); r.Status != Pass {
		t.Errorf("device-capabilities: got %s %q; want PASS", r.Status, r.Messages)
	}
}

// TestSuiteFollowsChanged: a CHANGED event after SYNCED that takes wake
// away reaches the suite, which then reads the device as lacking it.
func TestSuiteFollowsChanged(t *testing.T) {
	drv, stop, err := connect(newFake("caps-changed"))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	s := newSuite(drv, quick)
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ct := &cliT{ctx: ctx, cancel: cancel}
	if !s.current(ct).Serves(sdk.CapFiles, s.getInfo(ct).Capabilities) {
		t.Fatalf("device %q: got files not served; want served", fakeID)
	}
	for s.serves(ct, sdk.CapWake) { // until the CHANGED event is read; the context bounds a suite that never reads it
		select {
		case <-ctx.Done():
			t.Fatalf("the suite still reads wake as served after the CHANGED event that removed it: %v", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if got := s.lacks(ct, sdk.CapWake); !strings.Contains(got, "the power button is taped over") {
		t.Errorf("lacks(wake): got %q; want the CHANGED event's reason", got)
	}
}
