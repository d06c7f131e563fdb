//go:build !unix

package mcptool

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup is a no-op where process groups do not exist; only the direct child is stopped.
func ownGroup(*exec.Cmd) {}

// signalGroup kills the process pid (there is no graceful signal to send).
func signalGroup(pid int, _ syscall.Signal) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return nil
	}
	_ = p.Kill()
	return nil
}

// groupAlive cannot be known here; the caller waits for the direct child instead.
func groupAlive(int) bool { return false }

const (
	sigTerm = syscall.Signal(0xf)
	sigKill = syscall.Signal(0x9)
)
