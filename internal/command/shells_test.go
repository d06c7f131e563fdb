//go:build unix

package command

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/childproc/proctest"
	"massgen/internal/tool"
)

func mustFind(t *testing.T, set tool.Set, name string) tool.Tool {
	t.Helper()
	tl, ok := set.Find(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	return tl
}

// shellFixture gives alice the command tools.
type shellFixture struct {
	*fixture
	set tool.Set
}

func newShellFixture(t *testing.T, opts Options) *shellFixture {
	t.Helper()
	f := newFixture(t)
	return &shellFixture{fixture: f, set: Tools(f.alice, opts)}
}

func (f *shellFixture) call(t *testing.T, name string, args map[string]any) tool.Result {
	t.Helper()
	return run(t, mustFind(t, f.set, name), args)
}

// start starts command and returns its id and pid.
func (f *shellFixture) start(t *testing.T, command string) (string, int) {
	t.Helper()
	var in shellInfo
	decode(t, mustOK(t, f.call(t, "start_background_shell", map[string]any{"command": command})), &in)
	if !strings.HasPrefix(in.ID, "shell_") || len(in.ID) != len("shell_")+8 || in.PID <= 0 || in.Command != command {
		t.Fatalf("start = %+v", in)
	}
	return in.ID, in.PID
}

func (f *shellFixture) status(t *testing.T, id string) shellInfo {
	t.Helper()
	var in shellInfo
	decode(t, mustOK(t, f.call(t, "get_background_shell_status", map[string]any{"shell_id": id})), &in)
	return in
}

func (f *shellFixture) output(t *testing.T, id string, lines int) string {
	t.Helper()
	args := map[string]any{"shell_id": id}
	if lines > 0 {
		args["lines"] = lines
	}
	return mustOK(t, f.call(t, "get_background_shell_output", args))
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !proctest.Eventually(10*time.Second, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestShells_ToolNames(t *testing.T) {
	f := newShellFixture(t, Options{})
	var names []string
	for _, s := range f.set.Specs() {
		names = append(names, s.Name)
		if s.Parameters["type"] != "object" {
			t.Errorf("%s parameters are not an object schema", s.Name)
		}
	}
	want := []string{"execute_command", "start_background_shell", "get_background_shell_output", "get_background_shell_status",
		"kill_background_shell", "list_background_shells"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}
	desc := mustFind(t, f.set, "start_background_shell").Spec.Description
	for _, w := range []string{f.alice.Dir(), "At most 10 run at once", "10000 lines", "session ends"} {
		if !strings.Contains(desc, w) {
			t.Errorf("start description lacks %q: %s", w, desc)
		}
	}
}

func TestShells_OutputOverTimeAndStatus(t *testing.T) {
	f := newShellFixture(t, Options{})
	id, _ := f.start(t, "echo out1; echo err1 >&2; while [ ! -e go ]; do sleep 0.02; done; echo out2; echo out3; echo err2 >&2; printf partial; exit 3")
	eventually(t, "the first lines", func() bool {
		out := f.output(t, id, 0)
		return strings.Contains(out, "out1") && strings.Contains(out, "err1")
	})
	if st := f.status(t, id); st.Status != "running" || st.ExitCode != nil {
		t.Fatalf("status while waiting = %+v", st)
	}
	out := f.output(t, id, 0)
	if want := "[stdout: 1 line]\nout1\n[stderr: 1 line]\nerr1"; !strings.HasSuffix(out, want) || !strings.Contains(out, id+" is running") {
		t.Errorf("output while running =\n%s\nwant suffix\n%s", out, want)
	}
	writeFile(t, filepath.Join(f.alice.Dir(), "go"), "")
	eventually(t, "the exit", func() bool { return f.status(t, id).Status != "running" })
	eventually(t, "the last output", func() bool { return strings.Contains(f.output(t, id, 0), "partial") })
	st := f.status(t, id)
	if st.Status != "exited" || st.ExitCode == nil || *st.ExitCode != 3 || st.Signal != "" || st.StdoutLines != 4 || st.StderrLines != 2 {
		t.Errorf("status after exit = %+v", st)
	}
	out = f.output(t, id, 0)
	want := id + " exited (exit code 3) after"
	if !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "[stdout: 4 lines]\nout1\nout2\nout3\npartial\n[stderr: 2 lines]\nerr1\nerr2") {
		t.Errorf("output after exit =\n%s", out)
	}
	if out := f.output(t, id, 2); !strings.HasSuffix(out, "[stdout: last 2 of 4 lines]\nout3\npartial\n[stderr: 2 lines]\nerr1\nerr2") {
		t.Errorf("output with lines=2 =\n%s", out)
	}
	if out := f.output(t, id, 1); !strings.HasSuffix(out, "[stdout: last 1 of 4 lines]\npartial\n[stderr: last 1 of 2 lines]\nerr2") {
		t.Errorf("output with lines=1 =\n%s", out)
	}
	mustFail(t, f.call(t, "get_background_shell_output", map[string]any{"shell_id": id, "lines": 0}), "lines must be at least 1")
}

func TestShells_WorkDirAndEnv(t *testing.T) {
	t.Setenv("FOO_API_KEY", "sk-fake-1")
	t.Setenv("GITHUB_TOKEN", "ghp-fake-2")
	t.Setenv("MASSGEN_PLAIN", "visible")
	f := newShellFixture(t, Options{PassEnv: []string{"MASSGEN_PLAIN"}})
	if err := os.Mkdir(filepath.Join(f.alice.Dir(), "wd"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := mustOK(t, f.call(t, "start_background_shell", map[string]any{"command": "pwd; env; echo END", "work_dir": "wd"}))
	var in shellInfo
	decode(t, res, &in)
	if in.WorkDir != filepath.Join(f.alice.Dir(), "wd") {
		t.Errorf("work_dir = %s", in.WorkDir)
	}
	eventually(t, "the end", func() bool { return strings.Contains(f.output(t, in.ID, 1), "\nEND\n") })
	out := f.output(t, in.ID, 10000)
	if !strings.Contains(out, "\n"+filepath.Join(f.alice.Dir(), "wd")+"\n") || !strings.Contains(out, "MASSGEN_PLAIN=visible") {
		t.Errorf("output =\n%s", out)
	}
	for _, secret := range []string{"sk-fake-1", "ghp-fake-2", "FOO_API_KEY"} {
		if strings.Contains(out, secret) {
			t.Errorf("the shell saw %s", secret)
		}
	}
	mustFail(t, f.call(t, "start_background_shell", map[string]any{"command": "pwd", "work_dir": "../.."}), "must be inside your workspace")
	mustFail(t, f.call(t, "start_background_shell", map[string]any{"command": "pwd", "work_dir": "missing"}), "not an existing directory")
}

func TestShells_Refused(t *testing.T) {
	f := newShellFixture(t, Options{Blocked: []string{`forbidden`}})
	for c, want := range map[string]string{
		"sudo ls":                     "Dangerous command pattern",
		"rm -rf /":                    "Dangerous command pattern",
		"chmod +x run.sh && ./run.sh": "Dangerous command pattern",
		"echo forbidden":              "blocked by command_line_blocked_commands",
		"echo x > " + filepath.Join(f.project, "readme.md"): "read-only context path",
		"  ": "command is empty",
	} {
		mustFail(t, f.call(t, "start_background_shell", map[string]any{"command": c}), want)
	}
	mustFail(t, f.call(t, "start_background_shell", map[string]any{}), "command is empty")
	if got := mustOK(t, f.call(t, "list_background_shells", nil)); !strings.Contains(got, `"shells": []`) {
		t.Errorf("a refused command started: %s", got)
	}
}

func TestShells_UnknownID(t *testing.T) {
	f := newShellFixture(t, Options{})
	for _, name := range []string{"get_background_shell_output", "get_background_shell_status", "kill_background_shell"} {
		mustFail(t, f.call(t, name, map[string]any{"shell_id": "shell_deadbeef"}), `no background shell "shell_deadbeef"`)
		mustFail(t, f.call(t, name, map[string]any{}), "shell_id is missing")
		mustFail(t, mustFind(t, f.set, name).Run(t.Context(), "{bad"), "invalid arguments")
	}
}

func TestShells_KillRunningKillsGroup(t *testing.T) {
	f := newShellFixture(t, Options{})
	id, pgid := f.start(t, "sleep 300 & sleep 300")
	eventually(t, "the sleeps", func() bool { return len(proctest.GroupMembers(t, pgid)) >= 2 })
	start := time.Now()
	res := mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
	if !strings.Contains(res, "and the processes it started are stopped") || !strings.Contains(res, "killed (signal terminated)") {
		t.Errorf("kill = %s", res)
	}
	if d := time.Since(start); d > shellGrace {
		t.Errorf("kill took %s: SIGTERM was not enough?", d)
	}
	if left := proctest.GroupMembers(t, pgid); len(left) > 0 {
		t.Errorf("processes of the group survived the kill: %v", left)
	}
	if st := f.status(t, id); st.Status != "killed" || st.Signal != "terminated" || st.ExitCode != nil {
		t.Errorf("status after kill = %+v", st)
	}
	if res := mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id})); !strings.Contains(res, "was already stopped") {
		t.Errorf("second kill = %s", res)
	}
}

func TestShells_KillEscalatesToSIGKILL(t *testing.T) {
	defer setVar(&shellGrace, 300*time.Millisecond)()
	f := newShellFixture(t, Options{})
	id, pgid := f.start(t, "trap '' TERM; echo ready; while :; do sleep 0.05; done")
	eventually(t, "the trap", func() bool { return strings.Contains(f.output(t, id, 0), "ready") })
	start := time.Now()
	mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("SIGKILL came after %s, before the grace period", d)
	}
	if st := f.status(t, id); st.Status != "killed" || st.Signal != "killed" {
		t.Errorf("status = %+v", st)
	}
	if left := proctest.GroupMembers(t, pgid); len(left) > 0 {
		t.Errorf("processes of the group survived: %v", left)
	}
}

