// Package pki holds the certificates a gateway and its phone hosts use for
// the link between them, and the pairing that issues them. It is a library:
// the listener and the pairing call over the network are package
// gateway/remote's (Listen with ListenOptions.Pairing, and Pair), and the
// commands that show tokens are built on it elsewhere.
//
// The gateway's side is an Authority, opened on a folder (the data
// folder's pki/, once the daemon opens one). The folder is created readable
// by its owner only (0700) and holds:
//
//   - ca.crt and ca.key: a self-signed CA with an ECDSA P-256 key, created
//     the first time and kept for 20 years;
//   - server.crt and server.key: the certificate the gateway's listener
//     presents, signed by that CA for the addresses it listens on, issued
//     again by Open when the addresses change or less than 30 days are
//     left;
//   - hosts.json: the paired hosts (name, certificate serial and
//     fingerprint), the revoked certificates, and the pending pairings,
//     each known only by the SHA-256 of its token.
//
// Every file is written whole (a crash leaves the old content or the new)
// and readable by its owner only (0600), keys included. One process (the
// daemon) owns the folder at a time.
//
// The gateway's fingerprint is the SHA-256 digest of its CA certificate,
// shown as 32 uppercase hex pairs separated by colons, the form OpenSSL
// prints with -fingerprint -sha256 (ParseFingerprint also takes it without
// colons, in lower case, or with a "SHA256:" prefix). It is the CA's
// fingerprint, not the server certificate's, so a server certificate
// issued again for new addresses keeps every host's pin valid.
//
// Pairing goes in three steps. NewPairing(name) on the gateway returns a
// token of 160 random bits (32 base32 letters and digits) and the
// fingerprint; the gateway keeps only the token's SHA-256, and the token
// prints as "[redacted]" through fmt, slog and encoding/json, so it is
// shown to the person once (Token.Reveal) and never logged. The host makes a key and a
// certificate request (NewRequest), dials the gateway with PairingTLS,
// which refuses a gateway without the pinned fingerprint before the token
// is sent, and presents the token with the request; the gateway's Redeem
// returns a client certificate for the pairing's name, signed by the CA.
// The token is good once, for 5 minutes: presented again it is
// ErrTokenUsed, after its time ErrTokenExpired, and a token the gateway
// never gave is ErrTokenUnknown. Pairing a name again replaces its
// certificate, and the old one is revoked. Pairing.Code puts the token and
// the fingerprint in one string for a person to copy to the host.
//
// The host's side is a Host, stored by Request.Finish in its own folder
// (0700): host.crt and host.key (0600) and gateway.fingerprint, the pin
// (0600). LoadHost reads them back on every later start. ClientTLS verifies
// the gateway by the pin alone, not by the system's roots nor the name or
// address dialled, so a gateway that moved to another address is still
// recognised, and one with another CA is refused (ErrPinMismatch).
//
// The gateway's ServerTLS requires TLS 1.3 and a client certificate, and
// checks it in every handshake with Verify: a certificate the CA did not
// sign, a revoked one (ErrRevoked) or one of no paired host
// (ErrUnknownHost) is refused from the moment Revoke returns. Options.OnRevoke
// tells the caller, so that it can close a link already open.
// PairingServerTLS is the same for a listener that also lets hosts pair,
// and HostName says who is at the other end.
package pki
