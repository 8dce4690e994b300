package adbd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// rotator is what the face turns the phone with; the sim driver implements
// it (drivers/sim/rotation.go). Rotations are quarter turns, 0 to 3, as
// Android's Surface.ROTATION_* are.
type rotator interface {
	Rotation(ctx context.Context, deviceID string, displayID int) (current, user int, err error)
	SetRotation(ctx context.Context, deviceID string, displayID, turns int) (int, error)
}

// rotationKey says whether a settings key is one that turns the screen.
func rotationKey(key string) bool {
	return key == "system/user_rotation" || key == "system/accelerometer_rotation"
}

// applyRotation gives the phone the rotation its settings ask for, as the
// window manager does: user_rotation when auto-rotate
// (accelerometer_rotation) is off; with it on, the virtual phone stands
// upright, so portrait. d.mu must not be held.
func (d *Device) applyRotation(ctx context.Context) {
	r, ok := d.cfg.Driver.(rotator)
	if !ok {
		return
	}
	d.mu.Lock()
	user, _ := strconv.Atoi(d.settings["system/user_rotation"])
	auto := d.settings["system/accelerometer_rotation"] != "0"
	d.mu.Unlock()
	if auto || user < 0 || user > 3 {
		user = 0
	}
	if _, err := r.SetRotation(ctx, d.id, 0, user); err != nil {
		d.log.Debug("adbd: set rotation", "device", d.id, "err", err)
	}
}

// rotation is display 0's current rotation, 0 when the driver cannot tell.
func (d *Device) rotation(ctx context.Context) int {
	if r, ok := d.cfg.Driver.(rotator); ok {
		if cur, _, err := r.Rotation(ctx, d.id, 0); err == nil {
			return cur
		}
	}
	return 0
}

// naturalSize is a size in the current rotation turned back to the natural
// one, which wm size reports whatever the rotation.
func naturalSize(w, h, rot int) (int, int) {
	if rot%2 == 1 {
		return h, w
	}
	return w, h
}

// cmdContent is content insert|query|update --uri content://settings/NS,
// the settings provider as tools reach it (`content insert --uri
// content://settings/system --bind name:s:user_rotation --bind value:i:1`).
func cmdContent(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 {
		fmt.Fprintln(io3.err, "usage: content [insert|query|update|delete] --uri <URI> [--bind <BINDING>...] [--where <WHERE>]")
		return 1
	}
	op := args[0]
	var uri, where string
	binds := map[string]string{}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "--uri", "--where", "--bind", "--user":
			if i+1 >= len(args) {
				fmt.Fprintf(io3.err, "Error: argument expected after %s\n", args[i])
				return 1
			}
			v := args[i+1]
			switch args[i] {
			case "--uri":
				uri = v
			case "--where":
				where = v
			case "--bind":
				// name:TYPE:value, TYPE one of s, i, l, f, d, b.
				parts := strings.SplitN(v, ":", 3)
				if len(parts) != 3 {
					fmt.Fprintf(io3.err, "Error: Invalid binding %s\n", v)
					return 1
				}
				binds[parts[0]] = parts[2]
			}
			i++
		default:
			fmt.Fprintf(io3.err, "Error: Unsupported argument: %s\n", args[i])
			return 1
		}
	}
	ns, ok := strings.CutPrefix(uri, "content://settings/")
	if !ok || (ns != "system" && ns != "secure" && ns != "global") {
		fmt.Fprintf(io3.err, "Error while accessing provider:%s\njava.lang.SecurityException: the Pinky sim serves only content://settings/system, secure and global\n", strings.TrimPrefix(uri, "content://"))
		return 1
	}
	d := sh.d
	switch op {
	case "insert", "update":
		name := binds["name"]
		if name == "" && op == "update" {
			name = whereName(where)
		}
		if name == "" {
			fmt.Fprintln(io3.err, "Error: a setting needs --bind name:s:NAME")
			return 1
		}
		d.mu.Lock()
		d.settings[ns+"/"+name] = binds["value"]
		d.mu.Unlock()
		if rotationKey(ns + "/" + name) {
			d.applyRotation(sh.ctx)
		}
	case "query":
		name := whereName(where)
		d.mu.Lock()
		defer d.mu.Unlock()
		row := 0
		for k, v := range d.settings {
			key, ok := strings.CutPrefix(k, ns+"/")
			if !ok || (name != "" && key != name) {
				continue
			}
			fmt.Fprintf(io3.out, "Row: %d name=%s, value=%s\n", row, key, v)
			row++
		}
		if row == 0 {
			fmt.Fprintln(io3.out, "No result found.")
		}
	default:
		fmt.Fprintf(io3.err, "Error: Unsupported operation: %s\n", op)
		return 1
	}
	return 0
}

