package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is go.mod's module path; rules name packages below it ("internal/config").
const module = "massgen"

// layer is one rule of the layering. A package matching Pkg ("internal/x", or "internal/..."
// for every package under internal/) may import only the massgen packages in Only, when Leaf
// or Only is set, none of the packages in Never, directly or through others, and none of the
// standard packages in NoStd directly.
type layer struct {
	Pkg   string
	Leaf  bool     // imports no massgen package
	Only  []string // the massgen packages it may import directly
	Never []string // massgen packages it may not depend on at all
	NoStd []string // standard packages it may not import
	Why   string
}

// layers is the layering, lowest first. A package not named here may import anything that
// does not close a cycle (the compiler sees to that) and that no rule forbids.
var layers = []layer{
	{Pkg: "internal/redact", Leaf: true, Why: "every package redacts; it redacts with nothing but the standard library"},
	{Pkg: "internal/private", Leaf: true, Why: "massgen's own files, written by the lowest packages"},
	{Pkg: "internal/termtext", Leaf: true, Why: "the one sanitiser of terminal text"},
	{Pkg: "internal/lazy", Leaf: true, Why: "values made on first use, so that no initialiser slows every start"},
	{Pkg: "internal/suggest", Leaf: true, Why: "the did-you-mean config and cli share"},
	{Pkg: "internal/criteria", Leaf: true, Why: "checklist criteria, read by config, coord and prompt"},
	{Pkg: "internal/permission/rule", Leaf: true, Why: "the rule grammar config checks rules with, without the permission engine"},
	{Pkg: "internal/httpserve", Leaf: true, Why: "the token rule of every HTTP server of the binary, beneath web and mcpserve"},
	{Pkg: "internal/childproc/procfs", Leaf: true, NoStd: []string{"bytes", "fmt", "strings"},
		Why: "the /proc parser of reexec's stages, which must not wait for bytes' or fmt's initialisation"},
	{Pkg: "internal/childproc/reexec", Only: []string{"internal/childproc/procfs"},
		NoStd: []string{"bytes", "encoding/json", "fmt", "net", "reflect", "strings"},
		Why:   "massgen re-executed as a command's init: its initialiser runs before the heavy packages' (see its TestDeps)"},
	{Pkg: "internal/provider", Only: []string{"internal/redact"}, Why: "the neutral types every backend and the core share"},
	{Pkg: "internal/usage", Only: []string{"internal/provider"}, Why: "the price table, priced in provider's usage"},
	{Pkg: "internal/memory", Only: []string{"internal/provider", "internal/private"},
		Why: "memory is a room of its own: the engine and the app reach it through small functions, never the other way"},
	{Pkg: "internal/paraphrase", Only: []string{"internal/private"}, Why: "question paraphrasing calls models only through the caller's function"},
	{Pkg: "internal/event", Only: []string{"internal/private", "internal/provider"}, Why: "the event types every view decodes"},
	{Pkg: "internal/taskplan", Only: []string{"internal/provider", "internal/lazy"},
		NoStd: []string{"os", "os/exec", "net", "net/http", "path/filepath", "sync", "time"},
		Why:   "an agent's task plan and the planning tools: pure, the engine runs them and cli writes the files"},
	{Pkg: "internal/coord", Only: []string{"internal/criteria"},
		NoStd: []string{"os", "os/exec", "os/signal", "io/fs", "net", "net/http", "path/filepath", "syscall", "sync", "time"},
		Why:   "the protocol as a pure state machine: no I/O, no goroutines, no clock"},
	{Pkg: "internal/config", Never: []string{"internal/permission", "internal/app", "internal/cli", "internal/web"},
		Why: "config is read by everything above it; it checks what it reads with leaves only"},
	{Pkg: "internal/subagent", Only: []string{"internal/config", "internal/event", "internal/private", "internal/provider", "internal/tool"},
		Why: "the spawn_subagents tool; app hands it the runner of nested sessions, so it never imports app or engine"},
	{Pkg: "internal/netproxy", Leaf: true, Why: "the filtering proxy the sandbox and the browser share: the network and nothing of massgen"},
	{Pkg: "internal/browser", Only: []string{"internal/childproc", "internal/netproxy", "internal/provider", "internal/tool"},
		Why: "the browser tools' Chromium: a child process and a tool, nothing of the session"},
	{Pkg: "internal/desktop", Only: []string{"internal/browser", "internal/childproc", "internal/lazy"}, Why: "a virtual X display with the browser on it"},
	{Pkg: "internal/computer", Only: []string{"internal/browser", "internal/desktop", "internal/provider", "internal/provider/gemini", "internal/redact", "internal/tool", "internal/usage"},
		Why: "the computer-use tools: a model's loop on a desktop, priced, keys redacted"},
	{Pkg: "internal/frontmatter", Leaf: true, Why: "the YAML front matter of Markdown files agents read"},
	{Pkg: "internal/skill", Only: []string{"internal/frontmatter", "internal/tool", "internal/workspace"}, Why: "skills are files the agents read: the workspace's copy and the tool type"},
	{Pkg: "internal/memfiles", Only: []string{"internal/frontmatter", "internal/tool", "internal/workspace"},
		Why: "filesystem memory is files in the workspaces and their tools; app hands it the folders"},
	{Pkg: "internal/codetool", Only: []string{"internal/tool", "internal/provider", "internal/mcptool", "internal/workspace"},
		Why: "tools as code call back the tools massgen runs; it never starts servers or commands itself"},
	{Pkg: "internal/worktree", Only: []string{"internal/childproc", "internal/lazy", "internal/private", "internal/workspace"},
		Why: "isolated writes: folders and git, below app"},
	{Pkg: "internal/mcpserve", Never: []string{"internal/web"}, Why: "massgen mcp and massgen serve are siblings; what they share is in httpserve"},
	{Pkg: "internal/...", Never: []string{"internal/cli"}, Why: "cli is the wiring: only cmd/massgen imports it"},
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestLayers(t *testing.T) {
	pkgs := listPackages(t)
	byPath := map[string]pkg{}
	for _, p := range pkgs {
		byPath[p.ImportPath] = p
	}
	for _, l := range layers {
		matched := false
		for _, p := range pkgs {
			if !l.matches(p.ImportPath) {
				continue
			}
			matched = true
			for _, problem := range l.check(p, byPath) {
				t.Errorf("%s: %s (rule: %s)", strings.TrimPrefix(p.ImportPath, module+"/"), problem, l.Why)
			}
		}
		if !matched {
			t.Errorf("the rule for %s matches no package: was it moved? fix the rule", l.Pkg)
		}
	}
}

func (l layer) matches(path string) bool {
	rel, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return false
	}
	if dir, ok := strings.CutSuffix(l.Pkg, "/..."); ok {
		return strings.HasPrefix(rel, dir+"/")
	}
	return rel == l.Pkg
}

