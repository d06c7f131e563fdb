package proctest

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"massgen/internal/childproc/procfs"
)

// WithMarker lists the live processes whose command line contains m, as "pid: command line".
func WithMarker(m string) []string {
	var out []string
	for _, pid := range matching("cmdline", []byte(m)) {
		cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		out = append(out, strconv.Itoa(pid)+": "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

// WithEnv lists the live processes whose environment holds the variable kv ("NAME=value").
func WithEnv(t testing.TB, kv string) []int {
	return matching("environ", []byte(kv+"\x00"))
}

// matching lists the live processes whose /proc/PID/file contains want.
func matching(file string, want []byte) []int {
	procs, _ := procfs.Processes()
	var out []int
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/" + file)
		if err == nil && p.Live() && bytes.Contains(b, want) {
			out = append(out, p.PID)
		}
	}
	return out
}

// RequireNone waits up to d for every process with m in its command line to be gone.
func RequireNone(t testing.TB, m string, d time.Duration) {
	t.Helper()
	if !Eventually(d, func() bool { return len(WithMarker(m)) == 0 }) {
		t.Fatalf("processes outlived their command: %q", WithMarker(m))
	}
}

// GroupMembers lists the live processes of the process group pgid.
func GroupMembers(t testing.TB, pgid int) []int {
	t.Helper()
	procs, err := procfs.Processes()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, p := range procs {
		if p.PGID == pgid && p.Live() {
			out = append(out, p.PID)
		}
	}
	return out
}

// PGID is the process group of the live process pid; the test fails if there is none.
func PGID(t testing.TB, pid int) int {
	t.Helper()
	p, err := procfs.Read(pid)
	if err != nil || !p.Live() {
		t.Fatalf("no process %d: %v", pid, err)
	}
	return p.PGID
}
