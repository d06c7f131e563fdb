//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package lineedit

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
	"golang.org/x/sys/unix"
)

// Poll intervals: how often a waiting prompt notices that its context ended, and how long a
// lone Esc waits for the rest of a sequence.
const (
	pollEvery = 100 // ms
	escWait   = 30  // ms
)

// Supported reports whether Open can give a line editor on this system.
const Supported = true

// Open returns a Reader on the terminal in and out, or false when either is not a terminal.
func Open(in, out *os.File) (*Reader, bool) {
	if !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return nil, false
	}
	return NewReader(terminal{in: in, out: out}, out), true
}

// terminal reads a terminal with poll(2), so a prompt waiting for a key stops when its
// context ends, and no goroutine is ever left reading the terminal after ReadLine returns
// (the live view reads it next).
type terminal struct{ in, out *os.File }

func (t terminal) Raw() (func() error, error) {
	st, err := term.MakeRaw(t.in.Fd())
	if err != nil {
		return nil, err
	}
	return func() error { return term.Restore(t.in.Fd(), st) }, nil
}

func (t terminal) Wait(ctx context.Context, short bool) (bool, error) {
	fds := []unix.PollFd{{Fd: int32(t.in.Fd()), Events: unix.POLLIN}}
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		timeout := pollEvery
		if short {
			timeout = escWait
		}
		n, err := unix.Poll(fds, timeout)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return false, err
		case n > 0: // readable, or hung up: Read says which
			return true, nil
		case short:
			return false, nil
		}
	}
}

func (t terminal) Read(p []byte) (int, error) {
	n, err := unix.Read(int(t.in.Fd()), p)
	switch {
	case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
		return 0, nil // Wait again
	case err != nil:
		return 0, err
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (t terminal) Width() int {
	w, _, err := term.GetSize(t.out.Fd())
	if err != nil {
		return 0
	}
	return w
}
