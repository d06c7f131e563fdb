//go:build !unix

package workspace

const (
	oNonBlock = 0
	oNoFollow = 0
)
