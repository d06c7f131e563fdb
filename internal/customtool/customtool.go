package customtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// OutputLimit caps the text of one result that reaches the model.
const OutputLimit = 64 << 10

// describeTimeout bounds describing the tools at Start when no entry allows longer: importing
// a tool file may import large libraries.
const describeTimeout = 60 * time.Second

// Options say where an agent's tools run.
type Options struct {
	// AgentID is passed to tools that ask for it (MassGen's @context_params("agent_id")).
	AgentID string
	// Dir is the agent's workspace: the tools' working folder, and agent_cwd for the tools
	// that take it. "" runs them in massgen's working folder.
	Dir string
	// ConfigFile is the config's path, whose folder relative tool paths are tried in too.
	ConfigFile string
	// Env is the environment the tools' variables are taken from; nil means os.Environ().
	Env []string
	// Python is the interpreter; "" means python3 on PATH.
	Python string
}

// Tools are one agent's custom tools and the processes that run them.
type Tools struct {
	set     tool.Set
	workers []*worker
	tmp     string // the Python worker's files
}

// Set returns the tools, named custom_tool__<name>.
func (t *Tools) Set() tool.Set { return t.set }

// Close stops every process and removes the worker's files. It may be called more than once.
func (t *Tools) Close() error {
	for _, w := range t.workers {
		w.close()
	}
	t.workers = nil
	if t.tmp != "" {
		err := os.RemoveAll(t.tmp)
		t.tmp = ""
		if err != nil {
			return fmt.Errorf("remove the custom tool worker's files: %w", err)
		}
	}
	return nil
}

// Start starts the processes of specs and describes every tool, so that a file that does not
// import, a missing function or a missing python3 is an error before any model is called. The
// error names the tool, its file or program, and what Python or the program said. On error
// nothing is left running.
func Start(ctx context.Context, specs []config.CustomTool, o Options) (_ *Tools, err error) {
	if o.Env == nil {
		o.Env = os.Environ()
	}
	t := &Tools{}
	defer func() {
		if err != nil {
			_ = t.Close()
		}
	}()
	var python []config.CustomTool
	var commands [][]config.CustomTool // by entry, in order
	for _, s := range specs {
		switch {
		case len(s.Command) == 0:
			python = append(python, s)
		case len(commands) > 0 && commands[len(commands)-1][0].Entry == s.Entry:
			commands[len(commands)-1] = append(commands[len(commands)-1], s)
		default:
			commands = append(commands, []config.CustomTool{s})
		}
	}
	if len(python) > 0 {
		if err := t.startPython(ctx, python, o); err != nil {
			return nil, err
		}
	}
	for _, group := range commands {
		if err := t.startCommand(ctx, group, o); err != nil {
			return nil, err
		}
	}
	seen := map[string]bool{}
	for _, tl := range t.set {
		if seen[tl.Spec.Name] {
			return nil, fmt.Errorf("custom tool %s is offered twice; give one of them another name (name: in its custom_tools entry)", tl.Spec.Name)
		}
		seen[tl.Spec.Name] = true
	}
	return t, nil
}

// described is a tool as a process describes it.
type described struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
	// ContextParams are further parameters massgen sets (the Python worker lists a function's
	// @context_params here).
	ContextParams []string `json:"context_params"`
}

// massgenParams are the parameters massgen always sets itself, from Options: a model that
// chose them could point a tool at another folder (agent_cwd: /etc) or pose as another agent.
var massgenParams = []string{"agent_cwd", "agent_id"}

