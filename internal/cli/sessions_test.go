package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/runlog"
)

// workspaceTeam is one agent that reads notes.txt from its workspace, then writes it: a turn
// that starts from the previous winner's workspace reads what the previous turn wrote.
const workspaceTeam = `
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
%s      tool_calls:
        - {name: read_file, args: {path: notes.txt}}
%s        - {name: write_file, args: {path: notes.txt, content: "written in a turn: {{result}}"}}
      answers: ["Done; see notes.txt."]
      vote: agent1
orchestrator: {final_presentation: verbatim}
`

// massgen executes massgen with stdin in the current folder.
func massgen(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(t.Context(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// loggedEvents reads the events of a turn folder.
func loggedEvents(t *testing.T, dir string) []event.Event {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func resultsByTool(evs []event.Event) map[string]event.ToolResult {
	out := map[string]event.ToolResult{}
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok {
			out[r.Tool] = r
		}
	}
	return out
}

func sessionDirs(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(".massgen", "massgen_logs", "log_*"))
	return dirs
}

// A session continues in a new process from its log folder alone: same folder, next turn,
// the conversation so far, the winner's workspace and the config it ran with.
func TestContinue_OneShotInANewProcess(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	if code, out, errs := massgen(t, "", "--config", cfg, "What is in the notes?"); code != 0 {
		t.Fatalf("turn 1: exit %d\n%s\n%s", code, out, errs)
	}
	// No --config: the session's own.
	code, out, errs := massgen(t, "", "--continue", "And now?")
	if code != 0 {
		t.Fatalf("turn 2: exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "continuing session log_") || !strings.Contains(errs, "with turn 2 (1 earlier question)") {
		t.Errorf("stderr does not say what continues:\n%s", errs)
	}
	dirs := sessionDirs(t)
	if len(dirs) != 1 {
		t.Fatalf("session folders %v, want one", dirs)
	}
	first, second := loggedEvents(t, filepath.Join(dirs[0], "turn_1")), loggedEvents(t, filepath.Join(dirs[0], "turn_2"))
	start := second[0].Payload.(event.SessionStarted)
	want := []provider.Message{{Role: provider.RoleUser, Content: "What is in the notes?"}, {Role: provider.RoleAssistant, Content: "Done; see notes.txt."}}
	if start.Turn != 2 || start.Question != "And now?" || fmt.Sprint(start.History) != fmt.Sprint(want) {
		t.Errorf("turn 2 started with turn %d, question %q, history %+v", start.Turn, start.Question, start.History)
	}
	if r := resultsByTool(first)["read_file"]; !r.IsError {
		t.Errorf("turn 1 found notes.txt already: %+v", r)
	}
	if r := resultsByTool(second)["read_file"]; r.IsError || !strings.Contains(r.Content, "written in a turn") {
		t.Errorf("turn 2 did not start from turn 1's workspace: %+v", r)
	}
	var meta struct {
		ConfigPath string `json:"config_path"`
	}
	b, _ := os.ReadFile(filepath.Join(dirs[0], "turn_2", "metadata.json"))
	if err := json.Unmarshal(b, &meta); err != nil || meta.ConfigPath != cfg {
		t.Errorf("turn 2 ran with config %q (%v), want the session's %s", meta.ConfigPath, err, cfg)
	}
}

// The MCP servers of a continued session are the config's, started again in the new process.
func TestContinue_StartsTheSessionsMCPServers(t *testing.T) {
	server := repoFile(t, ".ci/npm/node_modules/.bin/mcp-server-everything")
	if _, err := os.Stat(server); err != nil {
		t.Skipf("%s is not installed (npm install --prefix .ci/npm @modelcontextprotocol/server-everything)", server)
	}
	t.Chdir(t.TempDir())
	mcp := fmt.Sprintf("      mcp_servers:\n        - {name: everything, command: %q}\n      exclude_tools: [trigger-long-running-operation]\n", server)
	echo := "        - {name: mcp__everything__echo, args: {message: \"from the team\"}}\n"
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, mcp, echo))
	if code, out, errs := massgen(t, "", "--config", cfg, "q1"); code != 0 {
		t.Fatalf("turn 1: exit %d\n%s\n%s", code, out, errs)
	}
	if code, out, errs := massgen(t, "", "--continue", "q2"); code != 0 {
		t.Fatalf("turn 2: exit %d\n%s\n%s", code, out, errs)
	}
	second := loggedEvents(t, filepath.Join(sessionDirs(t)[0], "turn_2"))
	if r := resultsByTool(second)["mcp__everything__echo"]; r.IsError || !strings.Contains(r.Content, "from the team") {
		t.Errorf("the MCP tool in the continued turn: %+v", r)
	}
	if r := resultsByTool(second)["read_file"]; r.IsError || !strings.Contains(r.Content, "Echo: from the team") {
		t.Errorf("turn 2 read %+v", r)
	}
}

func TestContinue_Interactive(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	if code, out, errs := massgen(t, "", "--config", cfg, "q1"); code != 0 {
		t.Fatalf("turn 1: exit %d\n%s\n%s", code, out, errs)
	}
	code, out, errs := massgen(t, "q2\n/status\n", "--continue")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	dir := sessionDirs(t)[0]
	for _, want := range []string{"Continuing session " + filepath.Base(dir) + " with turn 2 (1 earlier question)",
		"User: q2\n", "turns: 2 (2 in the current conversation)", "logs: " + absPath(dir) + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	start := loggedEvents(t, filepath.Join(dir, "turn_2"))[0].Payload.(event.SessionStarted)
	if len(start.History) != 2 || start.History[0].Content != "q1" {
		t.Errorf("turn 2 history %+v", start.History)
	}
}

// crashTurn leaves turn n of session dir as a killed process would: its opening event only.
func crashTurn(t *testing.T, dir string, n int, history []provider.Message) {
	t.Helper()
	turn := filepath.Join(dir, fmt.Sprintf("turn_%d", n))
	if err := os.Mkdir(turn, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := event.Create(filepath.Join(turn, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	w.Handle(event.Event{Seq: 1, Time: time.Now().Add(-time.Hour), Payload: event.SessionStarted{Question: "the crashed one", Turn: n, History: history}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// Written an hour ago: the process is long gone (a fresh log would be a running turn).
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(turn, "events.jsonl"), old, old); err != nil {
		t.Fatal(err)
	}
}

func TestContinue_AfterACrashGoesOnFromTheLastAnsweredTurn(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	if code, out, errs := massgen(t, "", "--config", cfg, "q1"); code != 0 {
		t.Fatalf("turn 1: exit %d\n%s\n%s", code, out, errs)
	}
	dir := sessionDirs(t)[0]
	history := loggedEvents(t, filepath.Join(dir, "turn_1"))[0].Payload.(event.SessionStarted).History
	crashTurn(t, dir, 2, append(history, provider.Message{Role: provider.RoleUser, Content: "q1"}, provider.Message{Role: provider.RoleAssistant, Content: "Done; see notes.txt."}))
	code, out, errs := massgen(t, "", "--session-id", filepath.Base(dir), "q3")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "turn 2 did not finish with an answer (incomplete: its process may have crashed); the conversation goes on from turn 1") {
		t.Errorf("stderr:\n%s", errs)
	}
	start := loggedEvents(t, filepath.Join(dir, "turn_3"))[0].Payload.(event.SessionStarted)
	if start.Turn != 3 || len(start.History) != 2 {
		t.Errorf("turn 3: %+v", start)
	}
}

func TestSessionID_Finding(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	if code, out, errs := massgen(t, "", "--config", cfg, "q1"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	id := filepath.Base(sessionDirs(t)[0])
	for _, tc := range []struct{ name, arg string }{
		{"the id", id},
		{"without log_", strings.TrimPrefix(id, "log_")},
		{"a unique beginning", id[:len(id)-3]},
		{"the folder's path", filepath.Join(".massgen", "massgen_logs", id)},
		{"a turn folder's path", filepath.Join(".massgen", "massgen_logs", id, "turn_1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, out, errs := massgen(t, "", "--session-id", tc.arg, "--no-display", "again"); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errs)
			}
		})
	}
	turns, _ := filepath.Glob(filepath.Join(".massgen", "massgen_logs", id, "turn_*"))
	if len(turns) != 6 {
		t.Errorf("%d turns, want 6: %v", len(turns), turns)
	}
}

func TestSessionID_Errors(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	tests := []struct {
		name string
		args []string
		want *regexp.Regexp
	}{
		{"no sessions yet", []string{"--continue", "q"}, regexp.MustCompile(`no sessions in \S+massgen_logs yet: run massgen "your question"`)},
		{"no sessions for an id", []string{"--session-id", "log_x", "q"}, regexp.MustCompile(`no sessions in .* yet`)},
		{"both flags", []string{"--continue", "--session-id", "x", "q"}, regexp.MustCompile(`use one of them`)},
		{"--all alone", []string{"--all"}, regexp.MustCompile(`--all goes with --list-sessions`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errs := massgen(t, "", tc.args...)
			if code != ExitConfig || !tc.want.MatchString(errs) {
				t.Errorf("exit %d, stderr %q; want 1 and %v", code, errs, tc.want)
			}
		})
	}
	if code, out, errs := massgen(t, "", "--config", cfg, "q1"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	id := filepath.Base(sessionDirs(t)[0])
	typo := id[:len(id)-1] + "x"
	code, _, errs := massgen(t, "", "--session-id", typo, "q")
	if code != ExitConfig || !strings.Contains(errs, "no such session") || !strings.Contains(errs, "did you mean "+id+"?") {
		t.Errorf("unknown id: exit %d\n%s", code, errs)
	}
	code, _, errs = massgen(t, "", "--continue", "--no-logs", "q")
	if code != ExitConfig || !strings.Contains(errs, "logging is off") {
		t.Errorf("--no-logs: exit %d\n%s", code, errs)
	}
	code, _, errs = massgen(t, "", "--continue", "--web", "--no-browser", "q")
	if code != ExitConfig || !strings.Contains(errs, "--web starts its own sessions") {
		t.Errorf("--web: exit %d\n%s", code, errs)
	}
	// A session whose config file is gone, continued without --config.
	if err := os.Remove(cfg); err != nil {
		t.Fatal(err)
	}
	code, _, errs = massgen(t, "", "--continue", "q")
	if code != ExitConfig || !strings.Contains(errs, "cannot be read from here") || !strings.Contains(errs, "pass --config FILE") {
		t.Errorf("missing config: exit %d\n%s", code, errs)
	}
}

// The config's top-level session_id continues that session, as --session-id does.
func TestSessionID_FromTheConfig(t *testing.T) {
	t.Chdir(t.TempDir())
	body := fmt.Sprintf(workspaceTeam, "", "")
	cfg := writeConfig(t, body)
	if code, out, errs := massgen(t, "", "--config", cfg, "q1"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	id := filepath.Base(sessionDirs(t)[0])
	withID := writeConfig(t, "session_id: "+id+"\n"+body)
	if code, out, errs := massgen(t, "", "--config", withID, "q2"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if dirs := sessionDirs(t); len(dirs) != 1 {
		t.Fatalf("session folders %v", dirs)
	}
	start := loggedEvents(t, filepath.Join(sessionDirs(t)[0], "turn_2"))[0].Payload.(event.SessionStarted)
	if len(start.History) != 2 {
		t.Errorf("history %+v", start.History)
	}
	bad := writeConfig(t, "session_id: log_nosuch\n"+body)
	code, _, errs := massgen(t, "", "--config", bad, "q3")
	if code != ExitConfig || !strings.Contains(errs, "session_id in "+bad+" log_nosuch: no such session") {
		t.Errorf("unknown session_id: exit %d\n%s", code, errs)
	}
}

func TestListSessions(t *testing.T) {
	t.Chdir(t.TempDir())
	code, out, _ := massgen(t, "", "--list-sessions")
	if code != 0 || !strings.Contains(out, "No sessions in") {
		t.Fatalf("empty: exit %d\n%s", code, out)
	}
	good := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	failing := writeConfig(t, "agents:\n  - id: a\n    backend: {type: scripted, answers: [x], faults: [{kind: fatal, call: 1}]}\n")
	if code, out, errs := massgen(t, "", "--config", good, "The good question\nwith a second line"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, _ := massgen(t, "", "--config", failing, "The failing question"); code == 0 {
		t.Fatal("the failing team succeeded")
	}
	code, out, _ = massgen(t, "", "--list-sessions")
	if code != 0 || !strings.Contains(out, "The good question with a second line") || strings.Contains(out, "The failing question") ||
		!strings.Contains(out, "completed") || !strings.Contains(out, "(1 more: older, unfinished or failed") {
		t.Errorf("default list: exit %d\n%s", code, out)
	}
	if !regexp.MustCompile(`(?m)^ID +WHEN +TURNS +STATUS +WINNER +FIRST QUESTION$`).MatchString(out) {
		t.Errorf("no header:\n%s", out)
	}
	code, out, _ = massgen(t, "", "--list-sessions", "--all")
	if code != 0 || !strings.Contains(out, "The failing question") || !strings.Contains(out, "failed") {
		t.Errorf("--all: exit %d\n%s", code, out)
	}
	// The failing one is newer: it comes first.
	if strings.Index(out, "The failing question") > strings.Index(out, "The good question") {
		t.Errorf("not newest first:\n%s", out)
	}
	code, out, _ = massgen(t, "", "--list-sessions", "--all", "--json")
	var rows []struct {
		ID          string `json:"id"`
		Status      string `json:"status"`
		Turns       int    `json:"turns"`
		Continuable bool   `json:"continuable"`
		Winner      string `json:"winner"`
	}
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 2 {
		t.Fatalf("--json: exit %d %v\n%s", code, err, out)
	}
	if rows[0].Status != "failed" || rows[0].Continuable || rows[1].Status != "completed" || !rows[1].Continuable || rows[1].Winner != "builder" {
		t.Errorf("rows %+v", rows)
	}
	// --continue skips the newer failed session.
	code, _, errs := massgen(t, "", "--continue", "--config", good, "q")
	if code != 0 || !strings.Contains(errs, "skipping 1 newer session that cannot be continued") || !strings.Contains(errs, rows[1].ID) {
		t.Errorf("--continue: exit %d\n%s", code, errs)
	}
	if code, _, errs := massgen(t, "", "--list-sessions", "a question"); code != ExitConfig || !strings.Contains(errs, "takes no question") {
		t.Errorf("with a question: exit %d %s", code, errs)
	}
}

func TestTakeConfig(t *testing.T) {
	quick := &runlog.Continuation{Session: runlog.Session{ID: "log_1"}, Team: []runlog.TeamAgent{{ID: "agent1", Type: "openai", Model: "gpt-x", BaseURL: "http://h/v1", SystemMessage: "Be brief."}}}
	var o runOptions
	s := &sessionFlags{plan: quick, stderr: &bytes.Buffer{}}
	if err := s.takeConfig(&o); err != nil || o.backend != "openai" || o.model != "gpt-x" || o.baseURL != "http://h/v1" || o.sysMessage != "Be brief." {
		t.Errorf("quick setup: %v %+v", err, o)
	}
	quick.Team[0].BaseURL = "http://[redacted]@h/v1"
	if err := s.takeConfig(&runOptions{}); err == nil || !strings.Contains(err.Error(), "pass --backend, --model and --base-url again") {
		t.Errorf("redacted base URL: %v", err)
	}
	// A default team (built from the keys) is built again: nothing to set.
	s.plan = &runlog.Continuation{Team: []runlog.TeamAgent{{ID: "openai_1"}, {ID: "openai_2"}}}
	o = runOptions{}
	if err := s.takeConfig(&o); err != nil || o.configPath != "" || o.backend != "" {
		t.Errorf("default team: %v %+v", err, o)
	}
	// A config named on the command line wins, with a warning when it differs.
	var warn bytes.Buffer
	s = &sessionFlags{plan: &runlog.Continuation{Session: runlog.Session{ID: "log_1"}, ConfigPath: "a.yaml"}, stderr: &warn}
	o = runOptions{configPath: "b.yaml"}
	if err := s.takeConfig(&o); err != nil || o.configPath != "b.yaml" || !strings.Contains(warn.String(), "it ran with a.yaml") {
		t.Errorf("other config: %v %q", err, warn.String())
	}
}

// --log-root moves the sessions; a session named by its folder's path continues there.
func TestSessionID_InAnotherLogRoot(t *testing.T) {
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	other := filepath.Join(t.TempDir(), "elsewhere")
	if code, out, errs := massgen(t, "", "--config", cfg, "--log-root", other, "q1"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if code, _, errs := massgen(t, "", "--continue", "q2"); code != ExitConfig || !strings.Contains(errs, "no sessions in") {
		t.Errorf("the default root has none: exit %d %s", code, errs)
	}
	if code, out, errs := massgen(t, "", "--continue", "--log-root", other, "q2"); code != 0 {
		t.Fatalf("--log-root: exit %d\n%s\n%s", code, out, errs)
	}
	dirs, _ := filepath.Glob(filepath.Join(other, "log_*"))
	if code, out, errs := massgen(t, "", "--session-id", dirs[0], "q3"); code != 0 {
		t.Fatalf("by path: exit %d\n%s\n%s", code, out, errs)
	}
	if turns, _ := filepath.Glob(filepath.Join(dirs[0], "turn_*")); len(turns) != 3 {
		t.Errorf("turns %v", turns)
	}
	code, out, _ := massgen(t, "", "--list-sessions", "--log-root", other)
	if code != 0 || !strings.Contains(out, filepath.Base(dirs[0])) || !strings.Contains(out, "  3  ") {
		t.Errorf("--list-sessions --log-root: exit %d\n%s", code, out)
	}
}
