#!/usr/bin/env bash
# The demo, for now: the virtual phones under the plugin host, seen through
# the person's commands. It runs in a private PINKY_HOME and cleans up after.
# (The agent's side, over MCP, joins it with the gateway core.)
set -euo pipefail
cd "$(dirname "$0")/.."
PINKY=bin/pinky

export PINKY_HOME
PINKY_HOME=$(mktemp -d "${TMPDIR:-/tmp}/pinky-demo.XXXXXX")
unset XDG_RUNTIME_DIR
log="$PINKY_HOME/daemon.log"
cleanup() {
  "$PINKY" stop-daemon >/dev/null 2>&1 || true
  rm -rf "$PINKY_HOME"
}
trap cleanup EXIT

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

echo "PINKY_HOME=$PINKY_HOME"
"$PINKY" daemon --sim 2>"$log" &
for _ in $(seq 100); do
  "$PINKY" status >/dev/null 2>&1 && break
  sleep 0.1
done

step "$PINKY" drivers
step "$PINKY" devices
step "$PINKY" driver screen sim-android-1
pid=$("$PINKY" drivers --json | sed -n 's/.*"pid": \([0-9]*\).*/\1/p' | head -1)
printf '\n\033[1m# kill -9 the driver (pid %s): the daemon restarts it\033[0m\n' "$pid"
kill -9 "$pid"
for _ in $(seq 50); do
  "$PINKY" devices | grep -q "sim-ios-1 .* online" && break
  sleep 0.1
done
step "$PINKY" drivers
step "$PINKY" driver check --run 'info|screen|unknown_device' bin/pinky-driver-sim
step "$PINKY" stop-daemon
printf '\n\033[1m# the daemon log\033[0m\n'
cat "$log"
