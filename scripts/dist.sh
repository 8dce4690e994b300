#!/usr/bin/env bash
# dist.sh [GOOS/GOARCH ...]: release archives of the four binaries, each
# stripped and stamped with the version from git, with the README, into
# dist/: pinky_VERSION_GOOS_GOARCH.tar.gz and SHA256SUMS over every archive
# there (a .zip for Windows). Without arguments it builds what this machine
# can: linux/amd64, linux/arm64 with Debian's cross compiler
# (gcc-aarch64-linux-gnu) and windows/amd64 with Debian's MinGW-w64
# (gcc-mingw-w64-x86-64), installing a missing compiler with apt. SQLite is
# built through cgo, so each target needs its C compiler; the macOS archives
# are built on macOS (.github/workflows/release.yml).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(linux/amd64 linux/arm64 windows/amd64)
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
      windows/amd64) cc=x86_64-w64-mingw32-gcc ;;
      *) echo "dist: $t cannot be built here: SQLite needs that system's C compiler (build it there, see .github/workflows/release.yml)" >&2; exit 1 ;;
    esac
    if ! command -v "$cc" >/dev/null; then
      pkg=gcc-${cc%-gcc}
      [ "$cc" = x86_64-w64-mingw32-gcc ] && pkg=gcc-mingw-w64-x86-64
      command -v apt-get >/dev/null || { echo "dist: $t needs $cc (Debian's $pkg)" >&2; exit 1; }
      echo "dist: installing $pkg for $t"
      sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$pkg"
    fi
  fi
  name="pinky_${version}_${goos}_${goarch}"
  stage=$(mktemp -d)
  trap 'rm -rf "$stage"' EXIT
  mkdir -p "$stage/$name"
  CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch CC=${cc:-$(go env CC)} go build -trimpath -ldflags "$ldflags" -o "$stage/$name/" \
    ./cli/cmd/pinky ./drivers/sim/cmd/pinky-driver-sim ./drivers/android/cmd/pinky-driver-android ./drivers/ios/cmd/pinky-driver-ios
  cp README.md "$stage/$name/"
  if [ "$goos" = windows ]; then
    rm -f "dist/$name.zip"
    (cd "$stage" && find "$name" -type f | LC_ALL=C sort | zip -q -X "$OLDPWD/dist/$name.zip" -@)
    out=dist/$name.zip
  else
    cp deploy/systemd/pinky.service "$stage/$name/"
    tar -C "$stage" --owner=0 --group=0 --sort=name -czf "dist/$name.tar.gz" "$name"
    out=dist/$name.tar.gz
  fi
  rm -rf "$stage"
  trap - EXIT
  echo "$out"
done
(cd dist && sha256sum -- $(ls *.tar.gz *.zip 2>/dev/null) > SHA256SUMS)
echo dist/SHA256SUMS
