package agent

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/history"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// TestFromDriverCategories: every condition a driver names reads to the
// agent with its own code and keeps the driver's message; only what may
// have reached the phone is uncertain.
func TestFromDriverCategories(t *testing.T) {
	msg := `device "x": the message field is not focused`
	tests := []struct {
		name   string
		cat    *sdk.Error
		acting bool
		code   Code
		text   []string // each must be in the agent's sentence
	}{
		{"no focus", sdk.ErrNoFocus, true, CodeInvalidArgument, []string{"tap the field first", msg}},
		{"screen protected", sdk.ErrScreenProtected, false, CodeUnsupported, []string{"without a screenshot", msg}},
		{"unlock method", sdk.ErrUnlockMethod, false, CodeDeviceLocked, []string{"phone_ask_person", msg}},
		{"storage full while pushing", sdk.ErrStorageFull, true, CodeUnsupported, []string{"storage of x is full", msg}},
		{"bare failed precondition", sdk.ErrFailedPrecondition, true, CodeUnsupported, []string{msg}},
		{"bare resource exhausted", sdk.ErrResourceExhausted, true, CodeUnsupported, []string{msg}},
		{"locked", sdk.ErrLocked, true, CodeDeviceLocked, []string{"ask the person to unlock"}},
		{"invalid", sdk.ErrInvalidArgument, true, CodeInvalidArgument, []string{msg}},
		{"app not found", sdk.ErrAppNotFound, false, CodeNotFound, []string{msg, "phone_apps"}},
		{"unsupported", sdk.ErrUnsupported, false, CodeUnsupported, []string{msg}},
		{"internal while acting", sdk.ErrInternal, true, CodeUncertain, []string{"may or may not", msg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := wantCode(t, tt.name, fromDriver("x", sdk.Errorf(tt.cat, "%s", msg), tt.acting), tt.code)
			for _, s := range tt.text {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q; want it to contain %q", e.Message, s)
				}
			}
			if strings.Contains(e.Message, ": "+tt.cat.Error()) && tt.cat != sdk.ErrInternal {
				t.Errorf("message %q; want it without the category's suffix %q", e.Message, tt.cat.Error())
			}
		})
	}
}

// TestDefinite: the conditions a driver names (and the bare codes SPEC.md
// says did not happen) are definite; a fault or a timeout is not.
func TestDefinite(t *testing.T) {
	for _, cat := range definiteErrors {
		if !definite(sdk.Errorf(cat.(*sdk.Error), "x")) {
			t.Errorf("definite(%v): got false; want true", cat)
		}
	}
	for _, cat := range []*sdk.Error{sdk.ErrInternal, sdk.ErrTimeout, sdk.ErrDeviceOffline, sdk.ErrDriverGone, sdk.ErrBusy} {
		if definite(sdk.Errorf(cat, "x")) {
			t.Errorf("definite(%v): got true; want false", cat)
		}
	}
}

// TestDriverMessageIsSafe: what the driver writes reaches the agent with
// its controls visible and its length bounded.
func TestDriverMessageIsSafe(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "no field", "no field"},
		{"escape sequence", "evil\x1b[2J\nfake", `evil\x1b[2J\nfake`},
		{"bidi control", "pay \u202e001$", `pay ‹U+202E›001$`},
		{"empty is the category", "", "no text field has the focus"},
		{"long is cut", strings.Repeat("a", 1000), strings.Repeat("a", maxDriverMessage-1) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := error(sdk.ErrNoFocus)
			if tt.in != "" {
				err = sdk.Errorf(sdk.ErrNoFocus, "%s", tt.in)
			}
			if got := driverMessage(err); got != tt.want {
				t.Errorf("driverMessage: got %q; want %q", got, tt.want)
			}
		})
	}
}

// bareDriver answers Act with a status that has no error detail, as a
// driver in another language may.
type bareDriver struct {
	pb.UnimplementedDriverServiceServer
	code codes.Code
	msg  string
}

func (b bareDriver) Act(context.Context, *pb.ActRequest) (*pb.ActResponse, error) {
	return nil, status.Error(b.code, b.msg)
}

