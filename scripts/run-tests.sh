#!/usr/bin/env bash
# run-tests.sh [GO TEST FLAGS...]: every test of the module under the race
# detector, as `make test` runs them. The whole output is kept in
# $PINKY_TEST_LOG (default: a temporary file); when a package fails, what
# failed is printed again at the end (the FAIL lines, and for a run that
# timed out the tests that were running), since CI shows only the tail.
set -uo pipefail
cd "$(dirname "$0")/.."
log=${PINKY_TEST_LOG:-$(mktemp -t pinky-test.XXXXXX)}
${GO:-go} test -race -timeout 15m "$@" ./... 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	echo
	echo "=== what failed (the whole output: $log)"
	grep -E '^(--- FAIL|FAIL|panic: )' "$log" | head -80
	if grep -q '^panic: test timed out' "$log"; then
		echo "=== running when the time ran out:"
		grep -A20 '^running tests:' "$log" | head -40
	fi
fi
exit "$rc"
