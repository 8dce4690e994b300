//go:build !windows

package testkit

import "syscall"

// Kill ends the process pid at once (SIGKILL on Unix), as a crash would.
func Kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// Alive reports whether a process pid exists (a zombie still does).
func Alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
