#!/bin/sh
# generate.sh [OUT]: writes the Python code of the protos this driver speaks
# into OUT (default: gen beside this script) with protoc's own Python
# generator. The gRPC services are wired by hand (pyphone/service.py), so no
# gRPC code generator is needed. Needs protoc and the protobuf well-known
# types (Debian: protobuf-compiler libprotobuf-dev).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here/gen}
mkdir -p "$out"
"${PROTOC:-protoc}" -I "$root/proto" -I "$here/proto" --python_out="$out" \
  pinky/driver/v1/driver.proto pinky/driver/v1/options.proto \
  plugin/grpc_controller.proto plugin/grpc_stdio.proto \
  google/rpc/status.proto google/rpc/error_details.proto grpc_health/v1/health.proto
