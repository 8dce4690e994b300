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
// Every call and every video stream rides the one connection, multiplexed
// by HTTP/2. Keepalive pings on both sides find a link that died without a
// word (a cable pulled, a machine asleep).
package remote
