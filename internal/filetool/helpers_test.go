package filetool

import (
	"encoding/json"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"massgen/internal/tool"
	"massgen/internal/workspace"
	"massgen/internal/workspace/workspacetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The shared helpers under the names these tests use.
var (
	newRun    = workspacetest.NewRun
	newAgent  = workspacetest.NewAgent
	run       = workspacetest.Run
	mustOK    = workspacetest.MustOK
	mustFail  = workspacetest.MustFail
	writeFile = workspacetest.WriteFile
	readFile  = workspacetest.ReadFile
)

// fixture is workspacetest.Fixture under the names these tests use.
type fixture struct {
	run                  *workspace.Run
	alice, bob           *workspace.Agent
	base, outside        string
	project, rw, ctxFile string
	bobSnapFile          string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := workspacetest.NewFixture(t)
	return &fixture{run: f.Run, alice: f.Alice, bob: f.Bob, base: f.Base, outside: f.Outside,
		project: f.Project, rw: f.RW, ctxFile: f.CtxFile, bobSnapFile: f.BobSnapFile}
}

// afterChecks are the files.afterCheck hooks tests set on agents (hook).
var afterChecks sync.Map // *workspace.Agent -> func(abs string)

// hook makes the tools of a run fn between the permission check and the file operation,
// until the test ends.
func hook(t *testing.T, a *workspace.Agent, fn func(abs string)) {
	afterChecks.Store(a, fn)
	t.Cleanup(func() { afterChecks.Delete(a) })
}

// toolsOf are the file tools of a, with the hook set on it.
func toolsOf(a *workspace.Agent) tool.Set {
	f := &files{ws: a}
	if fn, ok := afterChecks.Load(a); ok {
		f.afterCheck = fn.(func(string))
	}
	return f.tools()
}

// call runs the file tool called name of a with args.
func call(t *testing.T, a *workspace.Agent, name string, args map[string]any) tool.Result {
	t.Helper()
	tl, ok := toolsOf(a).Find(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return run(t, tl, args)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
