package cli

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverFilePath is where a server of kind listening on addr leaves its URL and token.
func serverFilePath(t *testing.T, kind, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(home, ".massgen", "servers", kind+"-"+port+".json")
}

// readServerFile reads the file of a server of kind on addr, once it names this process; it
// must be readable by the user alone.
func readServerFile(t *testing.T, kind, addr string) (serverInfo, bool) {
	t.Helper()
	path := serverFilePath(t, kind, addr)
	b, err := os.ReadFile(path)
	var info serverInfo
	if err != nil || json.Unmarshal(b, &info) != nil || info.PID != os.Getpid() {
		return info, false
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v (%v), want 0600", path, st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("%s: mode %v (%v), want 0700", filepath.Dir(path), st.Mode(), err)
	}
	return info, true
}

func bearerGet(t *testing.T, url, token string) (*http.Response, error) {
	t.Helper()
	return bearerDo(t, http.MethodGet, url, token, "")
}

func bearerDo(t *testing.T, method, url, token, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return http.DefaultClient.Do(req)
}

// evilTeam is a team whose MCP server, when a session starts it, creates marker: the program
// another local process would have massgen run as the user.
func evilTeam(marker string) string {
	return `agents:
  - id: a
    backend:
      type: scripted
      latency: 0s
      answers: ["x"]
      mcp_servers:
        - name: evil
          type: stdio
          command: /bin/sh
          args: ["-c", "touch ` + marker + `"]
`
}

// absent fails the test if marker exists, after giving a started program time to make it.
func absent(t *testing.T, marker string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("%s was created: a local process without the token made massgen run a program", marker)
	}
}

// Another local process knows serve's port, not its token: it can neither save a team whose
// MCP server is its own program nor start a run, and the program never runs.
func TestServe_LocalProcessWithoutTheTokenStartsNoProgram(t *testing.T) {
	t.Setenv(tokenEnv, "")
	setup := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	demo, err := os.ReadFile(repoFile(t, "examples/demo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(setup, "demo.yaml"), demo, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--setup-dir", setup)
	defer s.stop()
	base := "http://" + s.addr
	save, _ := json.Marshal(map[string]string{"name": "evil", "yaml": evilTeam(marker)})
	for _, token := range []string{"", "wrong-token"} {
		for _, req := range []struct{ path, body string }{
			{"/api/setup/save", string(save)},
			{"/api/runs", `{"team":"evil","question":"q"}`},
			{"/api/runs", `{"team":"demo","question":"q"}`},
			{"/v1/chat/completions", `{"model":"demo","messages":[{"role":"user","content":"q"}]}`},
		} {
			resp, err := bearerDo(t, http.MethodPost, base+req.path, token, req.body)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("POST %s with token %q: %s, want 401", req.path, token, resp.Status)
			}
		}
	}
	absent(t, marker)
	if _, err := os.Stat(filepath.Join(setup, "evil.yaml")); err == nil {
		t.Error("the team was saved")
	}
	resp, err := bearerGet(t, base+"/api/sessions", s.token)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), "log_") {
		t.Errorf("sessions with the token: %s %s", resp.Status, body)
	}
}

// The same for massgen mcp --http: no MCP session, no ask_team, no program.
func TestMCP_HTTPLocalProcessWithoutTheTokenStartsNoProgram(t *testing.T) {
	t.Setenv(tokenEnv, "")
	t.Chdir(t.TempDir())
	marker := filepath.Join(t.TempDir(), "ran")
	team := writeConfig(t, evilTeam(marker))
	addr := "127.0.0.1:" + freePort(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		code, _, _ := execute(t, ctx, "mcp", "--config", team, "--http", addr)
		done <- code
	}()
	defer func() { cancel(); <-done }()
	var info serverInfo
	for ok := false; !ok; time.Sleep(20 * time.Millisecond) {
		info, ok = readServerFile(t, "mcp", addr)
	}
	if info.URL != "http://"+addr+"/mcp" {
		t.Fatalf("server file %+v", info)
	}
	if info.Token == "" {
		t.Error("the server has no token")
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_team","arguments":{"question":"q"}}}`
	resp, err := bearerDo(t, http.MethodPost, info.URL, "", call)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("tools/call without the token: %s", resp.Status)
	}
	// A real client, as a local process would run one: it must not get a session at all.
	tr := &mcp.StreamableClientTransport{Endpoint: info.URL, DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "intruder", Version: "1"}, nil).Connect(t.Context(), tr, nil)
	if err == nil {
		_, _ = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask_team", Arguments: map[string]any{"question": "q"}})
		cs.Close()
		t.Error("a client without the token connected")
	}
	absent(t, marker)
}