// The grace period is for everything the shell started, not just the shell: a child that
// cleans up on SIGTERM gets to finish after the shell itself is gone, and SIGKILL comes only
// once the whole group has ended or the grace is over.
func TestShells_KillWaitsForTheGroupToFinish(t *testing.T) {
	defer setVar(&shellGrace, 5*time.Second)()
	f := newShellFixture(t, Options{})
	id, _ := f.start(t, "(trap 'sleep 0.5; echo cleaned > cleaned.txt; exit 0' TERM; echo ready; while :; do sleep 0.05; done) & wait")
	eventually(t, "the child's trap", func() bool { return strings.Contains(f.output(t, id, 0), "ready") })
	start := time.Now()
	mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
	if d := time.Since(start); d >= shellGrace {
		t.Errorf("kill took the whole grace (%s): the group's end was not noticed", d)
	}
	b, err := os.ReadFile(filepath.Join(f.alice.Dir(), "cleaned.txt"))
	if err != nil || string(b) != "cleaned\n" {
		t.Errorf("the child was killed before its cleanup finished: %v %q", err, b)
	}
}

// A shell that exited can still be killed: what it left running dies.
func TestShells_KillExited(t *testing.T) {
	f := newShellFixture(t, Options{})
	id, pgid := f.start(t, "sleep 300 >/dev/null 2>&1 & echo started")
	eventually(t, "the exit", func() bool { return f.status(t, id).Status == "exited" })
	if st := f.status(t, id); st.ExitCode == nil || *st.ExitCode != 0 {
		t.Errorf("status = %+v", st)
	}
	// What the shell left behind runs on (with, on Linux, the tree's init, whose pid is the
	// group id: it stays reserved meanwhile).
	if left := slices.DeleteFunc(proctest.GroupMembers(t, pgid), func(p int) bool { return p == pgid }); len(left) != 1 {
		t.Fatalf("the background sleep should still run: %v", left)
	}
	res := mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
	if !strings.Contains(res, "had already ended (shell_") || !strings.Contains(res, "exited (exit code 0)") {
		t.Errorf("kill = %s", res)
	}
	if left := proctest.GroupMembers(t, pgid); len(left) > 0 {
		t.Errorf("the background sleep survived: %v", left)
	}
	if st := f.status(t, id); st.Status != "exited" || st.ExitCode == nil || *st.ExitCode != 0 {
		t.Errorf("status after kill = %+v", st)
	}
	if out := f.output(t, id, 0); !strings.Contains(out, "[stdout: 1 line]\nstarted") {
		t.Errorf("output after kill = %s", out)
	}
}

