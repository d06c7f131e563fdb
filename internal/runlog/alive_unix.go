//go:build unix

package runlog

import (
	"errors"
	"os"
	"syscall"
)

// gone reports whether process pid of host is known not to run: only a process of this
// machine can be asked.
func gone(pid int, host string) bool {
	if h, err := os.Hostname(); err != nil || h != host || pid == os.Getpid() {
		return false
	}
	err := syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}
