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
run -bench GatewayOverhead -benchtime 1x ./cli/
run -bench 'Sizes|TaskDiff' -benchtime 1x ./gateway/screen/
run -bench . -benchtime 20x ./drivers/sim/h264/
run -bench FanOut -benchtime 100000x ./gateway/stream/
run -bench Latency -benchtime 2000x ./gateway/stream/
run -bench 'Remux|StreamMemory' -benchtime 300x ./gateway/recording/fmp4/
run -bench ConsoleMirror -benchtime 20x ./cli/
run -bench Farm -benchtime 1x ./cli/
run -bench 'Tap|ReadScreen|ReadDump' -benchtime 50x ./drivers/android/
run -bench 'PhoneProfile' -benchtime 5x ./drivers/android/
run -bench 'OneRead' -benchtime 1x ./gateway/agent/
run -bench '^Benchmark(Driver|WDA)(Observe|Tap)$' -benchtime 300x ./drivers/ios/
run -bench 'PhoneProfile' -benchtime 5x ./drivers/ios/
run -bench 'WDASettings|WDASourceAttributes' -benchtime 5x ./drivers/ios/
run -bench 'FrameLatency|Throughput|Records' -benchtime 2000x ./drivers/ios/video/

# metric NAME UNIT: the value before UNIT on the line whose benchmark is NAME.
metric() {
  awk -v name="$1" -v unit="$2" '$1 == name { for (i = 2; i <= NF; i++) if ($i == unit) print $(i-1) }' "$out" | head -1
}
# largest REGEX UNIT: the largest value of UNIT on the lines whose benchmark matches REGEX.
largest() {
  awk -v re="$1" -v unit="$2" '$1 ~ re { for (i = 2; i <= NF; i++) if ($i == unit && (max == "" || $(i-1) + 0 > max + 0)) max = $(i-1) }
    END { print max }' "$out"
}
ratio() { # label value target unit
  if [ -z "$2" ]; then printf '  %-48s (not measured)\n' "$1"; return; fi
  awk -v l="$1" -v v="$2" -v t="$3" -v u="$4" 'BEGIN {
    printf "  %-48s %10.4g %-5s target %6g  ratio %.2f %s\n", l, v, u, t, v / t, (v <= t ? "ok" : "OVER") }'
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
for c in observe key; do
  ratio "phone_$c: gateway overhead, median" "$(metric "BenchmarkGatewayOverhead/$c/paced-2" us-p50-overhead)" 2000 µs
  ratio "phone_$c: gateway overhead, p99" "$(metric "BenchmarkGatewayOverhead/$c/paced-2" us-p99-overhead)" 10000 µs
done
ratio "phone profile: a tap's answer / one dump (issue 17)" "$(metric BenchmarkOneRead/phone-2 tap-answer/dump)" 1.3 x
ratio "phone profile: a task's first read / one dump" "$(metric BenchmarkOneRead/phone-2 first/dump)" 1 x
ratio "phone profile: a tap from call to answer / one dump (about one read)" "$(metric BenchmarkOneRead/phone-2 tap-call/dump)" 1.5 x
for prof in fast phone; do
  printf '  %-6s profile (no target): dump %s ms; tap answer %s ms with the idle signal, %s ms reading until two match; read before the tap %s ms; first read %s ms\n' "$prof" \
    "$(metric "BenchmarkOneRead/$prof-2" ms-dump)" "$(metric "BenchmarkOneRead/$prof-2" ms-tap-answer)" \
    "$(metric "BenchmarkOneRead/$prof-2" ms-tap-answer-poll)" "$(metric "BenchmarkOneRead/$prof-2" ms-read-before-tap)" "$(metric "BenchmarkOneRead/$prof-2" ms-first)"
done
ratio "screen text / raw XML, largest of the XML dumps" "$(largest '^BenchmarkSizes/.*[.]xml-2$' text/raw)" 0.1 x
ratio "screen text / flat JSON, largest of all screens" "$(largest '^BenchmarkSizes/' text/json)" 0.333 x
echo
echo "Tool calls back to back, no think time (no target): median, p99"
for c in observe key; do
  printf '  phone_%-8s %s µs, %s µs; a step that changes the screen also renders a %s µs screenshot in the background\n' "$c" \
    "$(metric "BenchmarkGatewayOverhead/$c/back-to-back-2" us-p50)" "$(metric "BenchmarkGatewayOverhead/$c/back-to-back-2" us-p99)" \
    "$(metric "BenchmarkGatewayOverhead/step-screenshot-2" us-p50-driver)"
