//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package lineedit

import "os"

// Supported reports whether Open can give a line editor on this system: not here, where
// the prompt reads plain lines.
const Supported = false

// Open returns false: this system has no line editor.
func Open(in, out *os.File) (*Reader, bool) { return nil, false }
