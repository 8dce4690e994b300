//go:build windows

package winsid

import (
	"fmt"

	"golang.org/x/sys/windows"
)

// User is the SID of the user this process runs as.
func User() (*windows.SID, error) {
	u, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("reading this process's user: %w", err)
	}
	return u.User.Sid, nil
}
