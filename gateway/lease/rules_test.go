package lease

import (
	"testing"
	"time"
)

func TestDue(t *testing.T) {
	c := Config{IdleTimeout: time.Hour, OfflineGrace: time.Minute}
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	used := Lease{LastUsed: t0}
	parked := Lease{LastUsed: t0, ParkKey: "k", ParkedUntil: t0.Add(30 * time.Second)}
	tests := []struct {
		name    string
		l       Lease
		offline time.Time // zero: online
		at      time.Duration
		want    Outcome // "" not due
	}{
		{"fresh", used, time.Time{}, time.Minute, ""},
		{"idle", used, time.Time{}, time.Hour, Expired},
		{"just short of idle", used, time.Time{}, time.Hour - time.Nanosecond, ""},
		{"offline past the grace", used, t0, time.Minute, Offline},
		{"offline within the grace", used, t0, time.Minute - time.Nanosecond, ""},
		{"offline and idle: offline first", used, t0, 2 * time.Hour, Offline},
		{"parked past its grace", parked, time.Time{}, 30 * time.Second, SessionClosed},
		{"parked within its grace", parked, time.Time{}, 29 * time.Second, ""},
		{"parked and idle: idle first", parked, time.Time{}, time.Hour, Expired},
		{"parked and offline: offline first", parked, t0, time.Minute, Offline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, due := c.Due(tt.l, tt.offline, t0.Add(tt.at))
			if got != tt.want || due != (tt.want != "") {
				t.Errorf("Due: got %q, %v; want %q", got, due, tt.want)
			}
		})
	}
}

func TestMayResume(t *testing.T) {
	t0 := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	old := Holder{Session: "s1", Agent: "remote", Version: "1.0", ResumeKey: "k"}
	live := Lease{Holder: old}
	parked := Lease{Holder: old, ParkKey: "k", ParkedUntil: t0.Add(time.Minute)}
	same := Holder{Session: "s2", Agent: "remote", Version: "1.0", ResumeKey: "k"}
	tests := []struct {
		name string
		h    Holder
		l    Lease
		at   time.Duration
		want bool
	}{
		{"parked, same agent and key", same, parked, 0, true},
		{"parked, at the end of the grace", same, parked, time.Minute, false},
		{"parked, another key", Holder{Session: "s2", Agent: "remote", Version: "1.0", ResumeKey: "k2"}, parked, 0, false},
		{"parked, another agent", Holder{Session: "s2", Agent: "other", Version: "1.0", ResumeKey: "k"}, parked, 0, false},
		{"parked, another version", Holder{Session: "s2", Agent: "remote", Version: "2.0", ResumeKey: "k"}, parked, 0, false},
		{"parked, no key", Holder{Session: "s2", Agent: "remote", Version: "1.0"}, parked, 0, false},
		{"parked under another key than the holder's now", same, Lease{Holder: old, ParkKey: "k0", ParkedUntil: t0.Add(time.Minute)}, 0, false},
		{"live, same agent and key", same, live, 0, true},
		{"live, the holder without a key", same, Lease{Holder: Holder{Session: "s1", Agent: "remote", Version: "1.0"}}, 0, false},
		{"live, another key", Holder{Session: "s2", Agent: "remote", Version: "1.0", ResumeKey: "k2"}, live, 0, false},
		{"its own session", old, live, 0, false},
		{"its own session, parked", old, parked, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MayResume(tt.h, tt.l, t0.Add(tt.at)); got != tt.want {
				t.Errorf("MayResume: got %v; want %v", got, tt.want)
			}
		})
	}
}