// The token comes from $MASSGEN_SERVE_TOKEN, else --token-file, else is made at start; the
// printed URL carries it, the server file names it, and it is gone after a clean exit.
func TestServe_TokenSources(t *testing.T) {
	demo := repoFile(t, "examples/demo.yaml")
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("from-the-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string // "" for a fresh one
	}{
		{"environment", "from-the-env-0123456789", nil, "from-the-env-0123456789"},
		{"file", "", []string{"--token-file", file}, "from-the-file-0123456789"},
		{"environment over file", "from-the-env-0123456789", []string{"--token-file", file}, "from-the-env-0123456789"},
		{"fresh", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(tokenEnv, tc.env)
			s := startServe(t, append([]string{"--config", demo}, tc.args...)...)
			if tc.want != "" && s.token != tc.want || len(s.token) < 32 && tc.want == "" {
				t.Errorf("token %q, want %q", s.token, tc.want)
			}
			resp, err := bearerGet(t, "http://"+s.addr+"/v1/models", "")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("without the token: %s", resp.Status)
			}
			path := serverFilePath(t, "serve", s.addr)
			code, out, errOut := s.stop()
			if code != 0 {
				t.Errorf("exit %d\n%s", code, errOut)
			}
			if !strings.Contains(out, "dashboard at http://"+s.addr+"/?token="+s.token+"\n") || !strings.Contains(out, path) {
				t.Errorf("stdout does not carry the token's URL and file:\n%s", out)
			}
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%s is left after exit", path)
			}
		})
	}
}

// A file a dead server left on the same port is replaced, not trusted.
func TestServe_ReplacesAStaleServerFile(t *testing.T) {
	t.Setenv(tokenEnv, "")
	port := freePort(t)
	addr := "127.0.0.1:" + port
	stale := serverFilePath(t, "serve", addr)
	if err := writePrivate(filepath.Dir(stale), stale, serverInfo{Kind: "serve", URL: "http://" + addr + "/", Token: "stale", PID: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan int, 1)
	go func() {
		code, _, _ := execute(t, ctx, "serve", "--config", repoFile(t, "examples/demo.yaml"), "--addr", addr)
		done <- code
	}()
	var info serverInfo
	for ok := false; !ok; time.Sleep(20 * time.Millisecond) {
		info, ok = readServerFile(t, "serve", addr)
	}
	cancel()
	<-done
	if info.Token == "stale" || info.Token == "" {
		t.Errorf("token %q", info.Token)
	}
}

// Tokens never come from the command line, and --no-token serves loopback only.
func TestServerToken_Refusals(t *testing.T) {
	demo := repoFile(t, "examples/demo.yaml")
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const moved = "--token is no longer accepted: any local user can read a command line"
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"serve --token", "", []string{"serve", "--config", demo, "--token", "t0ken"}, moved},
		{"serve --token=", "", []string{"serve", "--config", demo, "--token="}, moved},
		{"mcp --token", "", []string{"mcp", "--config", demo, "--http", "127.0.0.1:0", "--token", "t0ken"}, moved},
		{"mcp stdio --token", "", []string{"mcp", "--config", demo, "--token", "t0ken"}, moved},
		{"mcp stdio --no-token", "", []string{"mcp", "--config", demo, "--no-token"}, "go with --http ADDR"},
		{"web flags without --web", "", []string{"--config", demo, "--no-token", "q"}, "--no-token goes with --web"},
		{"serve --no-token off loopback", "", []string{"serve", "--config", demo, "--no-token", "--addr", "0.0.0.0:0"}, "--no-token serves loopback only"},
		{"mcp --no-token off loopback", "", []string{"mcp", "--config", demo, "--no-token", "--http", ":0"}, "--no-token serves loopback only"},
		{"web --no-token off loopback", "", []string{"--config", demo, "--web", "--web-host", "0.0.0.0", "--web-port", "0", "--no-token", "q"}, "--no-token serves loopback only"},
		{"--no-token and the environment", "set-0123456789", []string{"serve", "--config", demo, "--no-token"}, "--no-token contradicts $" + tokenEnv},
		{"--no-token and a file", "", []string{"serve", "--config", demo, "--no-token", "--token-file", empty}, "--no-token contradicts --token-file"},
		{"empty token file", "", []string{"serve", "--config", demo, "--token-file", empty}, "is empty: write a secret into it"},
		{"missing token file", "", []string{"serve", "--config", demo, "--token-file", empty + ".nope"}, "--token-file: open"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			t.Setenv(tokenEnv, tc.env)
			code, _, stderr := execute(t, t.Context(), tc.args...)
			if code != ExitConfig || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %q", code, stderr, tc.want)
			}
		})
	}
}

// --no-token on loopback is the explicit opt-out: the server answers without a token.
func TestServe_NoTokenOnLoopback(t *testing.T) {
	t.Setenv(tokenEnv, "")
	s := startServe(t, "--config", repoFile(t, "examples/demo.yaml"), "--no-token")
	code, out, _ := s.stop()
	if s.token != "" || code != 0 || !strings.Contains(out, "dashboard at http://"+s.addr+"/\n") || !strings.Contains(out, "no token (--no-token)") {
		t.Errorf("token %q, exit %d\n%s", s.token, code, out)
	}
}

// A server on every interface is announced at an address a browser opens (the review found
// "dashboard at http://[::]:8125/").
func TestListenURL(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8125}, "http://127.0.0.1:8125/"},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8125}, "http://127.0.0.1:8125/"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9}, "http://127.0.0.1:9/"},
		{&net.TCPAddr{IP: net.ParseIP("192.168.1.5"), Port: 80}, "http://192.168.1.5:80/"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 7}, "http://[::1]:7/"},
	} {
		if got := listenURL(tc.addr, "/"); got != tc.want {
			t.Errorf("listenURL(%v) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}
