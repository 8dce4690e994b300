package api

import "time"

// The phone hosts' methods: machines with phones that link to this
// gateway (pinky host), and their pairing (pinky hosts).
const (
	MethodHosts      = "hosts.list"   // → Hosts
	MethodHostAdd    = "hosts.add"    // HostName → HostPairing
	MethodHostRemove = "hosts.remove" // HostName → Host
)

// HostName names a phone host.
type HostName struct {
	Name string `json:"name"`
}

// HostPairing is an offer to pair a host: shown once, by `pinky hosts add`.
type HostPairing struct {
	Name string `json:"name"`
	// Code is what the host is given: `pinky host --gateway ADDR --pair
	// CODE`. It holds the one-time token and the gateway's fingerprint.
	Code string `json:"code"`
	// Fingerprint is the gateway's: the SHA-256 of its CA certificate.
	Fingerprint string    `json:"fingerprint"`
	Expires     time.Time `json:"expires"`
	// Listen is the address the gateway listens on for hosts.
	Listen string `json:"listen"`
}

// Hosts is what the gateway knows of its phone hosts.
type Hosts struct {
	// Listen is where the gateway listens for hosts; empty when it does
	// not (no --hosts-listen), and then Hosts is empty.
	Listen      string `json:"listen,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Hosts       []Host `json:"hosts"`
}

// Host is one phone host.
type Host struct {
	Name string `json:"name"`
	// State is "online" (linked now), "offline" (paired, not linked now)
	// or "pending" (a pairing code not used yet).
	State string `json:"state"`
	// Since is when the host linked (online) or when its link went
	// (offline; zero when it never linked since the daemon started).
	Since   time.Time `json:"since,omitzero"`
	Version string    `json:"version,omitempty"` // its driver's, from the last link
	Devices int       `json:"devices"`
	// Fingerprint is the host certificate's; Expires is when the
	// certificate, or a pending pairing code, expires.
	Fingerprint string    `json:"fingerprint,omitempty"`
	Expires     time.Time `json:"expires,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
}
