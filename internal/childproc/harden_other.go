//go:build !linux

package childproc

// Harden does nothing here: there is no /proc/<pid>/environ to erase, and no portable way to
// refuse same-user debuggers.
func Harden() error { return nil }
