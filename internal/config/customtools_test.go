package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// MassGen's custom_tools shapes: a function or a list of them, with name, description and
// preset_args shared or matched one to one.
func TestParse_CustomTools(t *testing.T) {
	abs, err := filepath.Abs("testdata/custom_tool.py")
	if err != nil {
		t.Fatal(err)
	}
	cfg, rep := Parse("c.yaml", []byte(net(`      custom_tools:
        - {name: two_num_tool, category: math, path: testdata/custom_tool.py, function: add}
        - name: [plus, custom_tool__minus]
          path: testdata/custom_tool.py
          function: [add, sub]
          description: Shared.
          preset_args: [{b: 2}, {b: 3, opts: {deep: [1]}}]
          timeout: 5
          env_passthrough: [OPENAI_API_KEY, MY_TOOL_*]
        - {command: [./prog, --flag], function: [echo]}
        - {command: prog2}
`)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	got := cfg.Agents[0].Backend.Tools.CustomTools
	want := []CustomTool{
		{Name: "two_num_tool", Function: "add", Path: "testdata/custom_tool.py", File: abs, Timeout: DefaultCustomToolTimeout},
		{Name: "plus", Function: "add", Path: "testdata/custom_tool.py", File: abs, Description: "Shared.",
			PresetArgs: map[string]any{"b": uint64(2)}, Timeout: 5 * time.Second, PassEnv: []string{"OPENAI_API_KEY", "MY_TOOL_*"}, Entry: 1},
		{Name: "custom_tool__minus", Function: "sub", Path: "testdata/custom_tool.py", File: abs, Description: "Shared.",
			PresetArgs: map[string]any{"b": uint64(3), "opts": map[string]any{"deep": []any{uint64(1)}}}, Timeout: 5 * time.Second,
			PassEnv: []string{"OPENAI_API_KEY", "MY_TOOL_*"}, Entry: 1},
		{Name: "echo", Function: "echo", Command: []string{"./prog", "--flag"}, Timeout: DefaultCustomToolTimeout, Entry: 2},
		{Command: []string{"prog2"}, Timeout: DefaultCustomToolTimeout, Entry: 3},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("custom tools (-want +got):\n%s", diff)
	}
	if n := got[2].Label(); n != "custom_tool__minus" {
		t.Errorf("label %q", n)
	}
	if len(rep.Warnings) != 2 { // ./prog and prog2 are not here
		t.Errorf("warnings:\n%s", rep.Text())
	}
}

func TestParse_CustomToolRules(t *testing.T) {
	ct := func(lines string) string { return net("      custom_tools:\n" + lines) }
	cases := []struct {
		name  string
		yaml  string
		wants []string
	}{
		{"missing function", ct("        - {path: testdata/custom_tool.py}\n"),
			[]string{"E 6:11 agents[0].backend.custom_tools[0] | missing required key `function`"}},
		{"empty function list", ct("        - {path: testdata/custom_tool.py, function: []}\n"),
			[]string{"E 6:53 agents[0].backend.custom_tools[0].function | function must not be empty"}},
		{"function not a string", ct("        - {path: testdata/custom_tool.py, function: {a: 1}}\n"),
			[]string{"E 6:53 agents[0].backend.custom_tools[0].function | must be a string or a list of strings, not a mapping"}},
		{"names do not match", ct("        - {name: [a], path: testdata/custom_tool.py, function: [f, g]}\n"),
			[]string{"E 6:18 agents[0].backend.custom_tools[0].name | name lists 1 values for 2 functions | one name per function (2)"}},
		{"one name for two functions", ct("        - {name: a, path: testdata/custom_tool.py, function: [f, g]}\n"),
			[]string{"E 6:18 agents[0].backend.custom_tools[0].name | one name for 2 functions | a list of 2 names"}},
		{"descriptions do not match", ct("        - {description: [x, y, z], path: testdata/custom_tool.py, function: [f, g]}\n"),
			[]string{"E 6:25 agents[0].backend.custom_tools[0].description | description lists 3 values for 2 functions"}},
		{"presets do not match", ct("        - {preset_args: [{a: 1}], path: testdata/custom_tool.py, function: [f, g]}\n"),
			[]string{"E 6:25 agents[0].backend.custom_tools[0].preset_args | preset_args lists 1 mappings for 2 functions"}},
		{"preset not a mapping", ct("        - {preset_args: 3, path: testdata/custom_tool.py, function: f}\n"),
			[]string{"E 6:25 agents[0].backend.custom_tools[0].preset_args | preset_args must be a mapping of argument names"}},
		{"path and command", ct("        - {path: testdata/custom_tool.py, command: [x], function: f}\n"),
			[]string{"E 6:11 agents[0].backend.custom_tools[0] | path and command are both set"}},
		{"not a python name", ct("        - {path: testdata/custom_tool.py, function: two-num}\n"),
			[]string{"E 6:53 agents[0].backend.custom_tools[0].function | `two-num` is not a Python function name"}},
		{"not a tool name", ct("        - {name: \"a b\", path: testdata/custom_tool.py, function: f}\n"),
			[]string{"E 6:18 agents[0].backend.custom_tools[0].name | `a b` cannot be a tool name | at most 64 characters"}},
		{"declared twice", ct("        - {path: testdata/custom_tool.py, function: add}\n        - {name: custom_tool__add, path: testdata/custom_tool.py, function: sub}\n"),
			[]string{"E 7:11 agents[0].backend.custom_tools[1] | custom tool `custom_tool__add` is declared twice (also by custom_tools[0])"}},
		{"entry not a mapping", ct("        - tools.py\n"),
			[]string{"E 6:11 agents[0].backend.custom_tools[0] | custom_tools[0] must be a mapping"}},
		{"unknown key", ct("        - {path: testdata/custom_tool.py, function: f, presets: {}}\n"),
			[]string{"E 6:56 agents[0].backend.custom_tools[0].presets | unknown custom tool key `presets` | keys this build runs: name, function"}},
		{"bad env name", ct("        - {path: testdata/custom_tool.py, function: f, env_passthrough: [\"A B\"]}\n"),
			[]string{"E 6:74 agents[0].backend.custom_tools[0].env_passthrough[0] | `A B` is not an environment variable name"}},
		{"name without function", ct("        - {name: a, command: [x]}\n"),
			[]string{"E 6:18 agents[0].backend.custom_tools[0].name | name needs function"}},
		{"file missing", ct("        - {path: nosuch/tool.py, function: f}\n"),
			[]string{"W 6:11 agents[0].backend.custom_tools[0].path | custom tool file `nosuch/tool.py` does not exist here | must exist when massgen runs"}},
		{"no path", ct("        - {function: two_num_tool}\n"),
			[]string{"W 6:11 agents[0].backend.custom_tools[0] | no path: `two_num_tool` is looked up among MassGen's built-in tools | a MassGen checkout"}},
		{"module path", ct("        - {path: _basic, function: two_num_tool}\n"), nil},
		{"command missing", ct("        - {command: [./nosuch-tool-program]}\n"),
			[]string{"W 6:11 agents[0].backend.custom_tools[0].command | `./nosuch-tool-program` does not exist here"}},
		{"scripted backends take them", "agents:\n  - id: a\n    backend:\n      type: scripted\n      answers: [hi]\n" +
			"      custom_tools: [{path: testdata/custom_tool.py, function: add}]\n", nil},
		{"empty", ct("        []\n"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rep := Parse("c.yaml", []byte(c.yaml))
			checkIssues(t, rep, c.wants)
		})
	}
}

// A relative path is looked for in the working folder, then in the config's folder.
func TestParse_CustomToolFileNextToConfig(t *testing.T) {
	abs, err := filepath.Abs("testdata/custom_tool.py")
	if err != nil {
		t.Fatal(err)
	}
	cfg, rep := Parse("testdata/team.yaml", []byte(net("      custom_tools: [{path: custom_tool.py, function: add}]\n")))
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	if got := cfg.Agents[0].Backend.Tools.CustomTools[0].File; got != abs {
		t.Errorf("file %q, want %q", got, abs)
	}
}

// Validation warns, without starting anything, when python3 is missing.
func TestParse_CustomToolNoPython(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, rep := Parse("c.yaml", []byte(net("      custom_tools: [{path: testdata/custom_tool.py, function: add}, {path: testdata/custom_tool.py, function: sub}]\n")))
	checkIssues(t, rep, []string{"W 5:7 agents[0].backend.custom_tools | python3 is not on PATH here | need Python 3"})
}

// default_params, like preset_args, is one mapping for every function or a list matching them;
// an argument may not be both a preset and a default.
func TestParse_DefaultParams(t *testing.T) {
	const head = "agents:\n  - id: a\n    backend:\n      type: openai\n      custom_tools:\n        - path: t.py\n"
	cfg, rep := Parse("c.yaml", []byte(head+"          function: [f, g]\n          default_params: [{x: 1}, {y: true}]\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	cts := cfg.Agents[0].Backend.Tools.CustomTools
	if len(cts) != 2 || fmt.Sprint(cts[0].DefaultParams["x"]) != "1" || cts[1].DefaultParams["y"] != true || cts[0].DefaultParams["y"] != nil {
		t.Errorf("custom tools %+v", cts)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"          function: [f, g]\n          default_params: [{x: 1}]\n", "default_params lists 1 mappings for 2 functions"},
		{"          function: f\n          preset_args: {x: 1}\n          default_params: {x: 2}\n", "`x` is in both preset_args and default_params"},
		{"          function: f\n          default_params: 3\n", "default_params must be a mapping"},
	} {
		_, rep := Parse("c.yaml", []byte(head+tc.yaml))
		if rep.OK() || !strings.Contains(rep.Text(), tc.want) {
			t.Errorf("%q: %s, want an error saying %q", tc.yaml, rep.Text(), tc.want)
		}
	}
}