// TestFromDriverBareCodesOverTheWire: a bare FAILED_PRECONDITION (typing
// with no focused field) is not device_locked, a bare RESOURCE_EXHAUSTED
// (storage full) is not uncertain, and both keep the driver's message,
// through a real gRPC connection and the SDK's client.
func TestFromDriverBareCodesOverTheWire(t *testing.T) {
	tests := []struct {
		code codes.Code
		msg  string
	}{
		{codes.FailedPrecondition, "no text field has the focus; tap one first"},
		{codes.ResourceExhausted, "the phone's storage is full: 12 KiB left"},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			c := bareClient(t, bareDriver{code: tt.code, msg: tt.msg})
			_, err := c.Act(context.Background(), "x", sdk.Action{Kind: sdk.ActType, Text: "hi"})
			if err == nil {
				t.Fatal("Act: got no error; want the driver's")
			}
			e, ok := AsError(fromDriver("x", err, true))
			if !ok {
				t.Fatalf("fromDriver(%v): not an agent error", err)
			}
			if e.Code == CodeDeviceLocked || e.Code == CodeUncertain {
				t.Errorf("code: got %s; want neither device_locked nor uncertain", e.Code)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q; want the driver's %q in it", e.Message, tt.msg)
			}
		})
	}
}

func bareClient(t *testing.T, srv pb.DriverServiceServer) *sdk.Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	g := grpc.NewServer()
	pb.RegisterDriverServiceServer(g, srv)
	go g.Serve(lis) //nolint:errcheck // Serve returns when Stop closes the listener
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("passthrough:///bare",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sdk.NewClient(conn, nil)
}

// refuses is a driver that answers sdk.ErrUnsupported with its message at
// call time to actions of one kind (kind), and to screenshots, apps and
// notifications when shots, apps or notes is set, as a driver does that
// finds out only then (the Android driver typing what adb cannot, an
// iPhone whose broadcast dropped). before runs first when set, as a device
// update that arrives during the call.
type refuses struct {
	sdk.Driver
	kind               sdk.ActionKind
	shots, apps, notes bool
	msg                string
	before             func()
}

func (r refuses) no() error {
	if r.before != nil {
		r.before()
	}
	return sdk.Errorf(sdk.ErrUnsupported, "%s", r.msg)
}

func (r refuses) Act(ctx context.Context, id string, a sdk.Action) (sdk.ActResult, error) {
	if a.Kind == r.kind {
		return sdk.ActResult{}, r.no()
	}
	return r.Driver.Act(ctx, id, a)
}

func (r refuses) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	if r.shots {
		return nil, r.no()
	}
	return r.Driver.Screenshot(ctx, req)
}

func (r refuses) CaptureFrame(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	if r.shots {
		return nil, r.no()
	}
	return sdk.Complete(r.Driver).CaptureFrame(ctx, req)
}

func (r refuses) ListApps(ctx context.Context, id string) ([]sdk.App, error) {
	if r.apps {
		return nil, r.no()
	}
	return sdk.Complete(r.Driver).ListApps(ctx, id)
}

func (r refuses) ListNotifications(ctx context.Context, id string) ([]sdk.Notification, error) {
	if r.notes {
		return nil, r.no()
	}
	return sdk.Complete(r.Driver).ListNotifications(ctx, id)
}

