package command

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"massgen/internal/childproc"
	"massgen/internal/childproc/proctest"
)

// detachTechniques are the ways a command may try to outlive its run; %s is a marker.
var detachTechniques = proctest.DetachTechniques()

// both runs f with namespaces and in the fallback without them.
func both(t *testing.T, f func(t *testing.T)) {
	t.Run("namespaces", f)
	t.Run("fallback", func(t *testing.T) {
		defer childproc.DisableNamespaces()()
		f(t)
	})
}

// When execute_command returns, nothing the command started is left, however it detached.
func TestCommand_NothingOutlivesIt(t *testing.T) {
	both(t, func(t *testing.T) {
		_, cmd := commandAgent(t, Options{})
		for name, tmpl := range detachTechniques {
			mk := proctest.Marker()
			res := mustOK(t, run(t, cmd, map[string]any{"command": fmt.Sprintf(tmpl, mk) + "\nsleep 0.2; echo done"}))
			if !strings.Contains(res, "done") {
				t.Errorf("%s: %s", name, res)
			}
			proctest.RequireNone(t, mk, 3*time.Second)
		}
	})
}

// Killing a background shell, or closing the run, ends everything the shell started, however it
// detached.
func TestShells_NothingOutlivesThem(t *testing.T) {
	both(t, func(t *testing.T) {
		f := newShellFixture(t, Options{})
		for _, tmpl := range detachTechniques {
			mk := proctest.Marker()
			id, _ := f.start(t, fmt.Sprintf(tmpl, mk)+"\necho started; sleep "+mk)
			eventually(t, "the start", func() bool { return strings.Contains(f.output(t, id, 0), "started") })
			mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
			proctest.RequireNone(t, mk, 3*time.Second)
		}
		var marks []string
		for _, tmpl := range detachTechniques {
			mk := proctest.Marker()
			marks = append(marks, mk)
			f.start(t, fmt.Sprintf(tmpl, mk)+"\nexit 0") // the shell exits; what it started runs on
		}
		if err := f.run.Close(); err != nil {
			t.Fatal(err)
		}
		for _, mk := range marks {
			proctest.RequireNone(t, mk, 3*time.Second)
		}
	})
}

// The test binary stands in for massgen in helper processes: started with helperEnv set, the
// test TestWorkspaceHelper does what the variable names instead of testing.
const helperEnv = "WORKSPACE_TEST_HELPER"

func helper(t *testing.T, mode string, env ...string) *exec.Cmd {
	return proctest.Helper(t, []string{"-test.run=^TestWorkspaceHelper$", "-test.count=1"}, append([]string{helperEnv + "=" + mode}, env...)...)
}

func TestWorkspaceHelper(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("only a helper process")
	}
	if os.Getenv("WORKSPACE_TEST_FALLBACK") != "" {
		childproc.DisableNamespaces()
	}
	if os.Getenv("WORKSPACE_TEST_HARDEN") != "" {
		if err := childproc.Harden(); err != nil {
			fmt.Println("Harden:", err)
		}
	}
	opts := Options{}
	if os.Getenv("WORKSPACE_TEST_SANDBOX") != "" {
		opts.Sandbox = &SandboxOptions{}
	}
	f := newShellFixture(t, opts)
	switch mode {
	case "detach":
		// A background shell and a command that detach, then massgen is killed.
		mk := os.Getenv("WORKSPACE_TEST_MARKER")
		f.start(t, fmt.Sprintf("setsid sleep %s & nohup sleep %s >/dev/null 2>&1 & sleep %s", mk, mk, mk))
		fmt.Println("ready")
		f.call(t, "execute_command", map[string]any{"command": fmt.Sprintf("setsid -f sleep %s; (sh -c 'sleep %s &' &); sleep %s", mk, mk, mk)})
	case "spy":
		fmt.Println(f.call(t, "execute_command", map[string]any{"command": fmt.Sprintf(`p=%d
cat /proc/$PPID/environ /proc/$p/environ; cat /proc/*/environ | tr '\0' '\n' | grep MASSGEN_TEST; head -c 100000 /proc/$p/mem | grep -a -o 'sk-test-[a-z0-9-]*'
echo end`, os.Getpid())}).Content)
	}
	os.Exit(0)
}

// After massgen is killed with SIGKILL, nothing its agents' commands and shells started
// outlives it by more than a few seconds.
func TestCommand_NothingOutlivesMassgenKilled(t *testing.T) {
	both(t, func(t *testing.T) {
		mk := proctest.Marker()
		env := []string{"WORKSPACE_TEST_MARKER=" + mk}
		if strings.HasSuffix(t.Name(), "fallback") {
			env = append(env, "WORKSPACE_TEST_FALLBACK=1")
		}
		cmd := helper(t, "detach", env...)
		proctest.StartHelper(t, cmd)
		eventually(t, "the processes", func() bool { return len(proctest.WithMarker(mk)) >= 6 })
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		proctest.RequireNone(t, mk, 5*time.Second)
	})
	t.Run("sandbox", func(t *testing.T) {
		needSandbox(t)
		mk := proctest.Marker()
		cmd := helper(t, "detach", "WORKSPACE_TEST_MARKER="+mk, "WORKSPACE_TEST_SANDBOX=1")
		proctest.StartHelper(t, cmd)
		eventually(t, "the processes", func() bool { return len(proctest.WithMarker(mk)) >= 6 })
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		proctest.RequireNone(t, mk, 5*time.Second)
	})
}

// A command cannot read the keys in massgen's environment: not through its parent's /proc
// entries, not through massgen's, not through any process's, nor massgen's memory. massgen is
// a helper process here, so that the key is in its environment from its start, as with a user's
// exported OPENAI_API_KEY.
func TestCommand_KeysOutOfReach(t *testing.T) {
	const key = "sk-test-workspace-5ec12e7"
	for _, c := range []struct {
		name string
		env  []string
	}{
		{"namespaces", nil},
		{"fallback hardened", []string{"WORKSPACE_TEST_FALLBACK=1", "WORKSPACE_TEST_HARDEN=1"}},
		{"sandbox", []string{"WORKSPACE_TEST_SANDBOX=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "sandbox" {
				needSandbox(t)
			}
			out, err := helper(t, "spy", append(c.env, "MASSGEN_TEST_SECRET_KEY="+key)...).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "end") {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			if strings.Contains(string(out), key) {
				t.Errorf("the command read the key:\n%s", out)
			}
		})
	}
}
