#!/usr/bin/env bash
# test-under-load.sh: make test beside a CPU hog (stress-ng --cpu 4 on top of
# the machine's own cores), to check that the tests hold on a busy machine:
# their deadlines scale with the load (internal/load), so a busy host is not
# taken for a slow program. Installs stress-ng with apt when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v stress-ng >/dev/null; then
  echo "test-under-load: installing stress-ng"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends stress-ng
fi
stress-ng --cpu "${STRESS_CPUS:-4}" --quiet &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT
start=$(date +%s)
make test "$@"
echo "test-under-load: make test passed beside stress-ng --cpu ${STRESS_CPUS:-4} in $(( $(date +%s) - start )) s"
