package config

import (
	"fmt"
	"massgen/internal/lazy"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// secCustomTool is one entry of backend.custom_tools.
const secCustomTool = "agents[].backend.custom_tools[]"

// CustomToolPrefix is what MassGen puts before a custom tool's name (massgen/tool/_manager.py,
// add_tool_function), so prompts and configs written for MassGen name the same tools.
const CustomToolPrefix = "custom_tool__"

// DefaultCustomToolTimeout bounds one call of a custom tool when its entry sets no timeout.
const DefaultCustomToolTimeout = 120 * time.Second

// CustomTool is one function of a backend.custom_tools entry (features.md 3.3): an entry
// whose function is a list gives one CustomTool per function, the list-valued name,
// description and preset_args matched to it by position.
type CustomTool struct {
	// Name is the tool's name without CustomToolPrefix: the entry's name, else the function's.
	// For a Command entry without function it is "": the program names its tools.
	Name string
	// Function is the Python function (or the program's tool) to offer.
	Function string
	// Path is the entry's path as written: a .py file, a module name, or "" for MassGen's
	// built-in tools. File is the .py file found for it ("" when Path is not a .py file, or
	// the file was not found, which the run reports).
	Path, File string
	// Command runs a program speaking massgen's JSON-lines tool protocol instead of Python.
	Command     []string
	Description string
	// PresetArgs are passed on every call and hidden from the model.
	PresetArgs map[string]any
	// DefaultParams fill in the arguments a call leaves out; the model still sees them, as
	// optional, with these defaults.
	DefaultParams map[string]any
	// Timeout bounds one call.
	Timeout time.Duration
	// PassEnv names the environment variables the tool gets besides the default allow-list;
	// NAME_* is a prefix.
	PassEnv []string
	// Entry is the index of the entry in custom_tools, for messages.
	Entry int
}

// Label names the tool in messages: its exposed name, or the command's when the program
// names its tools.
func (c CustomTool) Label() string {
	switch {
	case c.Name != "":
		return ExposedCustomToolName(c.Name)
	case len(c.Command) > 0:
		return fmt.Sprintf("custom_tools[%d] (%s)", c.Entry, c.Command[0])
	}
	return fmt.Sprintf("custom_tools[%d]", c.Entry)
}

// ExposedCustomToolName is the name the model sees: name with MassGen's prefix, unless it
// already has it.
func ExposedCustomToolName(name string) string {
	if strings.HasPrefix(name, CustomToolPrefix) {
		return name
	}
	return CustomToolPrefix + name
}

var (
	pythonName = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*$`)
	toolName   = lazy.Regexp(`^[A-Za-z0-9_-]{1,64}$`)
)

// customToolEntry is an entry as written, before its functions are expanded.
type customToolEntry struct {
	functions, names, descs []string
	namesList, descsList    bool
	presets, defaults       argMaps
	path                    string
	command                 []string
	timeout                 time.Duration
	passEnv                 []string
	functionF, nameF, descF *field
	bad                     bool // a value was reported already
	out                     []CustomTool
}

func ctEntry(f func(e *customToolEntry, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(t.ct, v) }
}

func customToolKeys() []Key {
	return []Key{
		{Section: secCustomTool, Name: "name", Type: TypeAny, Status: Implemented, Since: "0.1.12", ex: "add",
			Doc: "The tool's name, or a list matching function; the model sees custom_tool__<name>. Default: the function's name.",
			raw: func(w *walker, t *target, f field) {
				t.ct.names, t.ct.namesList = t.ct.strOrList(w, f)
				t.ct.nameF = &f
			}},
		{Section: secCustomTool, Name: "function", Type: TypeAny, Status: Implemented, Since: "0.1.12", ex: "add",
			Doc: "The Python function to offer, or a list of them (one tool each).",
			raw: func(w *walker, t *target, f field) { t.ct.functions, _ = t.ct.strOrList(w, f); t.ct.functionF = &f }},
		{Section: secCustomTool, Name: "path", Type: TypeString, Status: Implemented, Since: "0.1.12", ex: "t.py",
			Doc: "The .py file (relative to the working folder, else to the config's folder) or a module name; " +
				"without it the function is looked up in MassGen's installed Python package.",
			set: ctEntry(func(e *customToolEntry, v value) { e.path = v.s })},
		{Section: secCustomTool, Name: "description", Type: TypeAny, Status: Implemented, Since: "0.1.12", ex: "Adds.",
			Doc: "Replaces the docstring as the tool's description: one for all functions, or a list matching function.",
			raw: func(w *walker, t *target, f field) {
				t.ct.descs, t.ct.descsList = t.ct.strOrList(w, f)
				t.ct.descF = &f
			}},
		{Section: secCustomTool, Name: "category", Type: TypeString, Status: Ignored, Since: "0.1.12", ex: "math",
			Doc: "A group name; MassGen enables every category a config names, so it changes nothing."},
		{Section: secCustomTool, Name: "preset_args", Type: TypeAny, Status: Implemented, Since: "0.1.12", ex: "{b: 2}",
			Doc: "Arguments passed on every call and hidden from the model: one mapping for all functions, or a list matching function.",
			raw: func(w *walker, t *target, f field) { t.ct.presets.read(w, f) }},
		{Section: secCustomTool, Name: "default_params", Type: TypeAny, Status: Implemented, Since: "0.1.12", ex: "{b: 2}",
			Doc: "Arguments a call gets when the model leaves them out; the model still sees them, optional, with these defaults " +
				"(MassGen's browser and computer-use examples set them; MassGen itself never reads this key). One mapping, or a list matching function.",
			raw: func(w *walker, t *target, f field) { t.ct.defaults.read(w, f) }},
		{Section: secCustomTool, Name: "command", Type: TypeStrings, Status: Implemented, Since: "port", ex: "[./tool]",
			Doc: "Instead of path: a program in any language, with its arguments, speaking massgen's JSON-lines tool protocol " +
				"(describe, call); without function every tool it describes is offered.",
			raw: func(w *walker, t *target, f field) { t.ct.command, _ = t.ct.strOrList(w, f) }},
		{Section: secCustomTool, Name: "timeout", Type: TypeSeconds, Default: "120", Status: Implemented, Since: "port",
			Doc: "Bounds one call; a call past it is an error result and the tool's process is restarted for the next call.",
			set: ctEntry(func(e *customToolEntry, v value) { e.timeout = v.d })},
		{Section: secCustomTool, Name: "env_passthrough", Type: TypeStrings, Status: Implemented, Since: "port", ex: "[OPENAI_API_KEY]",
			Doc: "Environment variables the tool gets besides the default allow-list (no API keys otherwise; NAME_* is a prefix). " +
				"The Python entries of one agent share one process, which gets all of their variables.",
			raw: func(w *walker, t *target, f field) { t.ct.passEnv = w.envNames(f) }},
	}
}

// strOrList reads a string or a list of strings (MassGen's name, function and description); a
// value of another type, reported, marks the entry bad.
func (e *customToolEntry) strOrList(w *walker, f field) ([]string, bool) {
	vals, isList, ok := w.strOrList(f)
	if !ok && f.val != nil {
		e.bad = true
	}
	return vals, isList
}

func (w *walker) strOrList(f field) (vals []string, isList, ok bool) {
	if kind(f.val) == "a list" {
		vals, ok = w.strList(f)
		return vals, true, ok
	}
	switch kind(f.val) {
	case "empty":
		return nil, false, false
	case "a string":
		s, ok := w.str(f)
		return []string{s}, false, ok
	}
	w.errf(f, "write one value, or a list such as [a, b]", "%s must be a string or a list of strings, not %s", f.key, kind(f.val))
	return nil, false, false
}

// envNames reads a list of variable names and NAME_* prefixes.
func (w *walker) envNames(g field) []string {
	items, _ := w.list(g)
	var out []string
	for _, it := range items {
		if s, ok := w.str(it); ok && !envName().MatchString(s) {
			w.errf(it, "write a variable name such as OPENAI_API_KEY, or a prefix such as MY_TOOL_*", "`%s` is not an environment variable name", clip(s))
		} else if ok {
			out = append(out, s)
		}
	}
	return out
}

// argMaps is preset_args or default_params as written: one mapping, or a list of mappings.
type argMaps struct {
	maps   []map[string]any
	isList bool
	at     *field
}

func (a *argMaps) read(w *walker, f field) {
	a.at = &f
	one := func(g field) (map[string]any, bool) {
		if kind(g.val) != "a mapping" {
			w.errf(g, "write a mapping such as {api_base: \"http://...\"}", "%s must be a mapping of argument names to values, not %s", g.key, kind(g.val))
			return nil, false
		}
		m, _ := w.decode(g, g.raw, 0).(map[string]any)
		return m, true
	}
	switch {
	case f.val == nil:
	case kind(f.val) == "a list":
		items, _ := w.list(f)
		a.isList = true
		for _, it := range items {
			m, _ := one(it)
			a.maps = append(a.maps, m)
		}
	default:
		if m, ok := one(f); ok {
			a.maps = []map[string]any{m}
		}
	}
}

// spread gives each of n functions its mapping: a single one is shared, a list must match
// function one to one.
func (a *argMaps) spread(w *walker, n int) ([]map[string]any, bool) {
	switch {
	case len(a.maps) == 0:
		return make([]map[string]any, n), true
	case a.isList && len(a.maps) != n:
		w.errf(*a.at, fmt.Sprintf("give one mapping per function (%d), or a single mapping for all of them", n),
			"%s lists %d mappings for %d functions", a.at.key, len(a.maps), n)
		return nil, false
	case a.isList:
		return a.maps, true
	}
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = a.maps[0]
	}
	return out, true
}

// customTools reads backend.custom_tools: each entry expanded into its functions, every exposed
// name unique within the agent.
func (w *walker) customTools(f field, t *target) []CustomTool {
	entries := walkEach(w, f, t, secCustomTool, "write {path: tools.py, function: my_tool}",
		func(t *target, x *customToolEntry) { t.ct = x }, func(x *customToolEntry) bool { return len(x.out) > 0 })
	var out []CustomTool
	seen := map[string]int{}
	items, _ := w.list(f)
	python := slices.ContainsFunc(entries, func(e customToolEntry) bool {
		return len(e.command) == 0 && slices.ContainsFunc(e.out, func(c CustomTool) bool { return !c.Builtin() })
	})
	if _, err := exec.LookPath("python3"); err != nil && python {
		w.warnAt(f.loc, "python3 is not on PATH here", "custom tools written in Python need Python 3 when massgen runs; install it or put it on PATH", f.keyN)
	}
	for _, e := range entries {
		for _, c := range e.out {
			if c.Name != "" {
				exposed := ExposedCustomToolName(c.Name)
				if prev, dup := seen[exposed]; dup {
					at := f
					if c.Entry < len(items) {
						at = items[c.Entry]
					}
					w.errf(at, "give each tool its own name (name: a list matching function renames them)",
						"custom tool `%s` is declared twice (also by custom_tools[%d])", clip(exposed), prev)
					continue
				}
				seen[exposed] = c.Entry
			}
			out = append(out, c)
		}
	}
	return out
}

// customToolAfter checks an entry once read and expands it into one CustomTool per function.
// What can only be known by running Python (the function exists, the file imports) is checked
// when massgen starts the tools; here only the file system and PATH are looked at.
func customToolAfter(w *walker, t *target, f field, _ map[string]field) {
	e := t.ct
	entry := 0
	if i := strings.LastIndexByte(f.loc, '['); i >= 0 {
		_, _ = fmt.Sscanf(f.loc[i:], "[%d]", &entry)
	}
	switch {
	case e.bad:
		return
	case e.path != "" && len(e.command) > 0:
		w.errAt(f.loc, "path and command are both set", "use path: for a Python file, or command: for a program that speaks the tool protocol", f.raw)
		return
	case len(e.functions) == 0 && len(e.command) == 0:
		if e.functionF != nil {
			w.errf(*e.functionF, "name at least one function", "function must not be empty")
		} else {
			w.errAt(f.loc, "missing required key `function`", "add function: with the name of the Python function to offer", f.raw)
		}
		return
	}
	if len(e.functions) == 0 && len(e.names) > 0 {
		w.errf(*e.nameF, "add function: with the tools of the program to rename, one name each", "name needs function: without it the program names its tools")
		return
	}
	n := max(len(e.functions), 1)
	names, ok1 := matchCount(w, e.names, e.namesList, n, e.nameF, "name", true)
	descs, ok2 := matchCount(w, e.descs, e.descsList, n, e.descF, "description", false)
	presets, ok3 := e.presets.spread(w, n)
	defaults, ok4 := e.defaults.spread(w, n)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return
	}
	for i := range n {
		for k := range defaults[i] {
			if _, both := presets[i][k]; both {
				w.errf(*e.defaults.at, "keep it in one of them: a preset is sent on every call, a default only when the model leaves it out",
					"`%s` is in both preset_args and default_params", clip(k))
				return
			}
		}
	}
	python := len(e.command) == 0
	for i := range n {
		c := CustomTool{Path: e.path, Command: e.command, Timeout: e.timeout, PassEnv: e.passEnv, Entry: entry,
			Description: descs[i], PresetArgs: presets[i], DefaultParams: defaults[i]}
		if c.Timeout == 0 {
			c.Timeout = DefaultCustomToolTimeout
		}
		if i < len(e.functions) {
			c.Function = e.functions[i]
		}
		c.Name = names[i]
		if c.Name == "" {
			c.Name = c.Function
		}
		if python && !pythonName().MatchString(c.Function) {
			w.errf(*e.functionF, "write the function's name as in its def line", "`%s` is not a Python function name", clip(c.Function))
			return
		}
		if c.Name != "" && !toolName().MatchString(ExposedCustomToolName(c.Name)) {
			at := e.functionF
			if e.nameF != nil {
				at = e.nameF
			}
			w.errf(*at, "use letters, digits, _ or -, at most 64 characters with the custom_tool__ prefix",
				"`%s` cannot be a tool name", clip(c.Name))
			return
		}
		e.out = append(e.out, c)
	}
	if python {
		pythonChecks(w, f, e)
		computerToolChecks(w, f, e)
	} else {
		commandChecks(w, f, e)
	}
}

// matchCount spreads a string-or-list value over n functions as MassGen does: a single value
// is shared, a list must match function one to one. A shared name is refused when there are
// several functions, since MassGen would register the second under the first one's name.
func matchCount(w *walker, vals []string, isList bool, n int, at *field, key string, unique bool) ([]string, bool) {
	switch {
	case len(vals) == 0:
		return make([]string, n), true
	case isList && len(vals) != n:
		w.errf(*at, fmt.Sprintf("give one %s per function (%d), or a single %s for all of them", key, n, key),
			"%s lists %d values for %d functions", key, len(vals), n)
		return nil, false
	case isList:
		return vals, true
	case unique && n > 1:
		w.errf(*at, fmt.Sprintf("give a list of %d names, one per function", n), "one name for %d functions would name them all alike", n)
		return nil, false
	}
	out := make([]string, n)
	for i := range out {
		out[i] = vals[0]
	}
	return out, true
}

// pythonChecks finds the entry's file and warns when it is missing here. MassGen's media,
// browser and computer-use tools are built in (CustomTool.Builtin): no file is needed for them.
func pythonChecks(w *walker, f field, e *customToolEntry) {
	if !slices.ContainsFunc(e.out, func(c CustomTool) bool { return !c.Builtin() }) {
		return
	}
	switch {
	case e.path == "":
		w.warnAt(f.loc, fmt.Sprintf("no path: `%s` is looked up among MassGen's built-in tools", clip(e.functions[0])),
			"they are found when massgen runs in a MassGen checkout or where MassGen is installed (pip install massgen); "+
				"otherwise add path: with a .py file that defines it", f.raw)
		return
	case !strings.HasSuffix(e.path, ".py"):
		return // a module name: only Python can tell whether it imports
	}
	file, tried := FindCustomToolFile(e.path, w.file)
	if file == "" {
		w.warnAt(f.loc+".path", fmt.Sprintf("custom tool file `%s` does not exist here (looked in %s)", clip(e.path), strings.Join(tried, " and ")),
			"it must exist when massgen runs; MassGen's own tool files (massgen/tool/...) are in MassGen's repository", f.raw)
	}
	for i := range e.out {
		e.out[i].File = file
	}
}

// FindCustomToolFile resolves a tool file as MassGen does, relative to the working folder, and then
// relative to the config's folder. It returns the absolute file, or "" and the folders tried.
func FindCustomToolFile(path, configFile string) (string, []string) {
	if filepath.IsAbs(path) {
		if isFile(path) {
			return filepath.Clean(path), nil
		}
		return "", []string{filepath.Dir(path)}
	}
	var tried []string
	dirs := []string{"."}
	if configFile != "" {
		dirs = append(dirs, filepath.Dir(configFile))
	}
	for _, d := range dirs {
		abs, err := filepath.Abs(filepath.Join(d, path))
		if err != nil || slices.Contains(tried, filepath.Dir(abs)) {
			continue
		}
		if isFile(abs) {
			return abs, nil
		}
		tried = append(tried, filepath.Dir(abs))
	}
	return "", tried
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// commandChecks warns when the entry's program is not found here.
func commandChecks(w *walker, f field, e *customToolEntry) {
	prog := e.command[0]
	if strings.ContainsRune(prog, filepath.Separator) {
		if _, err := os.Stat(prog); err != nil {
			w.warnAt(f.loc+".command", fmt.Sprintf("`%s` does not exist here", clip(prog)), "it must exist when massgen runs", f.raw)
		}
		return
	}
	if _, err := exec.LookPath(prog); err != nil {
		w.warnAt(f.loc+".command", fmt.Sprintf("`%s` is not on PATH here", clip(prog)), "it must be on PATH when massgen runs", f.raw)
	}
}