func TestShells_MaxRunning(t *testing.T) {
	f := newShellFixture(t, Options{})
	var ids []string
	for range shellMaxRunning {
		id, _ := f.start(t, "sleep 300")
		ids = append(ids, id)
	}
	mustFail(t, f.call(t, "start_background_shell", map[string]any{"command": "sleep 300"}), "10 background shells are already running, the most allowed at once")
	var list struct {
		Shells     []shellInfo `json:"shells"`
		Running    int         `json:"running"`
		MaxRunning int         `json:"max_running"`
	}
	decode(t, mustOK(t, f.call(t, "list_background_shells", nil)), &list)
	if len(list.Shells) != 10 || list.Running != 10 || list.MaxRunning != 10 || list.Shells[3].ID != ids[3] || list.Shells[3].Command != "sleep 300" {
		t.Errorf("list = %+v", list)
	}
	mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": ids[0]}))
	f.start(t, "sleep 300")
	decode(t, mustOK(t, f.call(t, "list_background_shells", nil)), &list)
	if len(list.Shells) != 11 || list.Running != 10 || list.Shells[0].Status != "killed" {
		t.Errorf("list = %+v", list)
	}
}

func TestShells_OldFinishedShellsForgotten(t *testing.T) {
	defer setVar(&shellMaxKept, 3)()
	f := newShellFixture(t, Options{})
	var ids []string
	for i := range 4 {
		id, _ := f.start(t, fmt.Sprintf("echo %d", i))
		eventually(t, "the exit", func() bool { return f.status(t, id).Status == "exited" })
		ids = append(ids, id)
	}
	mustFail(t, f.call(t, "get_background_shell_status", map[string]any{"shell_id": ids[0]}), "no background shell")
	f.status(t, ids[1])
}