// check lists what p imports against the rule.
func (l layer) check(p pkg, all map[string]pkg) []string {
	var out []string
	if l.Leaf || l.Only != nil {
		for _, imp := range p.Imports {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if ok && !slices.Contains(l.Only, rel) {
				out = append(out, "imports "+rel+"; it may import "+l.allowed())
			}
		}
	}
	for _, never := range l.Never {
		target := module + "/" + never
		if p.ImportPath == target || !slices.Contains(p.Deps, target) {
			continue
		}
		out = append(out, "depends on "+never+": "+chain(p.ImportPath, target, all))
	}
	for _, imp := range p.Imports {
		if slices.Contains(l.NoStd, imp) {
			out = append(out, "imports "+imp)
		}
	}
	return out
}

func (l layer) allowed() string {
	if len(l.Only) == 0 {
		return "no massgen package"
	}
	return "only " + strings.Join(l.Only, ", ")
}

// chain is the shortest import path from one package to another, for the message.
func chain(from, to string, all map[string]pkg) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for at := to; at != ""; at = prev[at] {
				path = append(path, strings.TrimPrefix(at, module+"/"))
			}
			slices.Reverse(path)
			return strings.Join(path, " -> ")
		}
		for _, imp := range all[cur].Imports {
			if _, seen := prev[imp]; !seen && strings.HasPrefix(imp, module+"/") {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return strings.TrimPrefix(from, module+"/") + " -> ... -> " + strings.TrimPrefix(to, module+"/")
}

// listPackages runs go list over the module: the packages and their imports, tests left out
// (a test may reach upward to build a fixture).
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", module+"/...")
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no package")
	}
	return pkgs
}

// moduleRoot is the folder holding go.mod, above the test's working directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}
