package customtool

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/childproc/proctest"
	"massgen/internal/config"
	"massgen/internal/tool"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// Every test ends with no goroutine of a worker left behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func requirePython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH: the Python custom tool tests need it")
	}
}

// pyTool is a custom tool of testdata/massgen_tools.py.
func pyTool(t *testing.T, fn string) config.CustomTool {
	t.Helper()
	file, err := filepath.Abs("testdata/massgen_tools.py")
	if err != nil {
		t.Fatal(err)
	}
	return config.CustomTool{Name: fn, Function: fn, Path: "testdata/massgen_tools.py", File: file, Timeout: 20 * time.Second}
}

// start starts specs and stops them when the test ends, checking no process is left.
func start(t *testing.T, specs []config.CustomTool, o Options) *Tools {
	t.Helper()
	tools, err := Start(t.Context(), specs, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dir := tools.tmp
		if err := tools.Close(); err != nil {
			t.Error(err)
		}
		if dir != "" {
			proctest.RequireNone(t, dir, 5*time.Second)
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the worker's folder %s is still there (%v)", dir, err)
			}
		}
	})
	return tools
}

// call runs the tool named name with args, collecting what it streams.
func call(t *testing.T, tools *Tools, name, args string) (tool.Result, string) {
	t.Helper()
	tl, ok := tools.Set().Find(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	var mu sync.Mutex
	var out strings.Builder
	ctx := tool.WithOutput(t.Context(), func(s string) { mu.Lock(); out.WriteString(s); mu.Unlock() })
	res := tl.Run(ctx, args)
	mu.Lock()
	defer mu.Unlock()
	return res, out.String()
}

// The schema MassGen's ToolManager would build: types from hints, descriptions from the
// docstring (Google, NumPy, reST), defaults not required, preset_args hidden; the name gets
// MassGen's custom_tool__ prefix, the entry's description replaces the docstring's.
func TestStart_Schemas(t *testing.T) {
	requirePython(t)
	add := pyTool(t, "add_numbers")
	add.PresetArgs = map[string]any{"api_base": "http://preset"}
	kinds := pyTool(t, "kinds")
	greet := pyTool(t, "greet")
	greet.Name, greet.Description = "custom_tool__hello", "Say hello."
	tools := start(t, []config.CustomTool{add, kinds, greet, pyTool(t, "where_am_i"), pyTool(t, "who_am_i")}, Options{})
	got, err := json.MarshalIndent(tools.Set().Specs(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "schemas.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/customtool -update)", err)
	}
	if string(want) != string(got)+"\n" {
		t.Errorf("schemas differ from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

func TestCall_Results(t *testing.T) {
	requirePython(t)
	add := pyTool(t, "add_numbers")
	add.PresetArgs = map[string]any{"api_base": "http://preset"}
	ws := t.TempDir()
	t.Setenv("OPENAI_API_KEY", "sk-custom-tool-test-SECRET")
	t.Setenv("MASSGEN_TOOL_VISIBLE", "yes")
	env := pyTool(t, "read_env")
	env.PassEnv = []string{"MASSGEN_TOOL_*"}
	var specs []config.CustomTool
	for _, fn := range []string{"kinds", "greet", "count_up", "fail", "noisy", "picture", "where_am_i", "who_am_i", "huge", "plain"} {
		specs = append(specs, pyTool(t, fn))
	}
	tools := start(t, append(specs, add, env), Options{Dir: ws, AgentID: "agent_a"})
	cases := []struct {
		name, tool, args string
		want             string // the whole result, or its start when it ends with "..."
		isError          bool
		output           string // a part of what the call streamed
	}{
		{"preset injected", "add_numbers", `{"a": 2}`, "2 + 1.5 = 3.5 via http://preset", false, ""},
		{"preset wins over the model", "add_numbers", `{"a": 1, "b": 2, "api_base": "http://model"}`, "1 + 2 = 3 via http://preset", false, ""},
		{"dict result", "kinds", `{"tags": ["x"]}`, `{"tags": ["x"], "mode": "fast", "weights": null, "flag": false}`, false, ""},
		{"async", "greet", `{"name": "ada", "times": 2}`, "hello ada hello ada", false, ""},
		{"async generator", "count_up", `{"n": 3}`, "step 1. step 2. step 3. ", false, "(log only)"},
		{"raises", "fail", `{"message": "boom"}`, "Error: ValueError: boom (...", true, "Traceback"},
		{"prints to stdout", "noisy", `{"text": "quiet"}`, "QUIET", false, "noise from a child process"},
		{"image", "picture", `{}`, "a red dot\n[image of 110 characters of data: tool results reach the model as text only, so it is not shown]\n", false, ""},
		{"workspace", "where_am_i", ``, "agent_cwd=" + ws + " cwd=" + ws, false, ""},
		// agent_cwd, agent_id and @context_params are massgen's to set, never the model's.
		{"model's agent_cwd ignored", "where_am_i", `{"agent_cwd": "/etc"}`, "agent_cwd=" + ws + " cwd=" + ws, false, ""},
		{"model's context params ignored", "who_am_i", `{"note": "hi", "agent_cwd": "/etc", "agent_id": "evil", "task_id": "forged"}`,
			"agent_id=agent_a agent_cwd=" + ws + " task_id=unset note=hi", false, ""},
		{"massgen's parameters are not unknown ones", "greet", `{"name": "a", "agent_id": "evil", "agent_cwd": "/etc"}`, "hello a", false, ""},
		{"output cut", "huge", `{}`, strings.Repeat("x", OutputLimit) + "\n[output cut: the tool returned 300000 bytes; the first 65536 are shown]", false, ""},
		{"nothing returned", "plain", `null`, emptyResult, false, ""},
		{"no API key", "read_env", `{"name": "OPENAI_API_KEY"}`, "<unset>", false, ""},
		{"passed through", "read_env", `{"name": "MASSGEN_TOOL_VISIBLE"}`, "yes", false, ""},
		{"unknown parameter", "greet", `{"name": "a", "loud": true}`, "Error: unknown parameter loud; greet takes: name, times", true, ""},
		{"missing parameter", "greet", `{}`, "Error: missing required parameter: name", true, ""},
		{"not JSON", "greet", `{"name": `, "invalid arguments for custom_tool__greet: ...", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, out := call(t, tools, config.ExposedCustomToolName(c.tool), c.args)
			prefix, partial := strings.CutSuffix(c.want, "...")
			if res.IsError != c.isError || (partial && !strings.HasPrefix(res.Content, prefix)) || (!partial && res.Content != c.want) {
				t.Errorf("got %q (error %v), want %q (error %v)", short(res.Content), res.IsError, short(c.want), c.isError)
			}
			if !strings.Contains(out, c.output) {
				t.Errorf("streamed %q, want it to hold %q", out, c.output)
			}
		})
	}
}

// The Python worker itself overwrites massgen's parameters with the call's context: a request
// whose arguments carry them anyway (the Go side drops them first) cannot choose them.
func TestWorker_ContextWinsOverArguments(t *testing.T) {
	requirePython(t)
	tools := start(t, []config.CustomTool{pyTool(t, "who_am_i")}, Options{})
	req := map[string]any{"op": "call", "function": "who_am_i", "args": map[string]any{"agent_id": "evil", "agent_cwd": "/etc", "task_id": "forged"},
		"context": map[string]any{"agent_id": "agent_a", "agent_cwd": "/ws"}}
	res, toolErr, err := tools.workers[0].request(t.Context(), 20*time.Second, req, nil)
	if err != nil || toolErr != "" {
		t.Fatalf("call: %v %s", err, toolErr)
	}
	if got := render(res); got != "agent_id=agent_a agent_cwd=/ws task_id=unset note=" {
		t.Errorf("the tool got %q", got)
	}
}

// A call that hangs is a timeout error; the worker is replaced, and the next call works.
func TestCall_HangThenNextCallWorks(t *testing.T) {
	requirePython(t)
	hang := pyTool(t, "hang")
	hang.Timeout = 300 * time.Millisecond
	tools := start(t, []config.CustomTool{hang, pyTool(t, "greet")}, Options{})
	first := tools.workers[0].p.cmd.Pid()
	res, _ := call(t, tools, "custom_tool__hang", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "timed out after 300ms; its process was stopped and starts again for the next call") {
		t.Fatalf("hang: %+v", res)
	}
	if !proctest.Eventually(5*time.Second, func() bool { return !processAlive(first) }) {
		t.Errorf("the hung worker %d is still running", first)
	}
	res, _ = call(t, tools, "custom_tool__greet", `{"name": "again"}`)
	if res.IsError || res.Content != "hello again" {
		t.Fatalf("after the timeout: %+v", res)
	}
}

// A worker that dies during a call is an error for that call only.
func TestCall_CrashThenNextCallWorks(t *testing.T) {
	requirePython(t)
	tools := start(t, []config.CustomTool{pyTool(t, "crash"), pyTool(t, "greet")}, Options{})
	res, _ := call(t, tools, "custom_tool__crash", `{}`)
	if !res.IsError || !strings.Contains(res.Content, "stopped answering: its process ended with exit status 3") {
		t.Fatalf("crash: %+v", res)
	}
	res, _ = call(t, tools, "custom_tool__greet", `{"name": "b"}`)
	if res.IsError || res.Content != "hello b" {
		t.Fatalf("after the crash: %+v", res)
	}
}

// The context ending (the session ending) stops the call at once.
func TestCall_Cancelled(t *testing.T) {
	requirePython(t)
	tools := start(t, []config.CustomTool{pyTool(t, "hang")}, Options{})
	tl, _ := tools.Set().Find("custom_tool__hang")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	res := tl.Run(ctx, `{}`)
	if !res.IsError || !strings.Contains(res.Content, "stopped") || time.Since(begin) > 10*time.Second {
		t.Fatalf("cancelled call: %+v after %s", res, time.Since(begin))
	}
}

// What stops a tool from loading is an error at Start naming the tool, its file and Python's
// own message.
func TestStart_Errors(t *testing.T) {
	requirePython(t)
	abs := func(p string) string {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	cases := []struct {
		name  string
		spec  config.CustomTool
		o     Options
		wants []string
	}{
		{"syntax error", config.CustomTool{Name: "broken", Function: "broken", Path: "testdata/broken_tool.py", File: abs("testdata/broken_tool.py")}, Options{},
			[]string{"custom tool custom_tool__broken (function broken in testdata/broken_tool.py)", "SyntaxError", "broken_tool.py, line 5",
				"TextContent(data=str(x)])"}},
		{"no such function", config.CustomTool{Name: "nope", Function: "nope", Path: "testdata/massgen_tools.py", File: abs("testdata/massgen_tools.py")}, Options{},
			[]string{"massgen_tools.py has no function `nope`; it defines: add_numbers, count_up"}},
		{"missing dependency", config.CustomTool{Name: "uses_it", Function: "uses_it", Path: "testdata/needs_dependency.py", File: abs("testdata/needs_dependency.py")}, Options{},
			[]string{"ModuleNotFoundError: No module named 'massgen_no_such_dependency'", "needs_dependency.py, line 1"}},
		{"no such file", config.CustomTool{Name: "gone", Function: "gone", Path: "testdata/gone.py"}, Options{},
			[]string{"custom tool custom_tool__gone: the file testdata/gone.py does not exist (looked in"}},
		{"no python", pyTool(t, "greet"), Options{Python: "/nonexistent/python3"},
			[]string{"cannot start the Python worker", "install Python 3 or put it on PATH"}},
		{"built-in without MassGen", config.CustomTool{Name: "two_num_tool", Function: "two_num_tool"}, Options{},
			[]string{"`two_num_tool` is not one of MassGen's built-in tools here", "pip install massgen"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The tag, in the worker's environment only, finds what this case started.
			tag := fmt.Sprintf("MASSGEN_CT_TEST_%d_%d=1", os.Getpid(), i)
			c.spec.Timeout, c.spec.PassEnv = 20*time.Second, []string{strings.TrimSuffix(tag, "=1")}
			c.o.Env = append(os.Environ(), tag)
			tools, err := Start(t.Context(), []config.CustomTool{c.spec}, c.o)
			if err == nil {
				_ = tools.Close()
				t.Fatal("started")
			}
			for _, w := range c.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if pids := proctest.WithEnv(t, tag); len(pids) > 0 {
				t.Errorf("a failed Start left processes running: %v", pids)
			}
		})
	}
}

// A program in another language speaking the protocol: its tools are described and called,
// lines that are not the protocol are skipped, its progress output streams.
func TestCommandTool(t *testing.T) {
	script, err := filepath.Abs("testdata/shout_tool.sh")
	if err != nil {
		t.Fatal(err)
	}
	all := config.CustomTool{Command: []string{"sh", script}, Timeout: 10 * time.Second}
	tools := start(t, []config.CustomTool{all}, Options{})
	var names []string
	for _, s := range tools.Set().Specs() {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "custom_tool__shout,custom_tool__whisper,custom_tool__echo" {
		t.Fatalf("tools %v", names)
	}
	// massgen's own parameters are neither offered to the model nor passed on from it.
	echo, _ := tools.Set().Find("custom_tool__echo")
	if got, _ := json.Marshal(echo.Spec.Parameters); string(got) != `{"properties":{"text":{"type":"string"}},"required":["text"],"type":"object"}` {
		t.Errorf("echo's schema: %s", got)
	}
	if res, _ := call(t, tools, "custom_tool__echo", `{"text": "hi", "agent_cwd": "/etc", "agent_id": "evil"}`); res.Content != `{"text":"hi"}` {
		t.Errorf("echo got the model's %+v", res)
	}
	res, out := call(t, tools, "custom_tool__shout", `{"who": "ada", "punct": "!"}`)
	if res.IsError || res.Content != "HEY ada!" || !strings.Contains(out, "warming up") {
		t.Fatalf("shout: %+v, streamed %q", res, out)
	}
	res, _ = call(t, tools, "custom_tool__whisper", `{"who": "ada"}`)
	if !res.IsError || res.Content != "Error: no such tool" {
		t.Fatalf("whisper: %+v", res)
	}

	// One named function, renamed, with a preset argument hidden from the schema.
	one := config.CustomTool{Name: "yell", Function: "shout", Command: []string{"sh", script}, PresetArgs: map[string]any{"punct": "?"},
		Timeout: 10 * time.Second, Entry: 1}
	tools = start(t, []config.CustomTool{one}, Options{})
	specs := tools.Set().Specs()
	if len(specs) != 1 || specs[0].Name != "custom_tool__yell" || specs[0].Parameters["required"].([]any)[0] != "who" ||
		len(specs[0].Parameters["required"].([]any)) != 1 {
		t.Fatalf("specs %+v", specs)
	}
	if res, _ := call(t, tools, "custom_tool__yell", `{"who": "bo"}`); res.Content != "HEY bo?" {
		t.Fatalf("yell: %+v", res)
	}

	missing := config.CustomTool{Name: "sing", Function: "sing", Command: []string{"sh", script}, Timeout: 10 * time.Second}
	if _, err := Start(t.Context(), []config.CustomTool{missing}, Options{}); err == nil ||
		!strings.Contains(err.Error(), `offers no tool "sing"; it offers: shout, whisper, echo`) {
		t.Fatalf("missing function: %v", err)
	}
}

func processAlive(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

// short keeps failure messages readable when a result is huge.
func short(s string) string {
	if len(s) > 300 {
		return fmt.Sprintf("%s…(%d bytes)…%s", s[:150], len(s), s[len(s)-150:])
	}
	return s
}
