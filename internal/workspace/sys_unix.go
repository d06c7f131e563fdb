//go:build unix

package workspace

import "syscall"

const (
	oNonBlock = syscall.O_NONBLOCK
	oNoFollow = syscall.O_NOFOLLOW
)
