// Package driverv1 is the Go code that buf generates from the driver
// contract pinky.driver.v1 (driver.proto; the normative text is SPEC.md).
// The SDK's adapters (drivers/sdk) and the conformance suite's wire checks
// (drivers/drivertest) import it; drivers and the gateway see the SDK's Go
// types instead. This file is written by hand; make proto regenerates the
// *.pb.go files and make proto-check fails when they are not current.
package driverv1
