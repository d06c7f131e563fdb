package command

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"massgen/internal/childproc"
	"massgen/internal/workspace"
)

// A CLI's program folders are shown read-only, but never one that holds the home folder: a
// CLI installed as ~/bin/claude has the prefix ~, which would show ~/.ssh to the sandbox.
func TestCLISandbox_ProgramFoldersNeverShowTheHome(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, "bin")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	run, err := workspace.NewRun(t.TempDir(), "run")
	if err != nil {
		t.Fatal(err)
	}
	a, err := run.Agent("a", "agent1")
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(t.TempDir(), "cli")
	sb, err := CLISandbox(a, &SandboxOptions{}, home, state, []string{home, bin, "/"})
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	for _, m := range sb.Mounts {
		if m.Kind == childproc.ReadOnly || m.Kind == childproc.Writable {
			shown = append(shown, m.Src)
		}
	}
	realBin, _ := filepath.EvalSymlinks(bin)
	if !slices.Contains(shown, realBin) {
		t.Errorf("the program folder %s is not shown: %v", bin, shown)
	}
	realHome, _ := filepath.EvalSymlinks(home)
	for _, p := range shown {
		if p == realHome || p == "/" {
			t.Errorf("%s is shown read-only: %v", p, shown)
		}
	}
	if !sb.Network {
		t.Error("the CLI's sandbox has no network: the CLI cannot reach its model")
	}
}
