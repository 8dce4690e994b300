// Package hostv1 is the Go code that buf generates from the pairing
// contract pinky.host.v1 (pairing.proto): the call a phone host makes to
// the gateway, once, to receive its client certificate. Package
// gateway/remote serves and calls it. This file is written by hand; make
// proto regenerates the *.pb.go files and make proto-check fails when they
// are not current.
package hostv1
