#!/usr/bin/env bash
# Runs the benchmarks and prints each figure against its target. Machines
# here are shared and noisy: read the figures as a range, run twice to see
# it, and never turn them into a timed unit test.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT

run() {
  echo "\$ go test $*" >&2
  go test -run '^$' "$@" | grep '^Benchmark' | tee -a "$out"
}

run -bench 'Screen$|Act$|Screenshot' -benchtime 200x ./drivers/sim/
run -bench RoundTrip -benchtime 2000x ./gateway/driverhost/
run -bench CrashRecovery -benchtime 20x ./gateway/driverhost/
run -bench IdleMemory -benchtime 1x ./gateway/driverhost/

# metric NAME UNIT: the value before UNIT on the line whose benchmark is NAME.
metric() {
  awk -v name="$1" -v unit="$2" '$1 == name { for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }' "$out" | head -1
}
ratio() { # label value target unit
  if [ -z "$2" ]; then printf '  %-44s (not measured)\n' "$1"; return; fi
  awk -v l="$1" -v v="$2" -v t="$3" -v u="$4" 'BEGIN {
    printf "  %-44s %10.1f %-5s target %6.0f  ratio %.2f %s\n", l, v, u, t, v / t, (v <= t ? "ok" : "OVER") }'
}

echo
echo "Against the targets (ratio = measured / target; under 1 is within it):"
for d in fake sim; do
  for c in screen act; do
    ratio "$d $c: plugin overhead, median" "$(metric "BenchmarkRoundTrip/$d/$c/plugin-2" us-p50-overhead)" 200 µs
  done
done
for d in fake sim; do
  ratio "$d: kill -9 until devices listed again" "$(metric "BenchmarkCrashRecovery/$d-2" ms/recovery)" 1000 ms
done
echo
echo "Memory (no target):"
for d in fake sim; do
  printf '  %-5s idle driver RSS %s KiB; host per driver: %s KiB heap, %s goroutines\n' "$d" \
    "$(metric "BenchmarkIdleMemory/$d-2" KiB-RSS/driver)" "$(metric "BenchmarkIdleMemory/$d-2" KiB-host-heap/driver)" \
    "$(metric "BenchmarkIdleMemory/$d-2" goroutines/driver)"
done
