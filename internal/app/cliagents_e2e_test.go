package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/cliagent/clitest"
	"massgen/internal/config"
)

// cliMember is one coding-agent CLI of a team, on its fake API.
type cliMember struct {
	id, typ, bin, model string
	api                 func(*clitest.Brain) http.Handler
	tools               clitest.Tools
	baseSuffix          string
}

var cliMembers = []cliMember{
	{id: "claude", typ: "claude_code", bin: "claude", model: "claude-sonnet-4-5", api: clitest.Anthropic, tools: clitest.ClaudeTools},
	{id: "codex", typ: "codex", bin: "codex", model: "gpt-5.4", api: clitest.Responses, tools: clitest.CodexTools, baseSuffix: "/v1"},
	{id: "gemini", typ: "gemini_cli", bin: "gemini", model: "gemini-2.5-pro", api: clitest.Gemini, tools: clitest.GeminiTools},
	{id: "copilot", typ: "copilot", bin: "copilot", model: "claude-sonnet-4-5", api: clitest.Anthropic, tools: clitest.CopilotTools},
}

// cliPathOnce puts the npm CLIs on PATH once for the test binary: t.Setenv would keep the
// CLI team tests from running in parallel.
var cliPathOnce sync.Once

// cliTeam starts a fake API per member and returns the team's config; members whose CLI is
// not installed make the test skip.
func cliTeam(t *testing.T, members []cliMember, scripts map[string]clitest.Script, extra string) (*config.Config, map[string]*clitest.Brain) {
	t.Helper()
	var bins []string
	var b strings.Builder
	b.WriteString("agents:\n")
	brains := map[string]*clitest.Brain{}
	for _, m := range members {
		bin := clitest.Bin(m.bin)
		if bin == "" {
			t.Skipf("%s is not installed (.ci/run installs it into .ci/npm)", m.bin)
		}
		bins = append(bins, filepath.Dir(bin))
		brain := &clitest.Brain{Script: scripts[m.id], Tools: m.tools}
		brains[m.id] = brain
		srv := httptest.NewServer(m.api(brain))
		t.Cleanup(srv.Close)
		fmt.Fprintf(&b, "  - id: %s\n    backend: {type: %s, model: %s, base_url: %q%s}\n", m.id, m.typ, m.model, srv.URL+m.baseSuffix, extra)
	}
	b.WriteString("timeout_settings: {agent_timeout_seconds: 120, orchestrator_timeout_seconds: 300}\n")
	// Every member votes: the tests hold each CLI to the whole protocol, vote included.
	b.WriteString("orchestrator: {end_when_decided: false}\n")
	cliPathOnce.Do(func() { _ = os.Setenv("PATH", bins[0]+string(os.PathListSeparator)+os.Getenv("PATH")) })
	cfg, rep := config.Parse("cli_team.yaml", []byte(b.String()))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg, brains
}

