package load

import "testing"

func TestFactorOf(t *testing.T) {
	for _, tt := range []struct {
		loadavg string
		cpus    int
		want    float64
	}{
		{"0.50 0.40 0.30 1/200 999\n", 2, 1},
		{"6.00 5.00 4.00 9/300 999\n", 2, 3},
		{"3.00 1 1 1/1 1", 4, 1},
		{"", 2, 1},
		{"garbage", 2, 1},
		{"8.0", 0, 1},
	} {
		if got := FactorOf(tt.loadavg, tt.cpus); got != tt.want {
			t.Errorf("FactorOf(%q, %d) = %v; want %v", tt.loadavg, tt.cpus, got, tt.want)
		}
	}
	if f := Factor(); f < 1 {
		t.Errorf("Factor() = %v; want at least 1", f)
	}
}
