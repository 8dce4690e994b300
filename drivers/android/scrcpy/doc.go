// Package scrcpy is a client for scrcpy-server, the program the Android
// driver runs on a phone to stream its screen as H.264 and inject input.
//
// The package does not talk to adb. The caller pushes the server to
// ServerPath, forwards a local port to the abstract socket SocketName(scid),
// runs ServerArgs(version, opts) through `adb shell`, and hands the
// connections to Dial (which retries until the server listens) or Connect:
//
//	o := scrcpy.DefaultOptions()
//	o.MaxSize = 1280
//	args, err := scrcpy.ServerArgs("3.3.4", o) // the pushed server's exact version
//	// ... adb forward tcp:PORT localabstract:scrcpy.SocketName(o.SCID); adb shell args...
//	c, err := scrcpy.Dial(ctx, "3.3.4", o, dialPort)
//	go c.Stream(ctx, sendPacket)     // sdk.VideoPacket: config, key frames, frames
//	err = c.Tap(x, y)                // in video coordinates: see VideoSize
//
// The protocol is internal to scrcpy and changes between releases: the server
// refuses any version but its own, and 3.x and 4.x frame the video
// differently. This package speaks both:
//
//   - 3.x: the video socket starts with the codec id, width and height; each
//     packet header has bit 63 = config and bit 62 = key frame. A new size is
//     only in the next config packet's SPS, which the client parses.
//   - 4.x: the video socket starts with the codec id; a 12-byte session packet
//     (MSB set, width, height) precedes the first packet of each capture
//     session; packet headers have bit 62 = config and bit 61 = key frame.
//
// Control messages (Marshal, ReadMessage) and device messages
// (MarshalDevice, ReadDeviceMessage) have the same layout in 3.0–4.x, except
// the scroll scaling of 3.3.1. Other major versions are ErrUnsupportedVersion.
package scrcpy
