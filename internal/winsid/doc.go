// Package winsid names the Windows user this process runs as, for the
// access lists that keep Pinky's pipe and token file to that user. It has
// code on Windows only.
package winsid
