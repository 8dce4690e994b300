// Package drivertest is the conformance suite for Pinky phone drivers: it
// checks that a driver keeps the pinky.driver.v1 contract (driver.proto and
// SPEC.md beside it) the way the gateway relies on it.
//
// The suite is black-box. It talks to the driver only through the contract,
// over gRPC, and checks what comes back: well-formed replies, the error
// category (and so the gRPC code) of each failure, and capabilities that
// match what is served. Each case is skipped, with the reason, when the
// driver does not declare its capability or has no device to act on; and an
// undeclared capability must answer UNIMPLEMENTED. Cases clean up what they
// create, are bounded in time and do not depend on their order.
//
// Each device is checked against what it declares (SPEC.md section 4). A
// device that sends its own capabilities (sdk.Device.Caps) is held to
// them: the case device-capabilities checks, on every online device, that
// what it serves is the driver's and is not answered UNSUPPORTED, and that
// every other capability of the driver has a missing entry with a reason
// and answers UNSUPPORTED. Without Options.DeviceID (--device), the cases
// of a capability run on every online device that serves it, a result per
// device ("PASS video-stream on sim-ios-1"); a device that lacks it is not
// acted on for it. With a device chosen, a case of a capability that
// device lacks skips with the device's reason and fix. The suite follows
// WatchDevices for the whole run, so a CHANGED event that changes a
// device's capabilities is read by the cases after it.
//
// # In a Go driver's own tests
//
// Call Run with the driver. It is served in-process through sdk.NewServer,
// so the checks see exactly what the gateway would; each case becomes a
// subtest, so `go test -run 'TestConformance/screen'` picks cases:
//
//	func TestConformance(t *testing.T) {
//		d := mydriver.New(...)
//		drivertest.Run(t, drivertest.Config{
//			Driver:  d,
//			Options: drivertest.Options{PIN: "1234"}, // unlocks a locked test phone
//		})
//	}
//
// A driver that can have no device in the test (a skeleton, a machine with
// no phone) passes with the device cases skipped; set Options.NoDevices to
// skip them without looking.
//
// # For a driver in any language
//
// Build the driver executable and let pinky start it the way the daemon
// does (go-plugin, gRPC over a local socket):
//
//	pinky driver check ./pinky-driver-acme
//	pinky driver check --device emulator-5554 --pin 1234 ./pinky-driver-acme
//	pinky driver check --run 'files|screenshot' --skip video ./pinky-driver-acme
//	pinky driver check --list
//
// The report has one line per case (PASS, FAIL with its messages below
// it, or SKIP with the reason) and ends with a line such as
// "21 passed, 0 failed, 6 skipped". The command behind it is CheckBinary;
// Check does the same for a driver already connected (an *sdk.Client), and
// Cases lists the cases.
//
// The suite acts on a real phone when one is connected: it taps a clickable
// element, sends a tap through Input, and pushes files named
// pinky-drivertest-* into the phone's Pinky folder (emptied afterwards; the
// contract has no delete). Without a device chosen, the cases of a
// capability act on every online phone that serves it. Point it at test
// phones, or choose one with Options.DeviceID (--device).
package drivertest
