package command

import (
	"testing"

	"go.uber.org/goleak"

	"massgen/internal/filetool"
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

// call runs the file tool called name of a with args.
func call(t *testing.T, a *workspace.Agent, name string, args map[string]any) tool.Result {
	t.Helper()
	tl, ok := filetool.Tools(a).Find(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return run(t, tl, args)
}
