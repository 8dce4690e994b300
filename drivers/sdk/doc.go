// Package sdk is what a phone driver written in Go imports to plug into the
// Pinky gateway, and what the gateway uses to talk to drivers.
//
// # Writing a driver
//
// A driver is a program named pinky-driver-NAME. The gateway starts it as a
// child process and talks to it over gRPC (hashicorp/go-plugin); the driver
// never sees the gateway's code, and a crashing driver never takes the
// gateway down.
//
// 1. Implement [Driver]: five methods that every driver serves.
//
//	type phone struct{ /* your connection to the phones */ }
//
//	func (p *phone) Info(ctx context.Context) (sdk.Info, error) {
//		return sdk.Info{Name: "acme", Version: "0.1.0", Platforms: []sdk.Platform{sdk.PlatformAndroid}}, nil
//	}
//
//	// WatchDevices sends the phones there are now, then DevicesSynced, then every change.
//	func (p *phone) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error { … }
//	func (p *phone) Screen(ctx context.Context, deviceID string, displayID int) (*sdk.Screen, error) { … }
//	func (p *phone) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) { … }
//	func (p *phone) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) { … }
//
// 2. Call [Serve] from main. Log to stderr only: stdout carries the
// handshake.
//
//	func main() {
//		if err := sdk.Serve(&phone{}); err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(1)
//		}
//	}
//
// 3. Return errors of the categories in errors.go, wrapped with context,
// so the gateway can tell an agent what to do next:
//
//	return nil, fmt.Errorf("device %q: %w", id, sdk.ErrDeviceOffline)
//	return sdk.ActResult{}, sdk.Invalid("point (%d,%d) is outside the %dx%d screen", x, y, w, h)
//
// 4. Add what your phones can do beyond that by implementing the optional
// interfaces: [Inputter] (a person's live input), [Streamer] (video),
// [FrameCapturer], [Waker], [Unlocker], [LockEventer], [IdleWaiter],
// [AppLister], [Filer], [Displayer], [NotificationLister], [Pincher] (the
// pinch action, two fingers). The SDK advertises exactly the ones you
// implement; the gateway degrades gracefully without them (it polls for a
// settled screen when there is no IdleWaiter, for instance).
//
// 5. Check the driver with the conformance suite, from your own tests
// (drivertest.Run) or against the built binary:
//
//	pinky driver check ./pinky-driver-acme
//
// A copyable skeleton in which every device call answers "not found" is in
// drivers/sdk/example. The contract itself, with the limits of every field
// and the error table of every call, is proto/pinky/driver/v1/SPEC.md.
//
// # Debugging a driver
//
// Run the driver by hand with PINKY_DRIVER_DEBUG=1 (under a debugger if you
// like): it prints one JSON line with its socket and pid. Give that line to
// `pinky driver attach NAME 'LINE'` and the gateway uses the driver as if it
// had started it, without restarting it when it exits.
//
// # The gateway side
//
// [Start] starts (or attaches to) a driver process and returns a [Process]
// whose [Client] implements Driver and every optional interface. Calls to a
// driver that has exited, including calls in flight when it died, return an
// error wrapping [ErrDriverGone].
package sdk
