package doctor

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/pki"
)

func TestHosts(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	year := now.AddDate(1, 0, 0)
	tests := []struct {
		name string
		host api.Host
		want want
	}{
		{"online", api.Host{Name: "closet", State: "online", Devices: 2, Version: "1.0", Expires: year}, want{true, "online, 2 phones", ""}},
		{"pending", api.Host{Name: "mac", State: "pending", Expires: now.Add(time.Minute)}, want{true, "pairing code waits", ""}},
		{"offline since", api.Host{Name: "closet", State: "offline", Since: now.Add(-time.Hour), Expires: year, LastError: "the host's link is gone"},
			want{false, "link is gone", "pinky host"}},
		{"never linked", api.Host{Name: "closet", State: "offline", Expires: year}, want{false, "since the daemon started", "reaches 10.0.0.1:4778"}},
		{"expired", api.Host{Name: "closet", State: "offline", Expires: now.Add(-time.Hour)}, want{false, "expired", "pinky hosts add closet"}},
		{"expiring", api.Host{Name: "closet", State: "online", Expires: now.Add(24 * time.Hour)}, want{false, "expires on", "pinky hosts add closet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := Hosts(api.Hosts{Listen: "10.0.0.1:4778", Fingerprint: "AB:CD", Hosts: []api.Host{tt.host}}, now)
			if len(rs) != 2 || !rs[0].OK {
				t.Fatalf("got %+v; want the listener's line and one per host", rs)
			}
			check(t, rs[1], tt.want)
		})
	}
}

func TestHostIdentity(t *testing.T) {
	check(t, HostIdentity("/h/host", nil, fmt.Errorf("/h/host: %w", pki.ErrNotPaired), time.Now()), want{true, "not paired", ""})
	check(t, HostIdentity("/h/host", nil, errors.New("bad key"), time.Now()), want{false, "bad key", "--pair CODE"})
	h := pairedHost(t)
	exp := h.Certificate().NotAfter
	check(t, HostIdentity("/h/host", h, nil, exp.Add(-365*24*time.Hour)), want{true, "paired as closet", ""})
	check(t, HostIdentity("/h/host", h, nil, exp.Add(-time.Hour)), want{false, "expires on", "pinky hosts add closet"})
	check(t, HostIdentity("/h/host", h, nil, exp.Add(time.Hour)), want{false, "expired", "pinky hosts add closet"})
}

// pairedHost pairs a host called closet with a new gateway's authority.
func pairedHost(t *testing.T) *pki.Host {
	t.Helper()
	a, err := pki.Open(t.TempDir(), pki.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.NewPairing("closet")
	if err != nil {
		t.Fatal(err)
	}
	req, err := pki.NewRequest()
	if err != nil {
		t.Fatal(err)
	}
	is, err := a.Redeem(p.Token.Reveal(), req.CSR)
	if err != nil {
		t.Fatal(err)
	}
	h, err := req.Finish(t.TempDir(), a.Fingerprint(), is)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
