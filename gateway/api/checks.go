package api

// MethodDriverChecks lists the checks that the drivers report of
// themselves on stderr (SPEC.md §1.9), as `pinky doctor` reads them:
// → []DriverCheck. The web console shows the failing ones under each
// driver, with what to do.
const MethodDriverChecks = "drivers.checks"

// DriverCheck is the latest state of one check a driver reports, such as
// the Android driver's "adb" or the iOS driver's "wda PHONE".
type DriverCheck struct {
	Driver string `json:"driver"` // the driver's name
	Check  string `json:"check"`  // the check, as the driver names it
	OK     bool   `json:"ok"`
	// Detail is what the driver found, as a sentence; Fix what to do about
	// it, empty when the check passes or the driver did not say.
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}
