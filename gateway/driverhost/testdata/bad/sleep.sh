#!/bin/sh
# Never answers the handshake.
echo "sleeping instead of answering the handshake" >&2
exec sleep 30
