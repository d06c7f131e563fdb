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
		{"open address without a token", []string{"serve", "--config", demo, "--addr", "0.0.0.0:0", "--no-token"}, regexp.MustCompile(`--no-token serves loopback only`)},
		{"open host without a token", []string{"serve", "--config", demo, "--host", "0.0.0.0", "--no-token"}, regexp.MustCompile(`--no-token serves loopback only, and 0\.0\.0\.0:8080 is not loopback`)},
		{"--addr and --port", []string{"serve", "--config", demo, "--addr", "127.0.0.1:9000", "--port", "9001"}, regexp.MustCompile(`--addr 127\.0\.0\.1:9000 and --host/--port both say where to listen`)},
		{"--addr and --host", []string{"serve", "--config", demo, "--addr", "127.0.0.1:9000", "--host", "::1"}, regexp.MustCompile(`both say where to listen`)},
		{"bad port", []string{"serve", "--config", demo, "--port", "70000"}, regexp.MustCompile(`--port 70000: use a port from 1 to 65535`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, out, stderr := execute(t, t.Context(), tc.args...)
			// The refusals say what to do, without the package prefixes of errors ("web: ").
			if code != ExitConfig || !tc.want.MatchString(stderr+out) || strings.Contains(stderr, "web: ") {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, stderr)
			}
		})
	}
}

// serving is a massgen serve started by startServe.
type serving struct {
	addr   string
	token  string // from the server's file under ~/.massgen/servers, as the user's own tools read it
	models string // the body of GET /v1/models
	stop   func() (code int, stdout, stderr string)
}

// startServe runs massgen serve with args on a free port, in a fresh working folder, and waits
// until its server file names a token and it answers GET /v1/models with it; stop ends it and
// returns how it ended.
func startServe(t *testing.T, args ...string) serving {
	t.Helper()
	return startServeAt(t, func(addr string) []string { return []string{"--addr", addr} }, args...)
}

// startServeAt is startServe with the flags that name the address it listens on.
func startServeAt(t *testing.T, listen func(addr string) []string, args ...string) serving {
	t.Helper()
	t.Chdir(t.TempDir())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(t.Context())
	type ended struct {
		code        int
		out, errOut string
	}
	done := make(chan ended, 1)
	go func() {
		code, out, errOut := execute(t, ctx, append(append([]string{"serve"}, args...), listen(addr)...)...)
		done <- ended{code, out, errOut}
	}()
	stop := func() (int, string, string) {
		cancel()
		e := <-done
		return e.code, e.out, e.errOut
	}
	for range 100 {
		info, ok := readServerFile(t, "serve", addr)
		if !ok {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		resp, err := bearerGet(t, "http://"+addr+"/v1/models", info.Token)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET /v1/models: %s", resp.Status)
			}
			return serving{addr: addr, token: info.Token, models: string(body), stop: stop}
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, out, errOut := stop()
	t.Fatalf("serve did not start: exit %d\n%s%s", code, out, errOut)
	return serving{}
}

func TestServe_AnswersAndStopsWithItsContext(t *testing.T) {
	s := startServe(t, "--config", repoFile(t, "examples/demo.yaml"))
	code, out, _ := s.stop()
	if code != 0 && code != ExitInterrupted {
		t.Errorf("serve ended with %d", code)
	}
	if !strings.Contains(out, "http://"+s.addr) {
		t.Errorf("serve did not print its URL:\n%s", out)
	}
}

// MassGen's --host and --port name the address as --addr does; a port alone keeps the
// loopback host.
func TestServe_HostAndPort(t *testing.T) {
	demo := repoFile(t, "examples/demo.yaml")
	for name, listen := range map[string]func(string) []string{
		"host and port": func(addr string) []string {
			host, port, _ := net.SplitHostPort(addr)
			return []string{"--host", host, "--port", port}
		},
		"port alone": func(addr string) []string {
			_, port, _ := net.SplitHostPort(addr)
			return []string{"--port", port}
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := startServeAt(t, listen, "--config", demo)
			if _, out, _ := s.stop(); !strings.Contains(out, "dashboard at http://"+s.addr+"/?token=") {
				t.Errorf("serve did not print its URL at %s:\n%s", s.addr, out)
			}
		})
	}
}

// A team whose agents have no key is served, with a warning at start naming what to set:
// otherwise every request would fail, one at a time.
func TestServe_WarnsOfMissingKeys(t *testing.T) {
	team := writeConfig(t, "agents:\n  - id: gpt\n    backend: {type: openai, model: gpt-5.4}\n")
	s := startServe(t, "--config", team)
	_, _, errOut := s.stop()
	if !strings.Contains(errOut, "agent gpt: no API key for backend openai: set OPENAI_API_KEY") {
		t.Errorf("no warning of the missing key:\n%s", errOut)
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
			s := startServe(t, "--setup-dir", dir)
			_, out, errOut := s.stop()
			if !strings.Contains(s.models, tc.want) {
				t.Errorf("GET /v1/models = %s, want %s", s.models, tc.want)
			}
			if !strings.Contains(out+errOut, "no default team") {
				t.Errorf("serve did not say why no default team is served:\n%s%s", out, errOut)
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
