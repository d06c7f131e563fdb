package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
)

// logsRun runs massgen logs with a fake desktop; opened records the folders it was asked to show.
func logsRun(t *testing.T, terminal bool, args ...string) (code int, out string, opened []string) {
	t.Helper()
	var b bytes.Buffer
	env := logsEnv{now: time.Now, terminal: terminal, open: func(_ context.Context, dir string) error {
		opened = append(opened, dir)
		return nil
	}}
	cmd := newLogsWith(&b, env)
	cmd.SetArgs(args)
	cmd.SetOut(&b)
	cmd.SetErr(&b)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.ExecuteContext(t.Context())
	if err != nil {
		code = ExitExecution
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		b.WriteString("error: " + err.Error())
	}
	return code, b.String(), opened
}

// twoTurnSession runs a team that uses tools for two turns of one session and returns its folder.
func twoTurnSession(t *testing.T) string {
	t.Helper()
	t.Chdir(t.TempDir())
	cfg := writeConfig(t, fmt.Sprintf(workspaceTeam, "", ""))
	if code, out, errs := massgen(t, "What is in the notes?\nAnd now?\n", "--config", cfg); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	return sessionDirs(t)[0]
}

func TestLogs_Summary(t *testing.T) {
	dir := twoTurnSession(t)
	for _, args := range [][]string{nil, {"summary"}, {"summary", dir}, {dir}, {"--log-dir", dir}, {"summary", filepath.Base(dir)}} {
		code, out, _ := logsRun(t, false, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, out)
		}
		for _, want := range []string{absPath(dir) + " · 2 turns", "Turn 1 · completed (exit 0)", "Question: What is in the notes?",
			"Agents:   builder (scripted scripted): 1 answer, 1 vote", "votes: agent1.1 by builder: 1 (builder)", "Winner:   builder (agent1.1)",
			"Turn 2 · completed", "Question: And now?", "Total: "} {
			if !strings.Contains(out, want) {
				t.Errorf("%v: summary lacks %q:\n%s", args, want, out)
			}
		}
	}
	code, out, _ := logsRun(t, false, "summary", "--json", filepath.Join(dir, "turn_2"))
	var rep sessionReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("--json: exit %d %v\n%s", code, err, out)
	}
	if len(rep.Turns) != 1 || rep.Turns[0].Turn != 2 || rep.Turns[0].Winner != "builder" || rep.Turns[0].Status != "completed" ||
		len(rep.Turns[0].Agents) != 1 || rep.Turns[0].Agents[0].Answers != 1 || len(rep.Turns[0].Votes) != 1 {
		t.Errorf("turn folder summary %+v", rep)
	}
}