done
echo
echo "Demo task (unlock, Messages, reply, home), what the agent reads per step (no target):"
for id in sim-android-1 sim-ios-1; do
  printf '  %-14s %s B per step, whole screens %s B per step; on the steps that give a diff: %s B vs %s B\n' "$id" \
    "$(metric "BenchmarkTaskDiff/$id-2" render_B/step)" "$(metric "BenchmarkTaskDiff/$id-2" screen_B/step)" \
    "$(metric "BenchmarkTaskDiff/$id-2" delta_B/delta_step)" "$(metric "BenchmarkTaskDiff/$id-2" screen_B/delta_step)"
done
echo
echo "Memory (no target):"
for d in fake sim; do
  printf '  %-5s idle driver RSS %s KiB; host per driver: %s KiB heap, %s goroutines\n' "$d" \
    "$(metric "BenchmarkIdleMemory/$d-2" KiB-RSS/driver)" "$(metric "BenchmarkIdleMemory/$d-2" KiB-host-heap/driver)" \
    "$(metric "BenchmarkIdleMemory/$d-2" goroutines/driver)"
done
echo
ratio "stream hub: latency added for 10 members, p99" "$(metric "BenchmarkLatency/members=10-2" us-p99)" 1000 µs
echo
echo "Video (no target):"
printf '  1080x2400 H.264 encode: key frame %s ms, unchanged screen %s ms\n' \
  "$(metric BenchmarkIDR1080x2400-2 ns/op | awk '{ printf "%.1f", $1 / 1e6 }')" \
  "$(metric BenchmarkUnchanged1080x2400-2 ns/op | awk '{ printf "%.1f", $1 / 1e6 }')"
for n in 1 4 10 50; do
  printf '  stream hub fan-out to %2s members: %s packets/s\n' "$n" "$(metric "BenchmarkFanOut/members=$n-2" packets/s)"
done
for n in 1 10 50; do
  printf '  stream hub latency added, %2s members: median %s µs, p99 %s µs\n' "$n" \
    "$(metric "BenchmarkLatency/members=$n-2" us-p50)" "$(metric "BenchmarkLatency/members=$n-2" us-p99)"
done
printf '  recording remux (1080x2400 worst case, 60 fps, a 3.9 MB key frame a second): %s packets/s, %s MB/s, %s CPU-s per hour of video\n' \
  "$(metric BenchmarkRemux-2 packets/s)" "$(metric BenchmarkRemux-2 MB/s)" "$(metric BenchmarkRemux-2 cpu-s/video-hour)"
printf '  recording memory per active stream (a second of that stream pending): %s KiB\n' "$(metric BenchmarkStreamMemory-2 KiB-heap/stream)"
printf '  console: a screen change to the changed picture in Chromium: median %s ms, p95 %s ms (the tap itself %s ms; the virtual phone polls its screen every 100 ms)\n' \
  "$(metric BenchmarkConsoleMirror-2 ms-p50)" "$(metric BenchmarkConsoleMirror-2 ms-p95)" "$(metric BenchmarkConsoleMirror-2 ms-act)"
echo
echo "Phone farm: one agent per phone, all acting at once, through pinky mcp (no target):"
# over A B: A / B, or - when either is missing.
over() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "") print "-"; else printf "%.2f", a / b }'; }
# farm NAME UNIT: BenchmarkFarm/NAME's UNIT, - when it has none.
farm() { v=$(metric "BenchmarkFarm/$1-2" "$2"); echo "${v:--}"; }
# cpu NAME: the CPU time per action of the gateway, the hosts and the drivers together.
cpu() { awk -v g="$(metric "BenchmarkFarm/$1-2" gateway-cpu-ms/action)" -v h="$(metric "BenchmarkFarm/$1-2" hosts-cpu-ms/action)" \
  -v d="$(metric "BenchmarkFarm/$1-2" drivers-cpu-ms/action)" 'BEGIN { if (g != "") printf "%.2f", g + h + d }'; }
for s in local-1x10 hosts-1x10 hosts-2x10 hosts-2x10-postgres; do
  printf '  %-20s %s agents on %s phones: %s actions/s; one action: median %s ms, p95 %s ms (load average %s)\n' "$s" \
    "$(farm "$s" agents | awk '{ printf "%g", $1 }')" "$(farm "$s" phones | awk '{ printf "%g", $1 }')" "$(farm "$s" actions/s)" \
    "$(farm "$s" ms-p50)" "$(farm "$s" ms-p95)" "$(farm "$s" load-1m)"
  printf '  %-20s CPU per action: gateway %s ms, hosts %s ms, drivers %s ms\n' "" \
    "$(farm "$s" gateway-cpu-ms/action)" "$(farm "$s" hosts-cpu-ms/action)" "$(farm "$s" drivers-cpu-ms/action)"
