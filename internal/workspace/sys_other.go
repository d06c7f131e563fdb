//go:build !unix

package workspace

import "os/exec"

const (
	oNonBlock = 0
	oNoFollow = 0
)

// ownGroup leaves cancellation to exec: without process groups only the shell is killed.
func ownGroup(cmd *exec.Cmd) {}
