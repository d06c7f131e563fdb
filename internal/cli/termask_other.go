//go:build !unix

package cli

import "os"

// terminalLines is nil where a terminal read cannot be given up: asks follow
// automation_default.
func terminalLines(*os.File) lineReader { return nil }
