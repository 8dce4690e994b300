#!/usr/bin/env bash
# Checks the driver contract: lint, format, generated code up to date, and no
# incompatible change against the previous commit (when there is one).
set -euo pipefail
cd "$(dirname "$0")/.."
buf() { go tool -modfile=scripts/tools/go.mod buf "$@"; }

echo "proto-check: lint"
buf lint
echo "proto-check: format"
buf format --diff --exit-code
echo "proto-check: generated code"
buf generate
if ! git diff --exit-code -- "proto/*.pb.go" >/dev/null || [ -n "$(git ls-files --others --exclude-standard -- "proto/*.pb.go")" ]; then
  echo "proto-check: generated code differs from what is committed; run 'make proto' and commit:" >&2
  git status --short -- proto/ >&2
  exit 1
fi
if git rev-parse -q --verify HEAD~1 >/dev/null && git cat-file -e HEAD~1:buf.yaml 2>/dev/null; then
  echo "proto-check: breaking changes against HEAD~1"
  buf breaking --against '.git#ref=HEAD~1'
else
  echo "proto-check: no previous commit with a contract; buf breaking skipped"
fi
echo "proto-check: ok"