// TestUnsupportedAtCallTime: a driver's unsupported answer that the
// phone's capabilities did not foresee tells the agent what its call
// tried, keeps the driver's message (escaped) and says what to do next; a
// phone that lists the capability as missing by then gives the foreseen
// answer, with the person's fix.
func TestUnsupportedAtCallTime(t *testing.T) {
	const dev = "sim-android-1"
	ctx := context.Background()
	typeText := func(s *Session) error {
		_, err := s.Act(ctx, dev, Action{Tool: ToolType, Kind: "type", Target: Target{Text: "Text message"}, Text: "¡Olé!"}, nil)
		return err
	}
	tests := []struct {
		name  string
		drv   refuses
		lack  *sdk.MissingCap // the phone lists this missing when the driver refuses
		call  func(s *Session) error
		want  []string // each in the answer
		avoid []string // none in the answer
	}{
		{"typing", refuses{kind: sdk.ActType, msg: `emulator-5554: this text needs the scrcpy server (adb shell input types only printable ASCII); nothing was typed; to enable it: install scrcpy 3.x.`}, nil, typeText,
			[]string{dev + ` cannot type that text: emulator-5554: this text needs the scrcpy server (adb shell input types only printable ASCII); nothing was typed; to enable it: install scrcpy 3.x. `,
				"Observe first (a tap that focused the field may have run), then type it in parts the phone can take, or ask the person with phone_ask_person"},
			[]string{"cannot do that", "it..", "The person can enable it"}},
		{"scrolling", refuses{kind: sdk.ActScroll, msg: "scroll needs the scrcpy server on this computer"}, nil, func(s *Session) error {
			_, err := s.Act(ctx, dev, Action{Tool: ToolScroll, Kind: "scroll", Direction: "down"}, nil)
			return err
		}, []string{dev + " cannot scroll: scroll needs the scrcpy server on this computer. ", "Swipe with phone_swipe"}, nil},
		{"a key", refuses{kind: sdk.ActKey, msg: "an iPhone has no back key"}, nil, func(s *Session) error {
			_, err := s.Act(ctx, dev, Action{Tool: ToolKey, Kind: "key", Key: "back"}, nil)
			return err
		}, []string{dev + " cannot press that key: an iPhone has no back key. ", "its back button"}, nil},
		{"a screenshot", refuses{shots: true, msg: "the broadcast stopped"}, nil, func(s *Session) error {
			_, err := s.Observe(ctx, dev, false, true)
			return err
		}, []string{dev + " cannot take a screenshot: the broadcast stopped. ", "Observe without a screenshot"}, nil},
		{"apps, with a capability's wording", refuses{apps: true, msg: "the package manager did not answer"}, nil, func(s *Session) error {
			_, err := s.Apps(ctx, dev)
			return err
		}, []string{dev + " cannot list its apps: the package manager did not answer. ", lacks[sdk.CapApps].instead[1:]}, []string{"enable it"}},
		{"notifications the phone now lacks", refuses{notes: true, msg: "no listener"}, &sdk.MissingCap{Reason: "the listener was turned off", Fix: "turn on notification access for Pinky"}, func(s *Session) error {
			_, err := s.Notifications(ctx, dev)
			return err
		}, []string{dev + " cannot list its notifications: the listener was turned off. The person can enable it: turn on notification access for Pinky.", "phone_ask_person"},
			[]string{"no listener"}},
		{"a driver's controls are shown", refuses{kind: sdk.ActType, msg: "evil\x1b[2J\u202efake"}, nil, typeText,
			[]string{`evil\x1b[2J`}, []string{"\x1b", "\u202e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			s := f.session(t, "agent")
			inThread(t, f, s)
			r := tt.drv
			if tt.lack != nil {
				c := map[bool]sdk.Capability{true: sdk.CapNotifications, false: sdk.CapApps}[r.notes]
				r.before = func() { f.drv.lack(c, *tt.lack) }
			}
			f.drv.wrap = func(d sdk.Driver) sdk.Driver { r.Driver = d; return r }
			e := wantCode(t, tt.name, tt.call(s), CodeUnsupported)
			for _, w := range tt.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("got %q; want it to say %q", e.Message, w)
				}
			}
			for _, a := range tt.avoid {
				if strings.Contains(e.Message, a) {
					t.Errorf("got %q; want it not to say %q", e.Message, a)
				}
			}
			// The history keeps what the agent was told.
			tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
			_, steps, _ := f.store.Task(ctx, tasks[0].ID)
			if last := steps[len(steps)-1]; last.Outcome != string(CodeUnsupported) || last.Message != e.Message {
				t.Errorf("last step %q %q; want %q %q", last.Outcome, last.Message, CodeUnsupported, e.Message)
			}
		})
	}
}
