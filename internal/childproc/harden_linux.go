package childproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Harden keeps massgen's keys out of reach of processes of the same user that run outside a
// confined child's namespaces (the fallback, or anything else the user runs). Call it first thing
// in main, before any goroutine reads the environment through C.
//
// It erases the environment block the kernel shows as /proc/<pid>/environ (the region between
// env_start and env_end of /proc/self/stat: the Go runtime copied every string out of it at
// start, see runtime.goenvs, and os.Environ reads that copy), and then makes the process
// non-dumpable, so that its environ, mem and ptrace are refused to any process without
// CAP_SYS_PTRACE, same user or not. The keys remain in massgen's memory, behind that second lock.
func Harden() error {
	// Erase first: a non-dumpable process may no longer open its own /proc/self/mem.
	errScrub := scrubEnviron()
	var errDump error
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		errDump = fmt.Errorf("cannot make massgen non-dumpable: %w", err)
	}
	return errors.Join(errScrub, errDump)
}

// scrubEnviron overwrites the initial environment block with NUL bytes.
func scrubEnviron() error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return fmt.Errorf("cannot erase the environment block: %w", err)
	}
	i := bytes.LastIndexByte(stat, ')')
	f := bytes.Fields(stat[i+1:]) // field 3 (state) first: env_start is field 50, env_end 51
	if i < 0 || len(f) < 49 {
		return errors.New("cannot erase the environment block: /proc/self/stat has no env_start")
	}
	start, err1 := strconv.ParseInt(string(f[47]), 10, 64)
	end, err2 := strconv.ParseInt(string(f[48]), 10, 64)
	if err1 != nil || err2 != nil || start <= 0 || end < start || end-start > 64<<20 {
		return fmt.Errorf("cannot erase the environment block: bad bounds %q..%q", f[47], f[48])
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cannot erase the environment block: %w", err)
	}
	defer mem.Close()
	if _, err := mem.WriteAt(make([]byte, end-start), start); err != nil {
		return fmt.Errorf("cannot erase the environment block: %w", err)
	}
	return nil
}
