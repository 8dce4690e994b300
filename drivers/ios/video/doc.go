// Package video carries an iPhone's screen to the iOS driver as H.264 over
// TCP, by the protocol that drivers/ios/VIDEO.md specifies.
//
// Two roles talk: the source (the phone's ReplayKit broadcast upload
// extension, or Pinky's virtual iPhone) and the sink (the driver). Either
// may listen while the other dials; after the connection exists the
// protocol depends only on the roles. A Noise handshake
// (Noise_NNpsk0_25519_ChaChaPoly_SHA256) with the device's pairing secret
// (NewSecret, FormatSecret, ParseSecret) as its pre-shared key proves that
// both sides hold it, and everything after it travels in encrypted,
// authenticated records: the screen never crosses the network in clear.
// This is protocol version 2; the clear version 1 is refused.
//
// The driver runs a Receiver per phone: Subscribe fans the broadcast out to
// any number of viewers, each behind a bounded queue, and Still asks the
// phone for a JPEG of its latest frame. Source is the reference
// implementation of the phone's side, used by the virtual iPhone and by the
// tests; a Swift implementation follows VIDEO.md alone.
package video
