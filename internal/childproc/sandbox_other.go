//go:build !linux

package childproc

import (
	"errors"
	"runtime"
)

// SandboxReady reports that a Sandbox cannot run here: bubblewrap and the namespaces it builds
// on are Linux's.
func SandboxReady() error {
	return errors.New("the sandbox is built on bubblewrap, which runs on Linux only, not on " + runtime.GOOS)
}

// SandboxNote is "" here: no Sandbox runs at all (SandboxReady).
func SandboxNote() string { return "" }
