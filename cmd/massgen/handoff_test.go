package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// massgenIn puts this test's massgen binary in a folder of its own (with a companion script
// when companion is not empty) and returns its path.
func massgenIn(t *testing.T, companion string) string {
	t.Helper()
	dir := t.TempDir()
	self := filepath.Join(dir, "massgen")
	if err := os.Link(binary, self); err != nil {
		b, err := os.ReadFile(binary)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(self, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if companion != "" {
		if err := os.WriteFile(filepath.Join(dir, "massgen-temporal"), []byte(companion), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return self
}

// massgen has no Temporal SDK: a command line with --temporal becomes massgen-temporal's,
// arguments unchanged, its exit code massgen's; without --temporal nothing is handed over.
func TestTemporalHandOff(t *testing.T) {
	self := massgenIn(t, "#!/bin/sh\necho \"companion pid $$: $*\"\nexit 7\n")
	t.Setenv("PATH", "/usr/bin:/bin")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"session", []string{"--config", "@examples/demo", "--temporal", "127.0.0.1:1", "the question"}, 7,
			": --config @examples/demo --temporal 127.0.0.1:1 the question"},
		{"worker", []string{"worker", "--temporal", "127.0.0.1:1"}, 7, ": worker --temporal 127.0.0.1:1"},
		{"eval", []string{"eval", "data.jsonl", "--temporal=127.0.0.1:1"}, 7, ": eval data.jsonl --temporal=127.0.0.1:1"},
		{"worker without a server stays here", []string{"worker"}, 1, "worker needs --temporal HOST:PORT"},
		{"no --temporal stays here", []string{"--config", "@examples/demo", "--no-display", "What is the capital of France?"}, 0, "Paris"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(self, tc.args...)
			cmd.Dir = t.TempDir()
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || !strings.Contains(string(out), tc.want) {
				t.Errorf("exit %d, want %d; output %q does not say %q", code, tc.code, out, tc.want)
			}
			if tc.code == 7 && !strings.Contains(string(out), "companion pid") {
				t.Errorf("not handed over: %q", out)
			}
		})
	}
}

// Without massgen-temporal beside massgen or on PATH, --temporal is a usage error that says
// how to get it, before anything runs.
func TestTemporalHandOff_NoCompanion(t *testing.T) {
	self := massgenIn(t, "")
	t.Setenv("PATH", "/usr/bin:/bin")
	work := t.TempDir()
	cmd := exec.Command(self, "--config", "@examples/demo", "--temporal", "127.0.0.1:1", "q")
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("err %v, want exit 1; output %s", err, out)
	}
	if !strings.Contains(string(out), "go build -o "+filepath.Join(filepath.Dir(self), "massgen-temporal")) {
		t.Errorf("output does not say how to build the companion: %s", out)
	}
	if _, err := os.Stat(filepath.Join(work, ".massgen")); err == nil {
		t.Error("a log folder was made: the refusal must come before anything runs")
	}
}

// A repository that carries a massgen-temporal, run in with "." on PATH, does not get it
// started: the companion is looked for beside massgen and on PATH, never in the current
// folder.
func TestTemporalHandOff_NotFromTheCurrentFolder(t *testing.T) {
	self := massgenIn(t, "")
	work := t.TempDir()
	marker := filepath.Join(work, "ran")
	if err := os.WriteFile(filepath.Join(work, "massgen-temporal"), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", ".:/usr/bin:/bin")
	cmd := exec.Command(self, "--config", "@examples/demo", "--temporal", "127.0.0.1:1", "q")
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("err %v, want exit 1; output %s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the current folder's massgen-temporal ran")
	}
}
