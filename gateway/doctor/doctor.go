// Package doctor checks a Pinky installation and says, for each problem,
// what to do: `pinky doctor` runs it. Each check is a pure function of what
// the caller measured (a file's mode, an error, the daemon's status), so
// that every verdict is table-tested without the machine it describes.
//
// The gateway's own checks are here (the data folder, the token file, the
// policy, drivers.yaml, the keychain, the listeners, the drivers found).
// What a driver needs of the computer (adb, scrcpy, WebDriverAgent…) the
// driver reports itself, so that a third-party driver takes part the same
// way: its phones' states and details, and the checks it logs on stderr
// (DriverChecks reads them).
package doctor

import (
	"fmt"
	"io"
)

// Result is the verdict of one check.
type Result struct {
	// Check names what was checked, e.g. "token file" or "driver android: adb".
	Check string `json:"check"`
	// OK is false when something is wrong.
	OK bool `json:"ok"`
	// Detail is what was found, as a sentence.
	Detail string `json:"detail"`
	// Fix says what to do; empty when nothing is to be done.
	Fix string `json:"fix,omitempty"`
}

// ok and problem build results.
func ok(check, detail string) Result { return Result{Check: check, OK: true, Detail: detail} }

func problem(check, detail, fix string) Result {
	return Result{Check: check, Detail: detail, Fix: fix}
}

// Report is the results of a run, in the order they were checked.
type Report []Result

// OK reports whether no check found a problem.
func (r Report) OK() bool {
	for _, x := range r {
		if !x.OK {
			return false
		}
	}
	return true
}

// Problems counts the checks that found a problem.
func (r Report) Problems() int {
	n := 0
	for _, x := range r {
		if !x.OK {
			n++
		}
	}
	return n
}

// Write prints one line per check: "ok" or "problem", the check, what was
// found and, for a problem, what to do; then a summary line. clean makes
// text from elsewhere (a driver's log, a phone's name) safe for a terminal.
func (r Report) Write(w io.Writer, clean func(string) string) {
	for _, x := range r {
		mark := "ok     "
		if !x.OK {
			mark = "problem"
		}
		line := fmt.Sprintf("%s  %s: %s", mark, x.Check, x.Detail)
		if x.Fix != "" {
			line += " → " + x.Fix
		}
		fmt.Fprintln(w, clean(line))
	}
	switch n := r.Problems(); n {
	case 0:
		fmt.Fprintln(w, "no problems found")
	case 1:
		fmt.Fprintln(w, "1 problem found")
	default:
		fmt.Fprintf(w, "%d problems found\n", n)
	}
}
