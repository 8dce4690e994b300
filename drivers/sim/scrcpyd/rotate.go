package scrcpyd

import "context"

// rotator is how the session turns the phone; the sim driver implements it
// (drivers/sim/rotation.go). Rotations are quarter turns, 0 to 3.
type rotator interface {
	Rotation(ctx context.Context, deviceID string, displayID int) (current, user int, err error)
	SetRotation(ctx context.Context, deviceID string, displayID, turns int) (int, error)
}

// rotateDevice is ROTATE_DEVICE, as Device.rotateDevice does it: freeze
// the display in the other of portrait and landscape (0→1, 1→0, 2→1, 3→0).
// The capture then restarts at the new size: the video's next packets are
// a new configuration and a key frame of the turned size, and touches made
// for the old size are ignored (position).
func (s *session) rotateDevice(ctx context.Context) {
	r, ok := s.drv.(rotator)
	if !ok {
		s.log.log(levelWarn, "Rotation is not supported by the virtual phone")
		return
	}
	cur, _, err := r.Rotation(ctx, s.device, s.display)
	if err != nil {
		s.log.log(levelWarn, "Could not rotate the device: %v", err)
		return
	}
	turn := (cur & 1) ^ 1
	s.log.log(levelInfo, "Device rotation requested: %s", map[int]string{0: "portrait", 1: "landscape"}[turn])
	if _, err := r.SetRotation(ctx, s.device, s.display, turn); err != nil {
		s.log.log(levelWarn, "Could not rotate the device: %v", err)
	}
}
