package sim

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Faults are knobs that make the driver misbehave on purpose, for reliability
// tests. The zero value injects nothing.
type Faults struct {
	// CrashAfter exits the process when call number CrashAfter+1 arrives; 0 never.
	CrashAfter int
	// CrashOn exits the process when this call or action kind arrives.
	CrashOn string
	// Hang blocks this call or action kind until its context ends.
	Hang string
	// HangMark, when set, limits Hang to a process that started while this
	// file did not exist; the first hang creates it. So the driver hangs
	// until it is restarted, as a wedged driver that a restart cures.
	HangMark string
	// Slow delays every call.
	Slow time.Duration
	// Drops remove devices for a while.
	Drops []Drop
	// Lacks take a capability from a device for a while, as a broadcast
	// that disconnects does: CHANGED events carry the new capabilities.
	Lacks []Lack
	// OfflineMidAction takes the device offline when this call or action kind
	// arrives: the call fails with ErrDeviceOffline and the device comes back
	// after OfflineFor.
	OfflineMidAction string
	// OfflineFor is how long OfflineMidAction keeps the device offline; 0 means 500ms.
	OfflineFor time.Duration
}

// Drop removes Device After the driver starts and brings it back For later.
type Drop struct {
	Device string
	After  time.Duration
	For    time.Duration
}

// Lack takes Cap from Device After the driver starts and gives it back For
// later (never, when For is 0).
type Lack struct {
	Device string
	Cap    sdk.Capability
	After  time.Duration
	For    time.Duration
}

// callNames are the names a call knob takes besides action kinds.
var callNames = []string{
	"info", "watch", "screen", "screenshot", "act", "input", "wake", "unlock",
	"wait_idle", "list_apps", "list_files", "pull_file", "push_file", "delete_file", "list_notifications",
}

// ParseFaults parses knobs in the PINKY_SIM_FAULTS syntax, e.g.
// "crash_after=20,hang=screen,slow=150ms,drop=sim-android-1@2s/1s".
func ParseFaults(s string) (Faults, error) {
	var f Faults
	err := f.Set(s)
	return f, err
}

// Set applies comma-separated key=value knobs on top of f; drop adds to
// Drops, the other keys replace.
func (f *Faults) Set(s string) error {
	for kv := range strings.SplitSeq(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("fault %q: want key=value", kv)
		}
		if err := f.set(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	return nil
}

// setMap applies the faults: section of a world file.
func (f *Faults) setMap(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vals, ok := m[k].([]any)
		if !ok {
			vals = []any{m[k]}
		}
		for _, v := range vals {
			if err := f.set(k, fmt.Sprint(v)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *Faults) set(k, v string) error {
	var err error
	switch k {
	case "crash_after":
		f.CrashAfter, err = strconv.Atoi(v)
		if err == nil && f.CrashAfter < 1 {
			err = fmt.Errorf("want a count of at least 1")
		}
	case "crash_on":
		f.CrashOn, err = callName(v)
	case "hang":
		f.Hang, err = callName(v)
	case "hang_mark":
		f.HangMark = v
		if v == "" {
			err = fmt.Errorf("want a file path")
		}
	case "offline_mid_action":
		f.OfflineMidAction, err = callName(v)
	case "slow":
		f.Slow, err = duration(v)
	case "offline_for":
		f.OfflineFor, err = duration(v)
	case "drop":
		var d Drop
		d, err = parseDrop(v)
		f.Drops = append(f.Drops, d)
	case "lack":
		var l Lack
		l, err = parseLack(v)
		f.Lacks = append(f.Lacks, l)
	default:
		return fmt.Errorf("fault %q unknown; want crash_after, crash_on, hang, hang_mark, slow, drop, lack, offline_mid_action or offline_for", k)
	}
	if err != nil {
		return fmt.Errorf("fault %s=%q: %w", k, v, err)
	}
	return nil
}

func callName(v string) (string, error) {
	if slices.Contains(callNames, v) || slices.Contains(sdk.AllActionKinds, sdk.ActionKind(v)) {
		return v, nil
	}
	return "", fmt.Errorf("want a call (%s) or an action kind (tap, type, key…)", strings.Join(callNames, ", "))
}

func duration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative")
	}
	return d, err
}

// parseDrop reads DEVICE@AFTER/FOR.
func parseDrop(v string) (Drop, error) {
	id, times, ok1 := strings.Cut(v, "@")
	after, dur, ok2 := strings.Cut(times, "/")
	if !ok1 || !ok2 || id == "" {
		return Drop{}, fmt.Errorf("want DEVICE@AFTER/FOR, e.g. sim-android-1@2s/1s")
	}
	a, err := duration(after)
	if err != nil {
		return Drop{}, err
	}
	d, err := duration(dur)
	if err != nil {
		return Drop{}, err
	}
	return Drop{Device: id, After: a, For: d}, nil
}

// parseLack reads DEVICE:CAPABILITY@AFTER/FOR.
func parseLack(v string) (Lack, error) {
	const want = "want DEVICE:CAPABILITY@AFTER/FOR, e.g. sim-android-1:video@2s/1s"
	id, rest, ok1 := strings.Cut(v, ":")
	c, times, ok2 := strings.Cut(rest, "@")
	if !ok1 || !ok2 || id == "" {
		return Lack{}, errors.New(want)
	}
	if !slices.Contains(lackable, sdk.Capability(c)) {
		return Lack{}, fmt.Errorf("capability %q: want one of %v", c, lackable)
	}
	d, err := parseDrop(id + "@" + times)
	if err != nil {
		return Lack{}, errors.New(want)
	}
	return Lack{Device: id, Cap: sdk.Capability(c), After: d.After, For: d.For}, nil
}

// matches reports whether a knob naming a call or action kind applies to
// call, with kind the action kind for Act.
func matches(knob, call string, kind sdk.ActionKind) bool {
	return knob != "" && (knob == call || (call == "act" && knob == string(kind)))
}
