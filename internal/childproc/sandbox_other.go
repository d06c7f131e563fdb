//go:build !linux

package childproc

import (
	"fmt"
	"runtime"
)

// SandboxReady reports that a Sandbox cannot run here: bubblewrap and the namespaces it builds
// on are Linux's.
func SandboxReady() error {
	return fmt.Errorf("%w, not on %s", ErrNotLinux, runtime.GOOS)
}

// SandboxMissing reports that a Sandbox lacks Linux here.
func SandboxMissing() error { return ErrNotLinux }

// SandboxNote is "" here: no Sandbox runs at all (SandboxReady).
func SandboxNote() string { return "" }