// startPython writes the worker and its manifest, starts it, and describes each function.
func (t *Tools) startPython(ctx context.Context, specs []config.CustomTool, o Options) error {
	python := o.Python
	if python == "" {
		python = "python3"
	}
	type entry struct {
		Key      string `json:"key"`
		Path     string `json:"path,omitempty"`
		Module   string `json:"module,omitempty"`
		Function string `json:"function"`
	}
	manifest := struct {
		Tools   []entry  `json:"tools"`
		SysPath []string `json:"sys_path"`
	}{}
	if wd, err := os.Getwd(); err == nil {
		manifest.SysPath = append(manifest.SysPath, wd)
	}
	var passEnv []string
	timeout := describeTimeout
	for _, s := range specs {
		e := entry{Key: s.Name, Function: s.Function}
		switch {
		case strings.HasSuffix(s.Path, ".py"):
			file, tried := s.File, []string(nil)
			if file == "" {
				file, tried = config.FindCustomToolFile(s.Path, o.ConfigFile)
			}
			if file == "" {
				return fmt.Errorf("custom tool %s: the file %s does not exist (looked in %s)", s.Label(), s.Path, strings.Join(tried, " and "))
			}
			e.Path = file
			if !slices.Contains(manifest.SysPath, filepath.Dir(file)) {
				manifest.SysPath = append(manifest.SysPath, filepath.Dir(file))
			}
		case s.Path != "":
			e.Module = s.Path
		}
		manifest.Tools = append(manifest.Tools, e)
		passEnv = append(passEnv, s.PassEnv...)
		timeout = max(timeout, s.Timeout)
	}
	dir, err := writeWorker()
	if err != nil {
		return err
	}
	t.tmp = dir
	data, err := json.Marshal(manifest)
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o600)
	}
	if err != nil {
		return fmt.Errorf("cannot write the custom tool worker's files: %w", err)
	}
	w := &worker{label: "the Python worker of the custom tools", argv: []string{python, filepath.Join(dir, "worker.py"), filepath.Join(dir, "manifest.json")},
		dir: o.Dir, env: pythonEnv(o.Env, passEnv), marked: true}
	t.workers = append(t.workers, w)
	for _, s := range specs {
		res, toolErr, err := w.request(ctx, timeout, map[string]any{"op": "describe", "function": s.Name}, nil)
		if err == nil && toolErr != "" {
			err = errors.New(toolErr)
		}
		var tools []described
		if err == nil {
			tools, err = decodeDescribe(res)
		}
		if err == nil && len(tools) != 1 {
			err = fmt.Errorf("the worker described %d tools instead of one", len(tools))
		}
		if err != nil {
			return describeError(s, python, err)
		}
		t.add(w, s, tools[0], o)
	}
	return nil
}

// describeError says which tool failed to load and why; a python3 that cannot start gets
// what to do.
func describeError(s config.CustomTool, python string, err error) error {
	where := s.Path
	if where == "" {
		where = "MassGen's built-in tools"
	}
	msg := fmt.Sprintf("custom tool %s (function %s in %s): %v", s.Label(), s.Function, where, err)
	if isFailure(err) && strings.Contains(err.Error(), "cannot start") {
		msg += fmt.Sprintf("\n  custom tools written in Python need %s: install Python 3 or put it on PATH", python)
	}
	return errors.New(msg)
}

// startCommand starts the program of one command entry and offers the tools it describes
// (those named by function, when the entry names some).
func (t *Tools) startCommand(ctx context.Context, specs []config.CustomTool, o Options) error {
	first := specs[0]
	argv := slices.Clone(first.Command)
	if strings.ContainsRune(argv[0], filepath.Separator) && !filepath.IsAbs(argv[0]) {
		// Relative to where massgen runs (then the config's folder), not to the workspace the
		// program runs in.
		if abs, _ := config.FindCustomToolFile(argv[0], o.ConfigFile); abs != "" {
			argv[0] = abs
		} else if abs, err := filepath.Abs(argv[0]); err == nil {
			argv[0] = abs
		}
	}
	var passEnv []string
	timeout := describeTimeout
	for _, s := range specs {
		passEnv = append(passEnv, s.PassEnv...)
		timeout = max(timeout, s.Timeout)
	}
	w := &worker{label: "the tool program " + filepath.Base(argv[0]), argv: argv, dir: o.Dir, env: baseEnv(o.Env, passEnv)}
	t.workers = append(t.workers, w)
	res, toolErr, err := w.request(ctx, timeout, map[string]any{"op": "describe"}, nil)
	if err == nil && toolErr != "" {
		err = errors.New(toolErr)
	}
	var tools []described
	if err == nil {
		tools, err = decodeDescribe(res)
	}
	if err != nil {
		return fmt.Errorf("custom tool %s: describe failed: %v", first.Label(), err)
	}
	if first.Function == "" {
		for _, d := range tools {
			s := first
			s.Name, s.Function = d.Name, d.Name
			if !validName(config.ExposedCustomToolName(d.Name)) {
				return fmt.Errorf("custom tool %s: the program names a tool %q, which cannot be a tool name (letters, digits, _ or -, at most 64 characters with custom_tool__)",
					first.Label(), clip(d.Name, 80))
			}
			t.add(w, s, d, o)
		}
		return nil
	}
	for _, s := range specs {
		i := slices.IndexFunc(tools, func(d described) bool { return d.Name == s.Function })
		if i < 0 {
			names := make([]string, len(tools))
			for k, d := range tools {
				names[k] = d.Name
			}
			return fmt.Errorf("custom tool %s: %s offers no tool %q; it offers: %s", s.Label(), first.Command[0], s.Function, strings.Join(names, ", "))
		}
		t.add(w, s, tools[i], o)
	}
	return nil
}