// whereName reads the setting's name out of a --where of the form
// name='user_rotation'.
func whereName(where string) string {
	_, v, ok := strings.Cut(where, "=")
	if !ok {
		return ""
	}
	return strings.Trim(strings.TrimSpace(v), `'"`)
}

// rotationName is the window manager's name of a rotation.
func rotationName(r int) string {
	return [4]string{"ROTATION_0", "ROTATION_90", "ROTATION_180", "ROTATION_270"}[r&3]
}

// dumpsysDisplay is dumpsys display: the default display's logical
// DisplayInfo, with its current size and rotation, as tools grep it
// ("mCurrentOrientation", "real W x H", "rotation N").
func dumpsysDisplay(ctx context.Context, d *Device, io3 stdio) int {
	s, err := d.screen(ctx)
	if err != nil {
		return reportErr(io3, err)
	}
	rot := d.rotation(ctx)
	nw, nh := naturalSize(s.Width, s.Height, rot)
	out := io3.out
	fmt.Fprintln(out, "DISPLAY MANAGER (dumpsys display)")
	fmt.Fprintln(out, "Display Devices: size=1")
	fmt.Fprintf(out, "  DisplayDeviceInfo{\"Built-in Screen\": uniqueId=\"local:4619827259835644672\", %d x %d, density %d, FLAG_DEFAULT_DISPLAY, FLAG_ROTATES_WITH_CONTENT}\n", nw, nh, s.DensityDPI)
	fmt.Fprintln(out, "Logical Displays: size=1")
	fmt.Fprintln(out, "  Display 0:")
	fmt.Fprintf(out, "    mBaseDisplayInfo=DisplayInfo{\"Built-in Screen\", displayId 0, real %d x %d, rotation 0, density %d}\n", nw, nh, s.DensityDPI)
	fmt.Fprintf(out, "    mOverrideDisplayInfo=DisplayInfo{\"Built-in Screen\", displayId 0, real %d x %d, rotation %d, density %d}\n", s.Width, s.Height, rot, s.DensityDPI)
	fmt.Fprintf(out, "  mCurrentOrientation=%d\n", rot)
	return 0
}

// dumpsysInput is dumpsys input: the touchscreen's viewport, whose
// SurfaceOrientation tools (Appium's among them) read for the rotation.
func dumpsysInput(ctx context.Context, d *Device, io3 stdio) int {
	s, err := d.screen(ctx)
	if err != nil {
		return reportErr(io3, err)
	}
	rot := d.rotation(ctx)
	nw, nh := naturalSize(s.Width, s.Height, rot)
	out := io3.out
	fmt.Fprintln(out, "INPUT MANAGER (dumpsys input)")
	fmt.Fprintln(out, "Input Reader State:")
	fmt.Fprintln(out, "  Device 2: sec_touchscreen")
	fmt.Fprintln(out, "    Sources: TOUCHSCREEN")
	fmt.Fprintf(out, "    Viewport INTERNAL: displayId=0, uniqueId=local:4619827259835644672, port=0, orientation=%d, logicalFrame=[0, 0, %d, %d], physicalFrame=[0, 0, %d, %d], deviceSize=[%d, %d], isActive=[1]\n",
		rot, s.Width, s.Height, s.Width, s.Height, nw, nh)
	fmt.Fprintf(out, "    RawSurfaceWidth: %dpx\n    RawSurfaceHeight: %dpx\n", nw, nh)
	fmt.Fprintf(out, "    SurfaceWidth: %dpx\n    SurfaceHeight: %dpx\n", s.Width, s.Height)
	fmt.Fprintf(out, "    SurfaceOrientation: %d\n", rot)
	return 0
}
