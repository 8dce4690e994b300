package doctor

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// CheckKey is the attribute that makes a line a driver writes on stderr a
// check: {"level":"WARN","msg":"adb is not installed","check":"adb",
// "fix":"install Android's platform tools"} says that the driver's check
// adb finds a problem, msg what it is and fix what to do; a later line of
// the same check at INFO or DEBUG says that it passes. slog's JSON (level,
// msg) and hclog's (@level, @message) are read alike.
const CheckKey = "check"

// DriverCheck is the latest state of one check a driver reports.
type DriverCheck struct {
	Name string // the check, as the driver names it
	OK   bool
	Msg  string
	Fix  string
}

// DriverChecks reads the checks in a driver's stderr lines, oldest first:
// the newest line of each check wins; checks come in the order first seen.
func DriverChecks(stderr []string) []DriverCheck {
	var out []DriverCheck
	at := map[string]int{}
	for _, line := range stderr {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		name, _ := m[CheckKey].(string)
		if name == "" {
			continue
		}
		level := str(m, "level", "@level")
		c := DriverCheck{Name: name, Msg: str(m, "msg", "@message"), Fix: str(m, "fix")}
		switch strings.ToUpper(level) {
		case "WARN", "WARNING", "ERROR":
		default:
			c.OK = true
		}
		if i, seen := at[name]; seen {
			out[i] = c
			continue
		}
		at[name] = len(out)
		out = append(out, c)
	}
	return out
}

// str returns the first of keys that m holds as a string.
func str(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

// Problems returns the problems a driver reports of itself now, one
// sentence each with what to do: for `pinky drivers` and `pinky status`,
// under a driver that runs yet finds no phones for a reason.
func Problems(d api.Driver) []string {
	var out []string
	for _, c := range DriverChecks(d.Stderr) {
		if !c.OK {
			s := c.Msg
			if c.Fix != "" {
				s += " → " + c.Fix
			}
			out = append(out, s)
		}
	}
	return out
}

// running reports whether a driver's process serves calls.
func running(state string) bool {
	return state == "running" || state == "attached" || state == "starting"
}

// Drivers checks each driver and its phones, from what the drivers report:
// the driver runs, the checks it logs, each phone online (an unauthorized
// phone's detail says to accept the "Allow USB debugging?" prompt, an
// iPhone's that WebDriverAgent does not answer), and, for the phones of a
// driver with background displays, an Android version that has them; for
// each phone that lacks some of its driver's capabilities, what it lacks,
// why and how to enable it (ok: the phone works without). No phone at all
// is a problem that says how to connect one.
func Drivers(ds []api.Driver, devs []api.Device) []Result {
	var out []Result
	caps := map[string]map[string]bool{}
	for _, d := range ds {
		name := "driver " + d.Name
		caps[d.Name] = map[string]bool{}
		for _, c := range d.Capabilities {
			caps[d.Name][c] = true
		}
		if !running(d.State) {
			detail := d.State
			if d.LastError != "" {
				detail += ": " + d.LastError
			}
			if n := len(d.Stderr); n > 0 {
				detail += "; it last wrote: " + d.Stderr[n-1]
			}
			out = append(out, problem(name, detail, "correct what it says, then `pinky driver restart "+d.Name+"`"))
			continue
		}
		out = append(out, ok(name, fmt.Sprintf("%s, version %s, %d phones", d.State, dash(d.Version), d.Devices)))
		for _, c := range DriverChecks(d.Stderr) {
			r := Result{Check: name + ": " + c.Name, OK: c.OK, Detail: c.Msg}
			if !c.OK {
				r.Fix = c.Fix
			}
			out = append(out, r)
		}
	}
	for _, dev := range devs {
		out = append(out, device(dev, caps[dev.Driver]["displays"]))
		if len(dev.Missing) > 0 {
			out = append(out, missing(dev))
		}
		if len(dev.NotOffered) > 0 {
			out = append(out, notOffered(dev))
		}
	}
	if len(devs) == 0 {
		out = append(out, problem("phones", "no phone is connected", NoPhones))
	}
	return out
}

// NoPhones says how to connect a first phone.
const NoPhones = "connect an Android phone by USB with USB debugging on (Settings > Developer options) " +
	"and accept its \"Allow USB debugging?\" prompt, or add an iPhone with `pinky ios add`; " +
	"`pinky daemon --sim` shows virtual phones for a demo"

// device checks one phone.
func device(d api.Device, displays bool) Result {
	name := "phone " + d.ID
	what := d.Platform
	if d.Model != "" {
		what = d.Model
	}
	if d.OSVersion != "" {
		what += ", " + d.Platform + " " + d.OSVersion
	}
	if !d.Online || d.State != "online" {
		state := d.State
		if !d.Online && state == "online" {
			state = "offline" // its driver is down
		}
		fix := d.Detail
		if fix == "" {
			fix = "plug it in again, or check its driver with `pinky drivers`"
		}
		return problem(name, fmt.Sprintf("%s (%s) is %s", d.ID, what, state), fix)
	}
	detail := fmt.Sprintf("%s (%s) is online", d.ID, what)
	if displays && d.Platform == "android" && !lacks(d, "displays") {
		if major, err := strconv.Atoi(strings.SplitN(d.OSVersion, ".", 2)[0]); err == nil && major < 13 {
			detail += "; background displays need Android 13 or later, so agents work on its own screen"
		}
	}
	return ok(name, detail)
}

// missing says what a phone lacks, why and how the person can enable it:
// an ok result, since the phone works without it (agents are told the
// same when they ask for it).
func missing(d api.Device) Result {
	parts := make([]string, len(d.Missing))
	for i, m := range d.Missing {
		s := "no " + m.Capability
		if m.Reason != "" {
			s += " (" + m.Reason + ")"
		}
		if m.Fix != "" {
			s += ": to enable it, " + m.Fix
		}
		parts[i] = s
	}
	return ok("phone "+d.ID+": capabilities", d.ID+" works without what it lacks: "+strings.Join(parts, "; "))
}

// notOffered says what a phone lacks because its driver does not offer it
// at all: an ok result, for information, since there is nothing on the
// phone for the person to enable.
func notOffered(d api.Device) Result {
	return ok("phone "+d.ID+": not offered", fmt.Sprintf("its driver (%s) does not offer %s; agents work without them",
		d.Driver, strings.Join(d.NotOffered, ", ")))
}

// lacks reports whether the phone says it lacks capability c.
func lacks(d api.Device, c string) bool {
	for _, m := range d.Missing {
		if m.Capability == c {
			return true
		}
	}
	return false
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
