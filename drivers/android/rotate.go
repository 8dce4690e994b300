package android

import "github.com/pinky-gateway/pinky/drivers/sdk"

// This file maps coordinates across a turn. The agent's points are in the
// screen's pixels in its current orientation (the dump's rotated frame);
// scrcpy takes touches in the video's pixels, and the real server ignores a
// touch whose screen size is not the current video size. When the phone
// turns, the server restarts its capture at the turned size, so the video's
// size, not one read before the turn, says the current orientation.

// turned is the screen's natural size (wm size's) turned to the video's
// orientation: swapped when one is landscape and the other portrait.
func turned(natW, natH, videoW, videoH int) (int, int) {
	if videoW > 0 && videoH > 0 && (videoW > videoH) != (natW > natH) {
		return natH, natW
	}
	return natW, natH
}

// toVideo maps p, in the screen's pixels in the current orientation, to
// the video's pixels. Without a size it leaves p as it is.
func toVideo(p sdk.Point, natW, natH, videoW, videoH int) (x, y int) {
	sw, sh := turned(natW, natH, videoW, videoH)
	if sw <= 0 || sh <= 0 || videoW <= 0 || videoH <= 0 {
		return p.X, p.Y
	}
	return p.X * videoW / sw, p.Y * videoH / sh
}