done
printf '  what the link costs, 1 host / local at 10 agents: median %sx, p95 %sx, actions/s %sx, CPU per action %sx\n' \
  "$(over "$(metric BenchmarkFarm/hosts-1x10-2 ms-p50)" "$(metric BenchmarkFarm/local-1x10-2 ms-p50)")" \
  "$(over "$(metric BenchmarkFarm/hosts-1x10-2 ms-p95)" "$(metric BenchmarkFarm/local-1x10-2 ms-p95)")" \
  "$(over "$(metric BenchmarkFarm/hosts-1x10-2 actions/s)" "$(metric BenchmarkFarm/local-1x10-2 actions/s)")" \
  "$(over "$(cpu hosts-1x10)" "$(cpu local-1x10)")"
printf '  2 hosts, 20 agents / local, 10 agents: median %sx, actions/s %sx; the run had %s hosts per gateway, %s phones per host (what was run, not a limit)\n' \
  "$(over "$(metric BenchmarkFarm/hosts-2x10-2 ms-p50)" "$(metric BenchmarkFarm/local-1x10-2 ms-p50)")" \
  "$(over "$(metric BenchmarkFarm/hosts-2x10-2 actions/s)" "$(metric BenchmarkFarm/local-1x10-2 actions/s)")" \
  "$(farm hosts-2x10 hosts/gateway | awk '{ printf "%g", $1 }')" "$(farm hosts-2x10 phones/host | awk '{ printf "%g", $1 }')"
echo
echo "Android driver, through a private Debian adb server on the virtual phone's adb face:"
awk -v r="$(metric BenchmarkTap-2 shell/scrcpy-return)" 'BEGIN { if (r == "") print "  tap: (not measured)"; else printf "  %-48s %10.4g x     target at least 20x: %s\n", "tap: adb shell input / scrcpy, call to return", r, (r >= 20 ? "ok" : "UNDER") }'
printf '  tap, call to return: scrcpy %s µs, adb shell input %s µs (%sx); to the screen change: %s µs vs %s µs\n' \
  "$(metric BenchmarkTap-2 scrcpy-return-µs)" "$(metric BenchmarkTap-2 shell-return-µs)" "$(metric BenchmarkTap-2 shell/scrcpy-return)" \
  "$(metric BenchmarkTap-2 scrcpy-screen-µs)" "$(metric BenchmarkTap-2 shell-screen-µs)"
printf '  read (uiautomator dump + dumpsys + parse) per screen: %s ms; parse alone, largest fixture: %s ms\n' \
  "$(metric BenchmarkReadScreen-2 ns/op | awk '{ printf "%.1f", $1 / 1e6 }')" "$(metric BenchmarkReadDump-2 ns/op | awk '{ printf "%.1f", $1 / 1e6 }')"
echo
echo "iOS driver, over loopback HTTP on the virtual iPhone's WebDriverAgent face (no target):"
ms() { awk '{ printf "%.2f", $1 / 1e6 }'; }
us() { awk '{ printf "%.0f", $1 / 1e3 }'; }
printf '  observe (source + app + lock, parsed, in pixels): %s ms; the same WDA calls alone, in a row: %s ms\n' \
  "$(metric BenchmarkDriverObserve-2 ns/op | ms)" "$(metric BenchmarkWDAObserve-2 ns/op | ms)"
printf '  tap: %s µs through the driver, %s µs straight through the WDA client\n' \
  "$(metric BenchmarkDriverTap-2 ns/op | us)" "$(metric BenchmarkWDATap-2 ns/op | us)"
for size in 16KiB 256KiB; do
  printf '  broadcast, %s frames: from sealing on the phone to the subscriber: mean %s µs, p99 %s µs; %s MB/s through; sealing and opening alone %s MB/s\n' "$size" \
    "$(metric "BenchmarkFrameLatency/$size-2" latency-ns | us)" "$(metric "BenchmarkFrameLatency/$size-2" p99-ns | us)" \
    "$(metric "BenchmarkThroughput/$size-2" MB/s)" "$(metric "BenchmarkRecords/$size-2" MB/s)"
done
