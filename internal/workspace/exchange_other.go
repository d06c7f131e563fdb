//go:build !linux

package workspace

import "errors"

// exchange is Linux's renameat2(RENAME_EXCHANGE); elsewhere Snapshot falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
