package childproc

import (
	"io"
	"os"
	"strings"
	"testing"
)

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// StartPiped hands back the parent's ends only, and a start that fails leaves no pipe open.
func TestStartPiped(t *testing.T) {
	before := openFDs(t)
	if _, err := Command(nil, Tree, "/nonexistent/program").StartPiped(true); err == nil {
		t.Fatal("a missing program started")
	}
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after a failed start, %d before", n, before)
	}
	c := Command(nil, Tree, "sh", "-c", "read x; echo out:$x; echo err >&2")
	p, err := c.StartPiped(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(p.Stdin, "hi\n"); err != nil {
		t.Fatal(err)
	}
	p.Stdin.Close()
	out, _ := io.ReadAll(p.Stdout)
	errOut, _ := io.ReadAll(p.Stderr)
	if strings.TrimSpace(string(out)) != "out:hi" || strings.TrimSpace(string(errOut)) != "err" {
		t.Errorf("stdout %q, stderr %q", out, errOut)
	}
	if st := c.Wait(); !st.Success() {
		t.Errorf("wait: %+v", st)
	}
	p.Stdout.Close()
	p.Stderr.Close()
	if n := openFDs(t); n != before {
		t.Errorf("%d descriptors open after the child ended, %d before", n, before)
	}
}