// A team of coding-agent CLIs completes a coding task: each writes a file in its own
// workspace with its own tools, reads another's, votes; the winner's files reach final/, and
// every agent's usage and cost are in status.json.
func TestE2E_CLIAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real CLIs")
	}
	t.Parallel()
	scripts := map[string]clitest.Script{}
	for _, m := range cliMembers {
		scripts[m.id] = clitest.Script{File: m.id + ".py", Content: "print('" + m.id + "')", MCPTool: "echo"}
	}
	// Each CLI gets the user's MCP server in its own MCP config.
	cfg, brains := cliTeam(t, cliMembers, scripts,
		fmt.Sprintf(", mcp_servers: [{name: everything, type: stdio, command: %q, args: [stdio]}]", everythingServer(t)))
	root := t.TempDir()
	res, err := Run(t.Context(), cfg, Options{
		Question: "Write a hello-world program.", Logging: true, LogRoot: root, WorkspaceRoot: clitest.StateDir(t),
		Getenv: func(k string) string { return keys[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner == "" {
		t.Fatalf("exit %d, winner %q, err %v", res.ExitCode, res.Winner, res.Err)
	}
	winner := scripts[res.Winner]
	got, err := os.ReadFile(filepath.Join(res.Dir, "final", res.Winner, "workspace", winner.File))
	if err != nil || strings.TrimSpace(string(got)) != winner.Content {
		t.Errorf("final/%s/workspace/%s = %q, %v", res.Winner, winner.File, got, err)
	}
	for id, b := range brains {
		if !b.ReadPeer() {
			t.Errorf("%s never read another agent's file", id)
		}
		if !b.MCPCalled() {
			t.Errorf("%s's CLI did not offer the user's MCP server's echo tool", id)
		}
	}
	var status struct {
		Agents map[string]struct {
			Usage struct {
				Input  int64   `json:"input_tokens"`
				Output int64   `json:"output_tokens"`
				Cost   float64 `json:"cost_usd"`
			} `json:"usage"`
			Votes   json.RawMessage `json:"vote"`
			Session string          `json:"cli_session_id"`
		} `json:"agents"`
	}
	raw, err := os.ReadFile(filepath.Join(res.Dir, "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		t.Fatal(err)
	}
	for _, m := range cliMembers {
		u := status.Agents[m.id].Usage
		if status.Agents[m.id].Session == "" {
			t.Errorf("%s: no cli_session_id in status.json", m.id)
		}
		if u.Input == 0 || u.Output == 0 {
			t.Errorf("%s: usage in status.json = %+v", m.id, u)
		}
	}
	if c := status.Agents["claude"].Usage.Cost; c <= 0 {
		t.Errorf("claude_code cost = %v, want Claude Code's total_cost_usd", c)
	}
	events, err := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	voted, sessions := map[string]bool{}, map[string]map[string]bool{}
	for _, line := range strings.Split(string(events), "\n") {
		var e struct {
			Type string `json:"type"`
			Data struct {
				Agent     string `json:"agent"`
				SessionID string `json:"session_id"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Type == "vote_cast" {
			voted[e.Data.Agent] = true
		}
		if e.Type == "agent_session" {
			if sessions[e.Data.Agent] == nil {
				sessions[e.Data.Agent] = map[string]bool{}
			}
			sessions[e.Data.Agent][e.Data.SessionID] = true
		}
	}
	for _, m := range cliMembers {
		if !voted[m.id] {
			t.Errorf("no vote by %s in events", m.id)
		}
		if len(sessions[m.id]) == 0 {
			t.Errorf("no agent_session event for %s", m.id)
		}
	}
	// The final presentation continued the winner's own CLI session (P6).
	if n := len(sessions[res.Winner]); n != 1 {
		t.Errorf("winner %s ran in %d CLI sessions, want 1: %v", res.Winner, n, sessions[res.Winner])
	}
	for _, s := range keys {
		if strings.Contains(string(events), s) || strings.Contains(string(raw), s) {
			t.Error("a key reached the log")
		}
	}
}

// Interrupting a run whose CLIs are mid-call leaves no process behind: neither a CLI nor
// anything it started (found by working directory under the run's workspace root).
func TestE2E_CLIAgentsInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real CLIs")
	}
	t.Parallel()
	scripts := map[string]clitest.Script{}
	for _, m := range cliMembers {
		scripts[m.id] = clitest.Script{File: "x.txt", Content: "x", Hang: true}
	}
	cfg, brains := cliTeam(t, cliMembers, scripts, "")
	wsRoot := clitest.StateDir(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		deadline := time.Now().Add(150 * time.Second) // node start-up is slow on a busy machine
		for time.Now().Before(deadline) {
			all := true
			for _, b := range brains {
				all = all && b.Requests() > 0
			}
			if all && len(processesUnder(t, wsRoot)) > 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		cancel() // as Ctrl-C does
	}()
	res, err := Run(ctx, cfg, Options{Question: "Write x.txt.", WorkspaceRoot: wsRoot,
		Getenv: func(k string) string { return keys[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitInterrupted {
		t.Errorf("exit code %d, want %d", res.ExitCode, ExitInterrupted)
	}
	for id, b := range brains {
		if b.Requests() == 0 {
			t.Errorf("%s never reached its model: the test interrupted nothing", id)
		}
	}
	if left := processesUnder(t, wsRoot); len(left) > 0 {
		t.Errorf("processes left running: %v", left)
	}
}

// processesUnder lists the processes whose working directory is under dir.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var out []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, real+string(os.PathSeparator)) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}