func decodeDescribe(res json.RawMessage) ([]described, error) {
	var out struct {
		Tools []described `json:"tools"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return nil, fmt.Errorf("the describe answer is not {\"tools\": [...]}: %v", err)
	}
	for i, d := range out.Tools {
		if d.Name == "" {
			return nil, fmt.Errorf("tool %d of the describe answer has no name", i)
		}
	}
	return out.Tools, nil
}

func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// add offers one described function as a tool: MassGen's name, the entry's description when
// it has one, and the schema without the preset arguments, which every call gets instead, nor
// the parameters massgen sets, which the model's arguments never carry. A default_params value
// fills in what the model leaves out; its schema shows it as optional, with that default.
func (t *Tools) add(w *worker, s config.CustomTool, d described, o Options) {
	name := config.ExposedCustomToolName(s.Name)
	desc := d.Description
	if s.Description != "" {
		desc = s.Description
	}
	owned := map[string]bool{}
	for _, p := range slices.Concat(massgenParams, d.ContextParams) {
		owned[p] = true
	}
	hide := func(p string) bool { _, preset := s.PresetArgs[p]; return preset || owned[p] }
	spec := provider.ToolSpec{Name: name, Description: desc, Parameters: tool.WithDefaults(hideParams(d.Parameters, hide), s.DefaultParams)}
	known := map[string]any{"agent_id": o.AgentID} // for the parameters massgen fills in
	if o.Dir != "" {
		known["agent_cwd"] = o.Dir
	}
	fn, preset, defaults, timeout := s.Function, s.PresetArgs, s.DefaultParams, s.Timeout
	if timeout <= 0 {
		timeout = config.DefaultCustomToolTimeout
	}
	t.set = append(t.set, tool.Tool{Spec: spec, Run: func(ctx context.Context, args string) tool.Result {
		params, bad := tool.ParseArgs(name, args)
		if bad != "" {
			return tool.Errorf(bad)
		}
		tool.FillDefaults(params, defaults)
		maps.Copy(params, preset) // the config's values win: they are not the model's to change
		maps.DeleteFunc(params, func(k string, _ any) bool { return owned[k] })
		res, toolErr, err := w.request(ctx, timeout, map[string]any{"op": "call", "function": fn, "args": params, "context": known},
			tool.Output(ctx))
		switch {
		case err != nil:
			return tool.Errorf(fmt.Sprintf("%s failed: %v", name, err))
		case toolErr != "":
			return tool.Errorf("Error: " + toolErr)
		}
		return tool.Result{Content: render(res)}
	}})
}

// hideParams is the parameters schema without the parameters hide names (MassGen removes
// preset arguments from the schema too), always an object schema.
func hideParams(params map[string]any, hide func(string) bool) map[string]any {
	out := map[string]any{}
	maps.Copy(out, params)
	if out["type"] == nil {
		out["type"] = "object"
	}
	props, _ := out["properties"].(map[string]any)
	clean := map[string]any{}
	for k, v := range props {
		if !hide(k) {
			clean[k] = v
		}
	}
	out["properties"] = clean
	if req, ok := out["required"].([]any); ok {
		var keep []any
		for _, r := range req {
			if name, _ := r.(string); name != "" && hide(name) {
				continue
			}
			keep = append(keep, r)
		}
		if len(keep) == 0 {
			delete(out, "required")
		} else {
			out["required"] = keep
		}
	}
	return out
}
