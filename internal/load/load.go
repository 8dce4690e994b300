// Package load reads how busy the machine is, for the deadlines that tests
// and the conformance suite give real processes: on a machine with more
// work than cores, a promise kept late is the host's doing, not the
// program's.
package load

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Factor is the one-minute load average over the cores, at least 1; 1
// where the system does not say (no /proc/loadavg).
func Factor() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 1
	}
	return FactorOf(string(b), runtime.NumCPU())
}

// FactorOf reads /proc/loadavg's text for a machine of cpus cores.
func FactorOf(loadavg string, cpus int) float64 {
	f := strings.Fields(loadavg)
	if len(f) == 0 || cpus < 1 {
		return 1
	}
	l, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 1
	}
	return max(1, l/float64(cpus))
}
