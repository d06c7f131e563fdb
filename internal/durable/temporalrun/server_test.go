package temporalrun

import (
	"bufio"
	"context"
	"fmt"
	"massgen/internal/durable"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// temporalCLI is the dev server binary .ci/run installs (pinned) under .ci/temporal.
func temporalCLI(t testing.TB) string {
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

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// server is the dev server the tests of this package share; TestMain stops it.
var server struct {
	once sync.Once
	addr string
	err  error
	cmd  *exec.Cmd
	logs *strings.Builder
	done chan struct{}
}

// devServer starts `temporal server start-dev` on free loopback ports, in memory, once for the
// package, and returns its frontend address. TestMain kills it (its whole process group)
// when the tests end, and it dies with the test process if that is killed first.
func devServer(t testing.TB) string {
	t.Helper()
	bin := temporalCLI(t)
	server.once.Do(func() { server.addr, server.err = startServer(t, bin) })
	if server.err != nil {
		t.Fatalf("%v\ndev server stderr:\n%s", server.err, server.logs.String())
	}
	return server.addr
}

func startServer(t testing.TB, bin string) (string, error) {
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(bin, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
		"--port", fmt.Sprint(port), "--http-port", fmt.Sprint(freePort(t)), "--metrics-port", fmt.Sprint(freePort(t)),
		"--log-level", "error")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	server.logs = &strings.Builder{}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start the Temporal dev server: %w", err)
	}
	server.cmd, server.done = cmd, make(chan struct{})
	go func() {
		defer close(server.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if server.logs.Len() < 64<<10 {
				server.logs.WriteString(sc.Text() + "\n")
			}
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := Dial(ctx, durable.Target{Address: addr})
		cancel()
		if err == nil {
			c.Close()
			return addr, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the Temporal dev server did not come up at %s: %w", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stopServer kills the dev server, if one was started, and waits for it.
func stopServer() {
	if server.cmd == nil {
		return
	}
	_ = syscall.Kill(-server.cmd.Process.Pid, syscall.SIGKILL)
	_ = server.cmd.Wait()
	<-server.done
}
