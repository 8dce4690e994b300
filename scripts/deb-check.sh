#!/usr/bin/env bash
# deb-check.sh: builds the Debian package, installs it into a throwaway
# root (its files, as dpkg would lay them out) and runs what it installed:
# pinky version, the man page, the unit through systemd's verifier, and
# pinky doctor on an empty data folder. make test runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
deb=$(scripts/deb.sh "$tmp/dist")
dpkg-deb --info "$deb" >/dev/null
dpkg-deb --field "$deb" Package Version Architecture
root="$tmp/root"
dpkg-deb -x "$deb" "$root"
for f in usr/bin/pinky usr/bin/pinky-driver-sim usr/bin/pinky-driver-android usr/bin/pinky-driver-ios \
  usr/lib/systemd/user/pinky.service usr/share/man/man1/pinky.1.gz usr/share/doc/pinky/README.md; do
  [ -e "$root/$f" ] || { echo "deb-check: $f is not in the package" >&2; exit 1; }
done
export PINKY_HOME="$tmp/home" XDG_RUNTIME_DIR= PINKY_DISABLE_DRIVERS=android,ios
"$root/usr/bin/pinky" version
"$root/usr/bin/pinky" version --json | grep -q '"name": "sim"' || { echo "deb-check: the packaged pinky does not find its packaged drivers" >&2; exit 1; }
zcat "$root/usr/share/man/man1/pinky.1.gz" | grep -q '^\.TH "PINKY"' || { echo "deb-check: pinky.1 is not a man page" >&2; exit 1; }
# The unit names /usr/bin/pinky; the verifier needs it there, so check a
# copy that names the packaged binary.
sed "s|/usr/bin/pinky|$root/usr/bin/pinky|" "$root/usr/lib/systemd/user/pinky.service" > "$tmp/pinky.service"
systemd-analyze verify "$tmp/pinky.service"
if "$root/usr/bin/pinky" help doctor >/dev/null 2>&1; then
  "$root/usr/bin/pinky" doctor || true  # a fresh machine has problems to report; it must run and say them
fi
echo "deb-check: ok ($deb)"
