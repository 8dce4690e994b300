#!/usr/bin/env bash
# deb.sh OUT_DIR: builds the Debian package of Pinky for this machine's
# architecture into OUT_DIR (default dist/): the four binaries, the systemd
# user unit, the man pages made from the command tree, the README.
# `make deb` runs it; `make deb-check` installs the package into a
# throwaway root and runs what it installed.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
arch=$(dpkg --print-architecture)
# A Debian version starts with a digit: a tag v1.2.3 is 1.2.3; without a
# tag, 0.0.0~git<commit time>.<commit>.
desc=$(git describe --tags --always --dirty 2>/dev/null || echo dev)
if [[ $desc =~ ^v([0-9].*)$ ]]; then
  debver=${BASH_REMATCH[1]//-/+}
else
  debver="0.0.0~git$(git log -1 --format=%cd --date=format:%Y%m%d%H%M%S 2>/dev/null || date +%Y%m%d).$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  [[ $desc == *-dirty ]] && debver+="+dirty"
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
${MAKE:-make} --no-print-directory build BIN="$root/usr/bin" >/dev/null
install -D -m 0644 deploy/systemd/pinky.service "$root/usr/lib/systemd/user/pinky.service"
"$root/usr/bin/pinky" man "$root/usr/share/man/man1"
gzip -9n "$root"/usr/share/man/man1/*.1
install -D -m 0644 README.md "$root/usr/share/doc/pinky/README.md"
mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: pinky
Version: $debver
Architecture: $arch
Maintainer: Pinky maintainers <maintainers@pinky-gateway.invalid>
Installed-Size: $size
Depends: libc6
Recommends: adb
Suggests: ffmpeg
Section: utils
Priority: optional
Homepage: https://github.com/pinky-gateway/pinky
Description: let AI agents use your phones, with you in charge
 Pinky is a gateway between AI agents (over MCP) and your real Android
 phones and iPhones. You stay in charge through approvals, a live mirror,
 take-over and a full history. Run "pinky service install" to keep its
 daemon running with your session, and "pinky mcp install --host ..." to
 give an agent host your phones.
CONTROL
mkdir -p "$out"
deb="$out/pinky_${debver}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
