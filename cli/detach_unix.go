//go:build !windows

package cli

import (
	"os/exec"
	"syscall"
)

// detach makes cmd a session of its own, so that it outlives the agent
// host's terminal and process group.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