func TestLogs_Tools(t *testing.T) {
	dir := twoTurnSession(t)
	code, out, _ := logsRun(t, false, "tools", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	// read_file failed in turn 1 (no notes yet) and worked in turn 2; write_file worked twice.
	for _, re := range []string{`(?m)^\s*read_file\s+2\s+1\s+0\s`, `(?m)^\s*write_file\s+2\s+0\s+0\s`, `(?m)^\s*TOTAL\s+4\s+1\s+0\s`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("tools table does not match %s:\n%s", re, out)
		}
	}
	code, out, _ = logsRun(t, false, "tools", "--sort", "calls", "--json")
	var rep struct {
		Sort  string     `json:"sort"`
		Tools []toolStat `json:"tools"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || rep.Sort != "calls" || len(rep.Tools) != 2 {
		t.Fatalf("--json: exit %d %v\n%s", code, err, out)
	}
	for _, s := range rep.Tools {
		if s.Calls != 2 || s.TotalMS < 0 || s.MaxMS < s.MeanMS {
			t.Errorf("stat %+v", s)
		}
	}
	if code, out, _ := logsRun(t, false, "tools", "--sort", "size"); code != ExitConfig || !strings.Contains(out, "use time (total duration) or calls") {
		t.Errorf("bad --sort: exit %d %s", code, out)
	}
}

func TestLogs_ListOpenAnalyze(t *testing.T) {
	dir := twoTurnSession(t)
	code, out, _ := logsRun(t, false, "list")
	if code != 0 || !regexp.MustCompile(`(?m)^1\s+log_\S+\s+\S+ \S+\s+2\s+completed\s+\S+ s\s+\$\S+\s+What is in the notes\?$`).MatchString(out) {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	if code, out, _ := logsRun(t, false, "list", "--limit", "-1"); code != ExitConfig {
		t.Errorf("--limit -1: exit %d %s", code, out)
	}
	// In a script: the path only.
	code, out, opened := logsRun(t, false, "open")
	if code != 0 || strings.TrimSpace(out) != absPath(dir) || len(opened) != 0 {
		t.Errorf("open without a terminal: exit %d %q %v", code, out, opened)
	}
	code, out, opened = logsRun(t, true, "open", "--json")
	if code != 0 || !strings.Contains(out, `"path": "`+absPath(dir)+`"`) || len(opened) != 0 {
		t.Errorf("open --json: exit %d %q %v", code, out, opened)
	}
	code, _, opened = logsRun(t, true, "open")
	if code != 0 || len(opened) != 1 || opened[0] != absPath(dir) {
		t.Errorf("open on a desktop: exit %d %v", code, opened)
	}
	code, out, _ = logsRun(t, false, "analyze", "--mode", "self", "--force")
	if code != ExitConfig || !strings.Contains(out, "logs analyze") || !strings.Contains(out, "massgen logs summary") {
		t.Errorf("analyze: exit %d %s", code, out)
	}
}

func TestLogs_Errors(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, out, _ := logsRun(t, false); code != ExitConfig || !strings.Contains(out, "no sessions in") {
		t.Errorf("no sessions: exit %d %s", code, out)
	}
	if code, out, _ := logsRun(t, false, "summary", "log_nope"); code != ExitConfig {
		t.Errorf("unknown id: exit %d %s", code, out)
	}
	if code, out, _ := logsRun(t, false, "list"); code != 0 || !strings.Contains(out, "No runs in") {
		t.Errorf("empty list: exit %d %s", code, out)
	}
	if code, out, _ := logsRun(t, false, "summary", t.TempDir()); code != ExitConfig || !strings.Contains(out, "no events.jsonl") {
		t.Errorf("a folder that is no log: exit %d %s", code, out)
	}
}

// Through the real command line: logs is a subcommand, not a paid question.
func TestLogs_IsASubcommand(t *testing.T) {
	t.Chdir(t.TempDir())
	code, _, errs := massgen(t, "", "logs", "list")
	if code != 0 {
		t.Errorf("massgen logs list: exit %d %s", code, errs)
	}
}

func TestDesktopOpener(t *testing.T) {
	if runtimeIsLinuxish() {
		if desktopOpener(func(string) string { return "" }) != nil {
			t.Error("an opener without DISPLAY or WAYLAND_DISPLAY")
		}
	}
}

func runtimeIsLinuxish() bool { return runtime.GOOS != "darwin" && runtime.GOOS != "windows" }

func TestToolStats(t *testing.T) {
	dir := t.TempDir()
	w, err := event.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i, p := range []event.Payload{
		event.SessionStarted{Question: `a question quoting "type":"tool_result"`},
		event.ToolResult{Agent: "a", Tool: "mcp__s__fetch", DurationMS: 300},
		event.ToolResult{Agent: "a", Tool: "mcp__s__fetch", DurationMS: 100, IsError: true},
		event.ToolRejected{Agent: "a", Tool: "mcp__s__fetch", Error: "bad arguments"},
		event.ToolRejected{Agent: "b", Tool: "nosuch", Error: "unknown tool"},
		event.ToolResult{Agent: "b", Tool: "read_file", DurationMS: 2},
	} {
		w.Handle(event.Event{Seq: int64(i + 1), Time: now, Payload: p})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The process died writing the next one.
	f, _ := os.OpenFile(filepath.Join(dir, "events.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(`{"seq":7,"time":"2025-01-01T00:00:00Z","type":"tool_result","data":{"tool":"read_f`)
	_ = f.Close()
	stats, err := toolStats([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]toolStat{
		"mcp__s__fetch": {Tool: "mcp__s__fetch", Calls: 3, Errors: 1, Refused: 1, TotalMS: 400, MeanMS: 200, MaxMS: 300, ran: 2},
		"nosuch":        {Tool: "nosuch", Calls: 1, Refused: 1},
		"read_file":     {Tool: "read_file", Calls: 1, TotalMS: 2, MeanMS: 2, MaxMS: 2, ran: 1},
	}
	if len(stats) != len(want) {
		t.Fatalf("stats %+v", stats)
	}
	for name, w := range want {
		if got := stats[name]; got == nil || *got != w {
			t.Errorf("%s: %+v, want %+v", name, got, w)
		}
	}
}