func TestShells_RingBufferKeepsLastLines(t *testing.T) {
	defer setVar(&shellBufferLines, 5)()
	f := newShellFixture(t, Options{})
	id, _ := f.start(t, "i=1; while [ $i -le 20 ]; do echo line$i; i=$((i+1)); done")
	eventually(t, "the exit", func() bool { return f.status(t, id).Status == "exited" })
	eventually(t, "the last line", func() bool { return strings.Contains(f.output(t, id, 0), "line20") })
	out := f.output(t, id, 0)
	if want := "[stdout: last 5 of 20 lines; older lines are no longer kept]\nline16\nline17\nline18\nline19\nline20\n[stderr: no output]"; !strings.HasSuffix(out, want) {
		t.Errorf("output =\n%s\nwant suffix\n%s", out, want)
	}
	if out := f.output(t, id, 2); !strings.HasSuffix(out, "[stdout: last 2 of 20 lines]\nline19\nline20\n[stderr: no output]") {
		t.Errorf("output with lines=2 =\n%s", out)
	}
}

func TestLineRing(t *testing.T) {
	r := &lineRing{maxLines: 3, maxBytes: 12, lineCap: 4}
	_, _ = r.Write([]byte("a\nbb"))
	_, _ = r.Write([]byte("\nccc\n"))
	if got, total := r.tail(10); !slices.Equal(got, []string{"a", "bb", "ccc"}) || total != 3 {
		t.Errorf("tail = %q, %d", got, total)
	}
	_, _ = r.Write([]byte("dddddddd\ne")) // cut to 4 bytes; the byte budget drops a, bb
	if got, total := r.tail(10); !slices.Equal(got, []string{"dddd [line cut: 4 more bytes]", "e"}) || total != 5 {
		t.Errorf("tail = %q, %d", got, total)
	}
	for i := range 3000 {
		_, _ = fmt.Fprintf(r, "%d\n", i%10)
	}
	if got, total := r.tail(2); !slices.Equal(got, []string{"8", "9"}) || total != 3004 {
		t.Errorf("tail = %q, %d", got, total)
	}
	if len(r.lines) > 2100 {
		t.Errorf("the ring was not compacted: %d slots", len(r.lines))
	}
}

func TestShells_OutputCapped(t *testing.T) {
	f := newShellFixture(t, Options{OutputLimit: 1024})
	id, _ := f.start(t, "i=0; while [ $i -lt 500 ]; do echo 0123456789; i=$((i+1)); done; echo end")
	eventually(t, "the exit", func() bool { return f.status(t, id).Status == "exited" })
	eventually(t, "the last line", func() bool { return strings.Contains(f.output(t, id, 0), "end") })
	out := f.output(t, id, 10000)
	if !strings.Contains(out, "[stdout: last 93 of 501 lines, cut to the last 1024 bytes]\n0123456789\n") || !strings.HasSuffix(out, "0123456789\nend\n[stderr: no output]") {
		t.Errorf("output =\n%s", out)
	}
	if len(out) > 1300 {
		t.Errorf("capped output is %d bytes", len(out))
	}
}

