#!/usr/bin/env bash
# Installs what the tests need, when it is missing, and says what it did. It is
# idempotent: a second run installs nothing. Debian packages come from apt;
# Go tools (buf, protoc plugins) are pinned in scripts/tools/go.mod and built on demand.
set -euo pipefail
cd "$(dirname "$0")/.."

# command → Debian package.
declare -A packages=(
  [gcc]=gcc   # cgo: the race detector and SQLite
  [git]=git   # proto-check compares against the previous commit
  [ffmpeg]=ffmpeg   # video tests decode the H.264 streams (ffmpeg, ffprobe)
  [chromium]=chromium   # the web console's tests drive a real headless Chromium (chromedp)
  [adb]=adb   # the Android driver's tests go through Debian's real adb server
  [systemd-analyze]=systemd   # pinky service's unit is checked by systemd's own verifier
  [dbus-daemon]=dbus-daemon   # desktop notifications go through a real session bus in the tests
  [dpkg-deb]=dpkg   # make test builds the Debian package and installs it into a throwaway root
  [python3]=python3   # the example driver in Python (examples/driver-python) runs through pinky driver check
  [protoc]=protobuf-compiler   # and its protobuf code is generated at test time
  [node]=nodejs   # independent adb clients and mobile-mcp run against the virtual phones (internal/peers)
  [npm]=npm   # and install their pinned packages (internal/peers/testdata/node)
)
# file → Debian package, for what has no command of its own (Debian's python3 reads
# /usr/lib/python3/dist-packages).
declare -A files=(
  [/usr/include/google/protobuf/any.proto]=libprotobuf-dev   # protoc's well-known types
  [/usr/lib/python3/dist-packages/grpc/__init__.py]=python3-grpcio   # the Python example driver's gRPC
  [/usr/lib/python3/dist-packages/PIL/__init__.py]=python3-pil   # and its screenshots
)

missing=()
for cmd in "${!packages[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${packages[$cmd]}")
done
for f in "${!files[@]}"; do
  [ -e "$f" ] || missing+=("${files[$f]}")
done
# The PostgreSQL history's tests (internal/testkit/pgtest) start Debian's
# server themselves, on a private port and data folder, from
# /usr/lib/postgresql/VERSION/bin, which is not on PATH.
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [[ " ${missing[*]} " == *" postgresql "* ]]; then
    # No system cluster: Debian's package creates one on 5432 and starts it
    # when it can; the tests need none.
    $sudo mkdir -p /etc/postgresql-common/createcluster.d
    echo "create_main_cluster = off" | $sudo tee /etc/postgresql-common/createcluster.d/pinky-tests.conf >/dev/null
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "test-deps: Debian packages present (${!packages[*]} postgresql)"
fi

# The npm packages internal/peers runs (pinned in its package-lock.json),
# installed again only when the lock file changed. npm ci refuses this lock:
# mobilecli names binaries for other systems that the registry does not
# serve, so npm install installs it, and a lock it had to change fails
# the run, as npm ci would. mobile-mcp needs Node 20 or later: on an older
# node (Debian 12 has 18) npm's node package (the official binaries, from
# the npm registry) goes next to them.
peers=internal/peers/testdata/node
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 20 ] && [ ! -x "$peers/.node/node_modules/.bin/node" ]; then
  echo "test-deps: node $(node --version) is older than 20: npm's node@20 into $peers/.node"
  npm install --no-save --no-audit --no-fund --prefix "$peers/.node" node@20.20.2
fi
lock_sum=$(sha256sum "$peers/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$peers/node_modules/.pinky-lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
  echo "test-deps: npm install in $peers (from its package-lock.json)"
  (cd "$peers" && npm install --no-audit --no-fund --loglevel=error)
  if [ "$(sha256sum "$peers/package-lock.json" | cut -d' ' -f1)" != "$lock_sum" ]; then
    echo "test-deps: $peers/package-lock.json does not match its package.json: run npm install there and commit the lock" >&2
    exit 1
  fi
  echo "$lock_sum" >"$peers/node_modules/.pinky-lock-sha256"
else
  echo "test-deps: npm packages of $peers present"
fi

# The official MCP clients, the conformance suite and the stdio-to-HTTP
# bridge that internal/mcpclients runs (pinned in its package-lock.json),
# installed with npm ci again only when the lock file changed. The
# Inspector and the suite need Node 22.19 or later: unless the system's
# node is that new, npm's node package (the official binaries, from the
# npm registry) goes next to them, in $clients/.node.
clients=internal/mcpclients/testdata/node
clients_node=22.23.3
node_ok() { "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 19) ? 0 : 1)' 2>/dev/null; }
if ! node_ok node && [ "$("$clients/.node/node_modules/.bin/node" --version 2>/dev/null)" != "v$clients_node" ]; then
  echo "test-deps: node $(node --version) is older than 22.19: npm's node@$clients_node into $clients/.node"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$clients/.node" "node@$clients_node"
fi
lock_sum=$(sha256sum "$clients/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$clients/node_modules/.pinky-lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
  echo "test-deps: npm ci in $clients (from its package-lock.json)"
  # With that node first on PATH, so that the packages' install scripts
  # (the Inspector's) run on the node the tests use.
  (cd "$clients" && PATH="$PWD/.node/node_modules/.bin:$PATH" npm ci --no-audit --no-fund --loglevel=error)
  echo "$lock_sum" >"$clients/node_modules/.pinky-lock-sha256"
else
  echo "test-deps: npm packages of $clients present"
fi

echo "test-deps: Go modules and tools"
go mod download
echo "test-deps: buf $(go tool -modfile=scripts/tools/go.mod buf --version)"
echo "test-deps: ok"
