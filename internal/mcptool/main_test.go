package mcptool

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"massgen/internal/childproc/proctest"
	"massgen/internal/tool"
)

// The test binary doubles as a stdio MCP server: MCPTOOL_TEST_SERVER selects the behaviour.
const (
	modeEnv     = "MCPTOOL_TEST_SERVER"
	markerEnv   = "MCPTOOL_TEST_ID" // lets a test find every process it caused
	stubbornEnv = "MCPTOOL_TEST_STUBBORN"
)

func TestMain(m *testing.M) {
	switch os.Getenv(modeEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "serve":
		serveStdio()
	case "exit":
		fmt.Fprintln(os.Stderr, "loading configuration")
		fmt.Fprintln(os.Stderr, "fatal: cannot open /nonexistent/db.sqlite")
		os.Exit(3)
	case "sleep":
		signal.Ignore(syscall.SIGTERM)
		time.Sleep(time.Hour)
	case "manager":
		runManager()
	}
}

// runManager is massgen with one stdio server that started a grandchild, until it is killed.
func runManager() {
	self, _ := os.Executable()
	m := NewManager(Options{})
	srv := Server{Name: "victim", Command: self, Env: map[string]string{modeEnv: "serve", stubbornEnv: "1", markerEnv: os.Getenv(markerEnv), "GORACE": "atexit_sleep_ms=0"}}
	set, errs := m.Tools(context.Background(), []Server{srv}, nil, nil)
	tl, ok := set.Find("mcp__victim__spawn")
	if len(errs) > 0 || !ok {
		fmt.Println("cannot start the server:", errs)
		os.Exit(1)
	}
	if r := tl.Run(context.Background(), "{}"); r.IsError {
		fmt.Println("spawn:", r.Content)
		os.Exit(1)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}
type addIn struct{ A, B int }
type addOut struct {
	Sum int `json:"sum"`
}
type envIn struct {
	Name string `json:"name"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// serveStdio runs the test server on stdin/stdout until stdin closes.
func serveStdio() {
	stubborn := os.Getenv(stubbornEnv) != ""
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	fmt.Fprintln(os.Stderr, "test server starting")
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ServerOptions{PageSize: 2})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text("echo: " + in.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers."}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		return nil, addOut{in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return text(strconv.Itoa(os.Getpid())), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "env"}, func(_ context.Context, _ *mcp.CallToolRequest, in envIn) (*mcp.CallToolResult, any, error) {
		v, ok := os.LookupEnv(in.Name)
		if !ok {
			v = "<unset>"
		}
		return text(v), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spawn", Description: "Start a grandchild; return its pid."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		self, _ := os.Executable()
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), modeEnv+"=sleep")
		if err := cmd.Start(); err != nil {
			return nil, nil, err
		}
		return text(strconv.Itoa(cmd.Process.Pid)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "die"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, "panic: simulated crash")
		os.Exit(7)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "hang", Description: "Never answers, ignoring cancellation."}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		time.Sleep(time.Hour)
		return nil, nil, nil
	})
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	if stubborn {
		time.Sleep(time.Hour) // outlive stdin closing and SIGTERM
	}
}

// selfServer declares the test binary as a stdio server in mode, tagged for findProcs.
func selfServer(t *testing.T, name, mode string, env ...string) Server {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// GORACE: under -race, a process otherwise sleeps 1 s before exiting.
	s := Server{Name: name, Command: self, Env: map[string]string{modeEnv: mode, markerEnv: marker(t), "GORACE": "atexit_sleep_ms=0"}}
	for i := 0; i+1 < len(env); i += 2 {
		s.Env[env[i]] = env[i+1]
	}
	return s
}

func marker(t *testing.T) string { return strings.ReplaceAll(t.Name(), "/", "_") }

// findProcs lists the live processes whose environment carries this test's marker.
func findProcs(t *testing.T) []int {
	t.Helper()
	return proctest.WithEnv(t, markerEnv+"="+marker(t))
}

// requireGone fails unless no process of this test and none of the groups remain.
func requireGone(t *testing.T, pgids ...int) {
	t.Helper()
	left := func() []int {
		out := findProcs(t)
		for _, g := range pgids {
			out = append(out, proctest.GroupMembers(t, g)...)
		}
		return out
	}
	// Zombies of reparented grandchildren are reaped asynchronously.
	if !proctest.Eventually(2*time.Second, func() bool { return len(left()) == 0 }) {
		t.Fatalf("processes left behind: %v", left())
	}
}

// statusLog records OnStatus calls.
type statusLog struct {
	mu  sync.Mutex
	got []string
}

func (l *statusLog) add(server, status, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, server+" "+status+" "+detail)
}

func (l *statusLog) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.got {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

func (l *statusLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.got, "\n")
}

// run calls the named tool of set and fails the test when it is missing.
func run(t *testing.T, set tool.Set, name, args string) tool.Result {
	t.Helper()
	tl, ok := set.Find(name)
	if !ok {
		t.Fatalf("no tool %s in %v", name, toolNames(set))
	}
	return tl.Run(t.Context(), args)
}

func toolNames(set tool.Set) []string {
	var out []string
	for _, s := range set.Specs() {
		out = append(out, s.Name)
	}
	return out
}

// closeManager closes m at the end of the test and checks that it succeeded.
func closeManager(t *testing.T, m *Manager) {
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}
