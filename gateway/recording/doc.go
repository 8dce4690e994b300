// Package recording records a phone's screen for an agent task into a
// fragmented MP4 file (see package fmp4), keeping out what must not be
// stored.
//
// # Privacy
//
// Nothing of a blocked app, a locked screen, a one-time code screen or the
// person's own use (take over) is stored. The gateway only knows what is on
// screen from reads, so the recorder holds packets back until a read
// vouches for them. Each packet is stamped with its arrival time (Config.Now)
// when the recorder receives it. Vouch(at, OK) writes the held packets that
// arrived before at; Vouch(at, not OK) drops them. Drop (take over, hand
// back, lock, unlock, offline) and a new stream drop all that is held. When
// packets wait HoldFor with no read, the recorder reads the screen itself
// (Config.Read; a failed read, or none, counts as not OK); past HoldBytes of
// held packets they are dropped.
//
// The file must always decode, so after any drop nothing is written until a
// key frame (with its config) has been held and vouched: a P frame whose
// reference was dropped is never written. Packets that could never be
// written are not even held.
//
// # Timeline
//
// Media time is wall time since Info.Start, the arrival of the first written
// packet: each written packet's media time is its arrival time minus Start,
// whatever its PTS. A history step that began at wall time T is thus at
// video offset T - Start. Where packets were dropped, the frame before the
// gap lasts until the next written one, so the offsets stay true; the file
// plays the last recordable picture across the gap.
//
// # Streams
//
// The recorder joins the phone's stream hub (Config.Join) and, when the
// stream ends (phone offline, driver died), drops what is held and joins
// again with backoff (200 ms doubling to 5 s) until Close. A size change
// within a stream (a new config packet) goes into the same file; the codec
// cannot change within one.
//
// # Crashes
//
// Fragments are written about every second (at key frames, after about a
// second of media, or by a timer when no packet comes), each whole and
// followed by an fsync: a crash loses at most the fragment being built and
// the held packets, and the file stays playable (fmp4.Repair cuts off a
// fragment that was being written at the crash). Close makes a last read
// (at most 2 s) about the held packets, writes the last fragment, and
// removes the file when nothing was ever written.
package recording
