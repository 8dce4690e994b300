// Package remote is the link between a phone host and the gateway: one
// long-lived TCP connection with mutual TLS (the certificates of package
// pki) that the host dials out, and the driver contract served over it with
// gRPC, so that no port opens on the machine the phones are plugged into.
//
// The host's side is Serve. It dials the gateway, and on the connection it
// dialled it runs a gRPC server of the driver contract (sdk.NewServer): the
// roles of TCP and of gRPC are reversed, the host being the TCP client and
// the gRPC server. When the link drops it dials again, with a capped
// exponential backoff and jitter, until its context ends.
//
// The gateway's side is Listen. It accepts a connection, completes the TLS
// handshake (pki's ServerTLS refuses a certificate of another CA, of a
// revoked host or of a host never paired), takes the host's name from its
// certificate, and opens a gRPC client on that same connection, which it
// hands out as a Host: the name, an sdk.Full, and a channel closed when the
// link is gone. A second link of the same name replaces the first, and
// Gateway.Close closes a host's link (for pki's OnRevoke).
//
// Pairing rides the same listener. With opts.Pairing set (pki's
// *Authority) and pki's PairingServerTLS as its configuration, Listen
// serves a connection that came without a client certificate a gRPC server
// of PairingService alone (proto/pinky/host/v1): any other call, the driver
// contract's included, is UNIMPLEMENTED, and the connection closes after
// ListenOptions.PairTimeout. Pair spends the token with Redeem and returns
// the host's certificate and the CA; the token's faults have their own
// codes and messages that tell the person what to do (NOT_FOUND: check the
// code; ALREADY_EXISTS: the code was used already; FAILED_PRECONDITION:
// expired, run `pinky hosts add NAME` again). A connection with a
// certificate is a link, as above.
//
// The host's side of pairing is Pair(ctx, addr, code, dir). It parses the
// code that `pinky hosts add NAME` printed, dials with pki's PairingTLS,
// which refuses a gateway without the code's fingerprint in the TLS
// handshake, before the token is sent, calls Pair with a fresh certificate
// request, and stores the host's identity in dir with pki's Request.Finish.
// From then on Serve links with pki.LoadHost(dir)'s ClientTLS.
//
// Every call and every video stream rides the one connection, multiplexed
// by HTTP/2. Keepalive pings on both sides find a link that died without a
// word (a cable pulled, a machine asleep).
package remote
