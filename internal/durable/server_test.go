package durable

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// temporalCLI is the dev server binary .ci/run installs (pinned) under .ci/temporal.
func temporalCLI(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("MASSGEN_TEMPORAL_CLI"); p != "" {
		return p
	}
	dir, _ := os.Getwd()
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	p := filepath.Join(dir, ".ci", "temporal", "bin", "temporal")
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Temporal dev server is not installed at %s: .ci/run installs it", p)
		}
		t.Skipf("the Temporal dev server is not installed at %s: run .ci/run once (or set MASSGEN_TEMPORAL_CLI)", p)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// devServer starts `temporal server start-dev` on free loopback ports, in memory, and returns
// its frontend address. The server is killed (its whole process group) when the test ends,
// and dies with the test process if that is killed first.
func devServer(t *testing.T) string {
	t.Helper()
	bin := temporalCLI(t)
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", fmt.Sprint(port), "--http-port", fmt.Sprint(freePort(t)), "--metrics-port", fmt.Sprint(freePort(t)),
		"--log-level", "error")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var logs strings.Builder
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the Temporal dev server: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if logs.Len() < 64<<10 {
				logs.WriteString(sc.Text() + "\n")
			}
		}
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		<-done
		if t.Failed() {
			t.Logf("dev server stderr:\n%s", logs.String())
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := Dial(ctx, Target{Address: addr})
		cancel()
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Temporal dev server did not come up at %s: %v", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
