//go:build unix

package cli

import (
	"fmt"
	"os"
	"syscall"
)

// execCompanion replaces this process with the companion, args unchanged.
func execCompanion(path string, args []string) error {
	err := syscall.Exec(path, append([]string{path}, args...), os.Environ())
	return exitf(ExitConfig, "%v", fmt.Errorf("start %s: %w", path, err))
}
