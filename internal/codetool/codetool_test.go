package codetool

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"massgen/internal/provider"
	"massgen/internal/tool"
)

// adder is an MCP-like tool: mcp__my-server__add(a, b) returns their sum; runs counts calls.
func adder(runs *atomic.Int32) tool.Tool {
	return tool.Tool{
		Spec: tool.Spec("mcp__my-server__add", "Add two numbers.", map[string]any{
			"a":     map[string]any{"type": "integer", "description": "First."},
			"b":     map[string]any{"type": "integer", "description": "Second."},
			"class": map[string]any{"type": "string", "description": "A Python keyword as a name."},
		}, "a", "b"),
		Run: func(_ context.Context, args string) tool.Result {
			runs.Add(1)
			var in struct{ A, B int }
			if err := json.Unmarshal([]byte(args), &in); err != nil {
				return tool.Errorf(err.Error())
			}
			return tool.Result{Content: fmt.Sprint(in.A + in.B)}
		},
	}
}

// call sends one raw request line to the server and returns its reply.
func call(t *testing.T, s *Server, line string) reply {
	t.Helper()
	c, err := net.Dial("unix", s.Socket())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	var r reply
	if err := json.NewDecoder(c).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestServer_TokenPermitAndCaps: only a request with the token runs a tool; the permission
// gate's refusal, an unknown tool and an oversized request are errors that run nothing.
func TestServer_TokenPermitAndCaps(t *testing.T) {
	defer goleak.VerifyNone(t)
	var runs atomic.Int32
	s, err := Serve(tool.Set{adder(&runs)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := func(token, name string) string {
		b, _ := json.Marshal(map[string]any{"token": token, "tool": name, "arguments": map[string]int{"a": 2, "b": 3}})
		return string(b)
	}
	if r := call(t, s, req(s.Token(), "mcp__my-server__add")); !r.OK || r.Result != "5" {
		t.Fatalf("call with the token = %+v", r)
	}
	for _, tc := range []struct{ name, line, want string }{
		{"no token", req("", "mcp__my-server__add"), "unauthorized"},
		{"wrong token", req(strings.Repeat("0", 64), "mcp__my-server__add"), "unauthorized"},
		{"unknown tool", req(s.Token(), "mcp__other__x"), "no tool"},
		{"not JSON", "hello", "not valid JSON"},
		{"too long", `{"token":"` + strings.Repeat("x", maxRequest) + `"}`, "at most"},
	} {
		if r := call(t, s, tc.line); r.OK || !strings.Contains(r.Error, tc.want) {
			t.Errorf("%s: reply %+v, want an error with %q", tc.name, r, tc.want)
		}
	}
	s.SetPermit(func(_ context.Context, name, _ string) string { return "permissions: " + name + " is denied" })
	if r := call(t, s, req(s.Token(), "mcp__my-server__add")); r.OK || r.Error != "permissions: mcp__my-server__add is denied" {
		t.Errorf("refused call = %+v", r)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once (only the authorised, permitted call)", n)
	}
	if info, err := os.Stat(filepath.Dir(s.Socket())); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the socket's folder: %v, %v (want private)", info, err)
	}
}

// TestWrite_GeneratedPythonCallsBack: the generated wrapper, imported from another folder as
// an agent's command would, calls the tool through the server with the token from its
// environment; without the token it raises ToolError and the tool does not run.
func TestWrite_GeneratedPythonCallsBack(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	defer goleak.VerifyNone(t)
	var runs atomic.Int32
	add := adder(&runs)
	s, err := Serve(tool.Set{add}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir, custom := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"helpers.py": "def twice(x):\n    return 2 * x\n", "private/keep_out.py": "x = 1\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(custom, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(custom, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := Layout{Servers: []MCPServer{{Name: "my-server", Tools: []provider.ToolSpec{add.Spec}}}, CustomToolsPath: custom, ExcludeCustomTools: []string{"private"}}
	if err := Write(dir, l); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"servers/__init__.py", "servers/my_server/__init__.py", "servers/my_server/add.py", ".mcp/client.py", "custom_tools/helpers.py", "custom_tools/__init__.py"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "custom_tools", "private")); err == nil {
		t.Error("exclude_custom_tools' entry was copied")
	}
	script := "from servers.my_server import add\nfrom custom_tools.helpers import twice\nprint(twice(int(add(2, 3, class_=None))))\n" +
		"try:\n    add(1)\nexcept TypeError as e:\n    print('TypeError')\n"
	run := func(env ...string) string {
		cmd := exec.Command("python3", "-c", script)
		cmd.Dir = t.TempDir()
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "PYTHONPATH=" + dir, "MASSGEN_TOOLS_ADDR=unix:" + s.Socket()}, env...)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	if out := run("MASSGEN_TOOLS_TOKEN=" + s.Token()); out != "10\nTypeError\n" {
		t.Fatalf("with the token: %q", out)
	}
	out := run("MASSGEN_TOOLS_TOKEN=guess")
	if !strings.Contains(out, "ToolError") || !strings.Contains(out, "unauthorized") {
		t.Errorf("without the token: %q", out)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
	p := Prompt(dir, l)
	if !strings.Contains(p, "- my_server: add") || !strings.Contains(p, dir+"/custom_tools/") {
		t.Errorf("prompt:\n%s", p)
	}
}
