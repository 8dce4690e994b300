#!/usr/bin/env bash
# dist.sh [GOOS/GOARCH ...]: release archives of the four binaries, each
# stripped and stamped with the version from git, with the README, into
# dist/: pinky_VERSION_GOOS_GOARCH.tar.gz and SHA256SUMS over every archive
# there. Without arguments it builds what this machine can: linux/amd64,
# and linux/arm64 with Debian's cross compiler (gcc-aarch64-linux-gnu).
# SQLite is built through cgo, so each target needs its C compiler; the
# macOS archives are built on macOS (.github/workflows/release.yml).
# Windows does not build yet (the local socket and the data folder's lock
# are Unix-only).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(linux/amd64 linux/arm64)
version=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
commit=$(git rev-parse HEAD 2>/dev/null || true)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)
date=$(git log -1 --format=%cI 2>/dev/null || true)
vpkg=github.com/pinky-gateway/pinky/internal/version
ldflags="-s -w -X $vpkg.Version=$version -X $vpkg.Commit=$commit -X $vpkg.Date=$date"
mkdir -p dist
for t in "${targets[@]}"; do
  goos=${t%/*} goarch=${t#*/}
  cc=${CC:-}
  if [ "$goos/$goarch" != "$(go env GOOS)/$(go env GOARCH)" ] && [ -z "$cc" ]; then
    case "$goos/$goarch" in
      linux/arm64) cc=aarch64-linux-gnu-gcc ;;
      linux/amd64) cc=x86_64-linux-gnu-gcc ;;
      *) echo "dist: $t cannot be built here: SQLite needs that system's C compiler (build it there, see .github/workflows/release.yml)" >&2; exit 1 ;;
    esac
    command -v "$cc" >/dev/null || { echo "dist: $t needs $cc: sudo apt install gcc-${cc%-gcc}" >&2; exit 1; }
  fi
  name="pinky_${version}_${goos}_${goarch}"
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/$name"
  CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch CC=${cc:-$(go env CC)} go build -trimpath -ldflags "$ldflags" -o "$stage/$name/" \
    ./cli/cmd/pinky ./drivers/sim/cmd/pinky-driver-sim ./drivers/android/cmd/pinky-driver-android ./drivers/ios/cmd/pinky-driver-ios
  cp README.md "$stage/$name/"
  cp deploy/systemd/pinky.service "$stage/$name/"
  tar -C "$stage" --owner=0 --group=0 --sort=name -czf "dist/$name.tar.gz" "$name"
  rm -rf "$stage"
  trap - EXIT
  echo "dist/$name.tar.gz"
done
(cd dist && sha256sum -- *.tar.gz > SHA256SUMS)
echo dist/SHA256SUMS
