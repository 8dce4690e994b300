#!/bin/sh
# Writes something other than the handshake line on stdout.
echo "hello from a driver that prints before its handshake"
exec sleep 30
