package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
		{"no team", []string{"serve"}, regexp.MustCompile(`no config and no API key found(.|\n)*--setup-dir DIR`)},
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

// With --setup-dir, serve starts without any team (the wizard builds the first), and serves
// the teams saved there before, as the wizard names them.
func TestServe_SetupDirTeams(t *testing.T) {
	for _, tc := range []struct {
		name  string
		saved bool
		want  string
	}{
		{"empty", false, `"data":[]`},
		{"saved team", true, `"id":"mine"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			dir := t.TempDir()
			if tc.saved {
				demo, err := os.ReadFile(repoFile(t, "examples/demo.yaml"))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "mine.yaml"), demo, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan string)
			go func() {
				_, out, stderr := execute(t, ctx, "serve", "--setup-dir", dir, "--addr", addr)
				done <- out + stderr
			}()
			var resp *http.Response
			for range 100 {
				if resp, err = http.Get("http://" + addr + "/v1/models"); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				cancel()
				t.Fatalf("serve did not start: %v\n%s", err, <-done)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			cancel()
			out := <-done
			if !strings.Contains(string(body), tc.want) {
				t.Errorf("GET /v1/models = %s, want %s", body, tc.want)
			}
			if !strings.Contains(out, "no default team") {
				t.Errorf("serve did not say why no default team is served:\n%s", out)
			}
		})
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
