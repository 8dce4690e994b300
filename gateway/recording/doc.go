// Package recording records a phone's screen for an agent task into a
// fragmented MP4 file (see package fmp4), keeping out what must not be
// stored.
//
// # Privacy
//
// Nothing of a blocked app, a locked screen, a screen with a one-time code
// or a password, or the person's own use (take over, an unlock) is stored.
// The gateway knows what is on screen only from reads (the agents' and the
// recorder's own), each of which finds the screen public or private
// (agent.Manager.Private decides), while the video shows every moment, a
// little late. So the recorder holds the packets back, stamped with their
// arrival (Config.Now), until reads vouch for them, by this rule:
//
//   - A packet is written only when the reads around it both found the
//     screen public: the last read that began before it arrived, and the
//     first that began after. What a packet shows between two reads is not
//     known, but a secret on screen at either end makes it suspect.
//   - A private read drops every held packet (they arrived after the
//     previous read began, so they may show the secret since it came) and
//     starts a private span: packets are dropped as they come until a read
//     that began later finds the screen public again, and for Config.Lag
//     (300 ms) after that read returned, since the video runs behind the
//     screen and frames of the secret may still be on their way (on the
//     virtual phone, which draws its screen every 100 ms, a change was
//     always in the video within 150 ms; a driver whose video lags more
//     needs a larger Lag). Drop (take over and hand back, lock and unlock,
//     offline) counts as a private read at the moment it is called, and a
//     recording starts in a private span: the stream's cache may show the
//     screen of seconds before the task.
//   - A secret may also come and go between two public reads (a
//     notification with a code that arrives in the open shade, a heads-up
//     banner). So every change is read: when a packet arrives that no read
//     has seen (none began after it), the recorder reads the screen itself
//     Config.ReadAfter (250 ms; 1 s within a private span) later, unless a
//     read began meanwhile. Its reads run one at a time and at most half
//     the time (after a read that took d, the next waits d), so that a slow
//     read (a phone's UI dump) does not run without pause while the screen
//     keeps changing. A screen that lasts longer than that and a read is
//     thus always judged; only a shorter flash between two public reads can
//     go by unseen, and the packets of a secret that a read did see are
//     dropped from the read before it to Lag after the read that found it
//     gone. A failed read, or none (no Config.Read), counts as private.
//
// Reads are taken in the order they began where the recorder can know it:
// a public read that began while the recorder's own was under way waits for
// it. Two of the agents' reads that overlap are taken as they report; a
// private one that reports after packets it should have stopped were
// written is logged, as those cannot be taken back. Past HoldBytes of held
// packets they are dropped (not a privacy matter: writing resumes at a key
// frame).
//
// The file must always decode, so after any drop nothing is written until
// a key frame (with its config) has been held and vouched: a P frame whose
// reference was dropped is never written (its picture would be built on a
// frame the decoder never saw, and its differences could outline the
// secret). When a private span ends the recorder asks the stream for a key
// frame (and again each second until one comes), and it asks when a frame
// comes that cannot be written for want of one.
//
// Packets are stamped as they come, by a goroutine that does nothing else,
// and the file is written by another: a slow disk never makes a packet look
// newer than it is, and Vouch never waits for the disk.
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
//
// # Cost
//
// The recorder's own reads come about once per change of the screen that
// the agents' reads did not see. On the virtual phone an agent's step
// changes the screen once, just after the agent's read began (the video
// runs behind), so there is about one own read per step, of 1 to 2 ms (21
// reads, 35 ms in all, for a task of 21 steps in 11 s). A private span
// costs the video from the read before it to Lag after its end, and one
// key frame (1.1 MB at the virtual phone's 576x1280); the recording begins
// the same way, about 0.4 s after the task. The close log line ("recording
// closed") gives each recording's figures: private spans, packets dropped,
// own reads and their time.
package recording
