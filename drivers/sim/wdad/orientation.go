package wdad

import (
	"context"
	"fmt"
	"strings"
)

// This file serves FBOrientationCommands: GET and POST /orientation and
// /rotation and GET /wda/deviceOrientation. The sim's rotation is in
// quarter turns (drivers/sim/rotation.go): 1 is the interface turned for a
// device held in UIDeviceOrientationLandscapeLeft ("LANDSCAPE", rotation z
// 270), 3 for UIDeviceOrientationLandscapeRight (z 90). Sizes, points and
// screenshots follow the current orientation, as WebDriverAgent's do.

// orientations are WebDriverAgent's orientation names by rotation, as
// POST /orientation takes them.
var orientations = [4]string{"PORTRAIT", "LANDSCAPE", "UIA_DEVICE_ORIENTATION_PORTRAIT_UPSIDEDOWN", "UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT"}

// rotationZ is the z of GET /rotation by rotation (fb_rotationMapping).
var rotationZ = [4]int{0, 270, 180, 90}

// deviceOrientations are UIDeviceOrientation names by rotation.
var deviceOrientations = [4]string{"UIDeviceOrientationPortrait", "UIDeviceOrientationLandscapeLeft",
	"UIDeviceOrientationPortraitUpsideDown", "UIDeviceOrientationLandscapeRight"}

// turns reads the phone's current rotation and the one the device was set
// to; 0 when the sim cannot tell.
func (s *Server) turns(ctx context.Context) (current, device int) {
	cur, user, err := s.d.Rotation(ctx, s.id, 0)
	if err != nil {
		return 0, 0
	}
	return cur, user
}

// dims is the screen's size in pixels in the current orientation.
func (s *Server) dims() (int, int) {
	if cur, _ := s.turns(s.ctx); cur%2 == 1 {
		return s.natH, s.natW
	}
	return s.natW, s.natH
}

func (s *Server) width() int  { w, _ := s.dims(); return w }
func (s *Server) height() int { _, h := s.dims(); return h }

// orientation answers GET /orientation: the interface's orientation as
// WebDriver names it, PORTRAIT or LANDSCAPE only.
func (s *Server) orientation(r *request) (any, error) {
	if cur, _ := s.turns(r.ctx); cur%2 == 1 {
		return "LANDSCAPE", nil
	}
	return "PORTRAIT", nil
}

// setOrientation answers POST /orientation {"orientation": NAME}: it turns
// the device and fails, as WebDriverAgent does, when the interface does not
// follow (the app in front locks its orientation, or an iPhone without a
// home button refuses upside down).
func (s *Server) setOrientation(r *request) (any, error) {
	name, _ := r.args["orientation"].(string)
	for turns, o := range orientations {
		if strings.EqualFold(name, o) {
			return s.turnTo(r.ctx, turns, func() error { return unknownError("Unable To Rotate Device") })
		}
	}
	return nil, unknownError("Unable To Rotate Device")
}

// rotation answers GET /rotation: the interface's rotation as x, y, z.
func (s *Server) rotation(r *request) (any, error) {
	cur, _ := s.turns(r.ctx)
	return map[string]any{"x": 0, "y": 0, "z": rotationZ[cur]}, nil
}

// setRotation answers POST /rotation {"x", "y", "z"}.
func (s *Server) setRotation(r *request) (any, error) {
	_, hasX := r.args["x"]
	_, hasY := r.args["y"]
	_, hasZ := r.args["z"]
	if !hasX || !hasY || !hasZ {
		return nil, invalidArgument("x, y and z arguments must exist in the request body: %v", r.args)
	}
	v, err := r.need("x", "y", "z")
	if err != nil {
		return nil, err
	}
	x, y, z := int(v[0]), int(v[1]), int(v[2])
	turns := -1
	for t, want := range rotationZ {
		if x == 0 && y == 0 && z == want {
			turns = t
		}
	}
	faceUpOrDown := y == 0 && z == 0 && (x == 90 || x == 270)
	if turns < 0 && !faceUpOrDown {
		return nil, invalidArgument("{x:%d, y:%d, z:%d} rotation is not supported. Only the following values are supported: "+
			"{x:0, y:0, z:0}, {x:0, y:0, z:90}, {x:0, y:0, z:180}, {x:0, y:0, z:270}, {x:90, y:0, z:0}, {x:270, y:0, z:0}", x, y, z)
	}
	refuse := func() error {
		scr, err := s.screen(r.ctx)
		app := springboard
		if err == nil {
			app = frontApp(scr)
		}
		return invalidElementState(fmt.Sprintf("The current rotation cannot be set to {x:%d, y:%d, z:%d}. Make sure the %s application supports it", x, y, z, app))
	}
	if faceUpOrDown {
		return nil, refuse() // flat, the interface has no orientation to match
	}
	return s.turnTo(r.ctx, turns, refuse)
}

// deviceOrientation answers GET /wda/deviceOrientation: where the device
// was turned, whatever the interface did.
func (s *Server) deviceOrientation(r *request) (any, error) {
	_, dev := s.turns(r.ctx)
	return deviceOrientations[dev], nil
}

// turnTo sets the device's orientation and checks that the interface
// followed; upside down is refused as an iPhone with Face ID refuses it.
func (s *Server) turnTo(ctx context.Context, turns int, refuse func() error) (any, error) {
	if turns == 2 {
		return nil, refuse()
	}
	now, err := s.d.SetRotation(ctx, s.id, 0, turns)
	if err != nil {
		return nil, s.wdaErr(err)
	}
	if now != turns {
		return nil, refuse()
	}
	return nil, nil
}
