//go:build unix

package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// terminalLines reads lines from the terminal f in a way that can be given up: each read goes
// through a non-blocking duplicate with a deadline, and f is blocking again afterwards (the
// flag is shared with f, which the interactive prompt reads).
func terminalLines(f *os.File) lineReader {
	return func(ctx context.Context, stop func() bool) (string, bool) {
		fd, err := unix.Dup(int(f.Fd()))
		if err != nil {
			return "", false
		}
		if err := unix.SetNonblock(fd, true); err != nil {
			unix.Close(fd)
			return "", false
		}
		nb := os.NewFile(uintptr(fd), "terminal") // non-blocking: reads take deadlines
		defer func() {
			nb.Close()
			_ = unix.SetNonblock(int(f.Fd()), false)
		}()
		var line strings.Builder
		buf := make([]byte, 1)
		for line.Len() < 4096 {
			if stop() {
				return "", false
			}
			_ = nb.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			n, err := nb.Read(buf)
			if n == 1 {
				if buf[0] == '\n' {
					return line.String(), true
				}
				line.WriteByte(buf[0])
				continue
			}
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return "", false // the terminal is gone: the ask times out
			}
		}
		return line.String(), true
	}
}
