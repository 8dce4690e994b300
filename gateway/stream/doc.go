// Package stream shares one phone screen's video stream among everyone who
// wants it: the person's mirrors and the recorder.
//
// A phone gives one stream per screen at a time, so the gateway keeps one
// Hub per screen (device and display). The first member to Join makes the
// hub open the driver's stream; when the last member leaves, the hub cancels
// it. A Join after that opens a new one (after the old one has returned, so
// the driver never sees two streams of a screen at once).
//
// The hub keeps the last config packet (SPS/PPS) and the packets since the
// last key frame (the GOP cache, bounded). A member that joins a running
// stream starts with the config and that cache, so its picture appears at
// once; when there is no usable cache it waits for the next key frame, which
// the hub asks the driver for.
//
// Every member has its own queue, and the hub's send never waits for a
// member: a member that falls far behind (Options.MaxQueuePackets or
// Options.MaxQueueBytes queued) has its queue dropped and skips to the next
// key frame, preceded again by the config; the hub asks the driver for that
// key frame (rate-limited by Options.KeyFrameInterval). A slow member thus
// never slows another member or the driver.
//
// When the driver's stream ends on its own (the phone went offline, the
// driver process died), every member sees the end: Next returns what was
// still queued, then the driver's error (wrapping sdk.ErrDeviceOffline,
// sdk.ErrDriverGone, …, or ErrStreamEnded when the driver returned nil).
// The members can Join again to get a new stream once the phone is back.
//
// Packets are shared between members, not copied: a member must not modify
// a packet's Data.
package stream
