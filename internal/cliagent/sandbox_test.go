package cliagent

import (
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/childproc"
	"massgen/internal/cliagent/clitest"
	"massgen/internal/command"
	"massgen/internal/prompt"
	"massgen/internal/provider"
	"massgen/internal/workspace"
)

// Under command_line_execution_mode: srt the CLI runs in massgen's sandbox, built from the
// agent's grants. The attack: a read-only context path is one of the CLI's --add-dir (or
// --include-directories) folders, so the CLI's own permissions let its write tool change it;
// in the sandbox the write fails, while the CLI still works (it answers through massgen's
// tool server) and writes its workspace.
func TestSandbox_ReadOnlyContextPathStaysUnchanged(t *testing.T) {
	if err := childproc.SandboxReady(); err != nil {
		t.Skipf("no sandbox here: %v", err)
	}
	for _, tc := range cliCases {
		for _, target := range []string{"workspace", "context"} {
			t.Run(tc.typ+"/"+target, func(t *testing.T) {
				t.Parallel()
				testSandbox(t, tc, target)
			})
		}
	}
}

func testSandbox(t *testing.T, tc cliCase, target string) {
	bin := needCLI(t, tc.bin)
	state := clitest.StateDir(t)
	run, err := workspace.NewRun(filepath.Join(state, "workspaces"), "run")
	if err != nil {
		t.Fatal(err)
	}
	ws, err := run.Agent("a1", "agent1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.TempDir()
	if err := os.WriteFile(filepath.Join(ctx, "notes.txt"), []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ws.SetContextPaths([]workspace.ContextPath{{Path: ctx}}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(ws.Dir(), "hello.txt")
	if target == "context" {
		file = filepath.Join(ctx, "notes.txt")
	}
	brain := &clitest.Brain{Script: clitest.Script{File: file, Content: "changed"}, Tools: tc.tools}
	srv := httptest.NewServer(tc.api(brain))
	defer srv.Close()
	a, err := New(Options{Type: tc.typ, Model: tc.model, APIKey: "sk-test", BaseURL: srv.URL + tc.baseSuffix, Binary: bin,
		PathEnv: os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Bind(Workspace{Dir: ws.Dir(), Read: []string{ctx}}, filepath.Join(state, "cli"))
	a.UseSandbox(func(dir string, programs []string) (*childproc.Sandbox, error) {
		return command.CLISandbox(ws, &command.SandboxOptions{}, os.Getenv("HOME"), dir, programs)
	})
	chunks, err := collect(t, a, provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "Write the file."}},
		Tools: prompt.Tools(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if call := lastCall(t, chunks); call.Name != "new_answer" {
		t.Fatalf("last call = %+v, want new_answer: the CLI did not work in the sandbox", call)
	}
	got, err := os.ReadFile(file)
	switch target {
	case "workspace":
		if err != nil || strings.TrimSpace(string(got)) != "changed" {
			t.Errorf("the workspace file = %q, %v; chunks %+v", got, err, chunks)
		}
	case "context":
		if string(got) != "the user's" {
			t.Errorf("the read-only context path was changed: %q, %v", got, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ctx, "changed")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat: %v", err)
	}
}