// Closing the run, as the app does at the end of every session, kills every shell of every
// agent with its process group and leaves no goroutine behind.
func TestShells_RunCloseStopsEverything(t *testing.T) {
	defer setVar(&shellGrace, 300*time.Millisecond)()
	ignore := goleak.IgnoreCurrent()
	f := newShellFixture(t, Options{})
	bobSet := Tools(f.bob, Options{})
	var pgids []int
	for _, c := range []string{"sleep 300 & sleep 300", "trap '' TERM; while :; do sleep 0.05; done", "sleep 300 >/dev/null 2>&1 & exit 0", "yes"} {
		_, pgid := f.start(t, c)
		pgids = append(pgids, pgid)
	}
	var in shellInfo
	decode(t, mustOK(t, run(t, mustFind(t, bobSet, "start_background_shell"), map[string]any{"command": "sleep 300"})), &in)
	pgids = append(pgids, in.PID)
	eventually(t, "the processes", func() bool { return len(proctest.GroupMembers(t, pgids[0])) >= 2 })
	start := time.Now()
	if err := f.run.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %s", d)
	}
	for _, pgid := range pgids {
		if left := proctest.GroupMembers(t, pgid); len(left) > 0 {
			t.Errorf("processes of group %d survived Close: %v", pgid, left)
		}
	}
	var list struct{ Shells []shellInfo }
	decode(t, mustOK(t, f.call(t, "list_background_shells", nil)), &list)
	for _, s := range list.Shells {
		if s.Status == "running" {
			t.Errorf("still running after Close: %+v", s)
		}
	}
	mustFail(t, f.call(t, "start_background_shell", map[string]any{"command": "sleep 300"}), "the session has ended")
	goleak.VerifyNone(t, ignore)
}

// A killed shell leaves no goroutine, even when a process that left its group held its output.
func TestShells_NoGoroutineLeak(t *testing.T) {
	defer setVar(&shellDrain, 100*time.Millisecond)()
	ignore := goleak.IgnoreCurrent()
	f := newShellFixture(t, Options{})
	id, _ := f.start(t, "echo hi")
	eventually(t, "the exit", func() bool { return f.status(t, id).Status == "exited" })
	mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
	if _, err := exec.LookPath("setsid"); err == nil {
		id, _ = f.start(t, "setsid sh -c 'echo escaped; exec sleep 300' & sleep 300")
		eventually(t, "the escape", func() bool { return strings.Contains(f.output(t, id, 0), "escaped") })
		mustOK(t, f.call(t, "kill_background_shell", map[string]any{"shell_id": id}))
	}
	goleak.VerifyNone(t, ignore)
	if err := f.run.Close(); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t, ignore)
}

// setVar sets *p to v and returns what restores it.
func setVar[T any](p *T, v T) func() {
	old := *p
	*p = v
	return func() { *p = old }
}

// StopResidents ends the shells before the winner's workspace is copied out, and leaves the files
// usable: a shell writing into the workspace stops writing.
func TestShells_StopShellsKeepsFiles(t *testing.T) {
	f := newShellFixture(t, Options{})
	_, pgid := f.start(t, "while :; do date >> log.txt; sleep 0.01; done")
	log := filepath.Join(f.alice.Dir(), "log.txt")
	eventually(t, "the log", func() bool { _, err := os.Stat(log); return err == nil })
	f.run.StopResidents()
	if left := proctest.GroupMembers(t, pgid); len(left) > 0 {
		t.Errorf("processes survived StopResidents: %v", left)
	}
	before := readFile(t, log)
	time.Sleep(50 * time.Millisecond)
	if after := readFile(t, log); after != before {
		t.Error("the shell still writes after StopResidents")
	}
	mustFail(t, f.call(t, "start_background_shell", map[string]any{"command": "sleep 300"}), "the session has ended")
	mustOK(t, call(t, f.alice, "write_file", map[string]any{"path": "after.txt", "content": "still writable"}))
}
