package cli

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestServe_RefusesBadSetups(t *testing.T) {
	demo := repoFile(t, "examples/demo.yaml")
	tests := []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"no team", []string{"serve"}, regexp.MustCompile(`at least one --config`)},
		{"missing file", []string{"serve", "--config", "nope.yaml"}, regexp.MustCompile(`config file not found`)},
		{"negative cap", []string{"serve", "--config", demo, "--max-sessions", "-1"}, regexp.MustCompile(`--max-sessions -1: use a positive number`)},
		{"open address without a token", []string{"serve", "--config", demo, "--addr", "0.0.0.0:0"}, regexp.MustCompile(`(?i)token`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, out, stderr := execute(t, t.Context(), tc.args...)
			if code != ExitConfig || !tc.want.MatchString(stderr+out) {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
			}
		})
	}
}

func TestServe_AnswersAndStopsWithItsContext(t *testing.T) {
	t.Chdir(t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int)
	var out string
	go func() {
		code, o, _ := execute(t, ctx, "serve", "--config", repoFile(t, "examples/demo.yaml"), "--addr", addr)
		out = o
		done <- code
	}()
	var resp *http.Response
	for range 100 {
		if resp, err = http.Get("http://" + addr + "/v1/models"); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /v1/models: %s", resp.Status)
	}
	cancel()
	if code := <-done; code != 0 && code != ExitInterrupted {
		t.Errorf("serve ended with %d", code)
	}
	if !strings.Contains(out, "http://"+addr) {
		t.Errorf("serve did not print its URL:\n%s", out)
	}
}

// A taken port is said plainly, without Go's "listen tcp" text.
func TestServe_PortTaken(t *testing.T) {
	t.Chdir(t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	demo := repoFile(t, "examples/demo.yaml")
	for _, args := range [][]string{{"serve", "--config", demo, "--addr", addr}, {"--config", demo, "--web", "--web-port", port, "q?"}} {
		code, _, stderr := execute(t, t.Context(), args...)
		if code != ExitExecution || !strings.Contains(stderr, "cannot listen on "+addr+": address already in use (is another server on that port?") ||
			strings.Contains(stderr, "listen tcp") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
