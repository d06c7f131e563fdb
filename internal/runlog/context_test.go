package runlog

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// A prompt full of <tags>, and an answer, a vote and a server detail with & and <: every file
// of the log shows them as written, and context.txt is the prompt as text under role headers.
func TestRecorder_HumanFilesAreNotEscaped(t *testing.T) {
	dir := t.TempDir()
	s := started()
	s.add(ms, event.ModelCalled{Agent: "alice", Stage: provider.StageInitial, Attempt: 1, Fresh: true, System: "You are <alice>.",
		Messages: []provider.Message{{Role: provider.RoleUser, Content: "<ORIGINAL MESSAGE>\nWhat is 2 & 2?\n<END OF ORIGINAL MESSAGE>"}}})
	s.add(ms, event.ModelCalled{Agent: "alice", Stage: provider.StageInitial, Attempt: 2, Messages: []provider.Message{
		{Role: provider.RoleAssistant, Content: "Let me check.", ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "mcp__calc__add", Arguments: `{"a":2,"b":2}`}}},
		{Role: provider.RoleTool, ToolCallID: "call_1", Content: "4"},
		{Role: provider.RoleTool, ToolCallID: "call_2", Content: "unknown tool", IsError: true},
	}})
	s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "<b>4</b> & done", Version: 1})
	s.add(ms, event.VoteCast{Agent: "bob", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "2 < 3 & right", Version: 1})
	s.add(ms, event.ToolServerStatus{Server: "calc", Status: "died", Detail: "exit status 1: <oops> & more"})
	s.add(ms, event.SessionEnded{Status: event.StatusCompleted})
	if err := record(t, dir, s.events); err != nil {
		t.Fatal(err)
	}
	answers := files(t, dir)
	var ctxFile string
	for _, f := range answers {
		if strings.HasPrefix(f, "alice/") && strings.HasSuffix(f, "/context.txt") {
			ctxFile = f
		}
	}
	want := "=== system ===\nYou are <alice>.\n\n" +
		"=== user ===\n<ORIGINAL MESSAGE>\nWhat is 2 & 2?\n<END OF ORIGINAL MESSAGE>\n\n" +
		"=== assistant ===\nLet me check.\n\n[tool call mcp__calc__add, id call_1]\n{\"a\":2,\"b\":2}\n\n" +
		"=== tool result for call_1 ===\n4\n\n" +
		"=== tool result for call_2 (rejected) ===\nunknown tool\n"
	if got := readFile(t, filepath.Join(dir, ctxFile)); got != want {
		t.Errorf("context.txt =\n%s\nwant\n%s", got, want)
	}
	for _, f := range answers {
		b := readFile(t, filepath.Join(dir, f))
		for _, esc := range []string{`\u003c`, `\u003e`, `\u0026`} {
			if strings.Contains(b, esc) {
				t.Errorf("%s holds %s:\n%s", f, esc, b)
			}
		}
	}
	for _, tc := range []struct{ file, want string }{
		{"events.jsonl", "<ORIGINAL MESSAGE>"},
		{"status.json", `"detail": "exit status 1: <oops> & more"`},
		{"metadata.json", `"status": "completed"`},
	} {
		if b := readFile(t, filepath.Join(dir, tc.file)); !strings.Contains(b, tc.want) {
			t.Errorf("%s lacks %s:\n%s", tc.file, tc.want, b)
		}
	}
	var vote map[string]any
	for _, f := range answers {
		if strings.HasSuffix(f, "vote.json") {
			readJSON(t, filepath.Join(dir, f), &vote)
			if b := readFile(t, filepath.Join(dir, f)); !strings.Contains(b, `"reason": "2 < 3 & right"`) {
				t.Errorf("vote.json escapes its reason:\n%s", b)
			}
		}
	}
	if vote == nil {
		t.Fatal("no vote.json")
	}
}

// An unpriced model's cost is unknown in status.json and metadata.json; a server that died
// mid-run is named in status.json.
func TestStatusJSON_UnpricedAndDeadServer(t *testing.T) {
	s := &stream{}
	s.add(0, event.SessionStarted{Question: "q", Turn: 1, Agents: []event.AgentInfo{
		{ID: "local", Label: "agent1", Backend: "chatcompletion", Model: "my-finetune", BaseURL: "http://127.0.0.1:8000/v1", Unpriced: true},
		{ID: "gpt", Label: "agent2", Backend: "openai", Model: "gpt-5"},
		{ID: "idle", Label: "agent3", Backend: "chatcompletion", Model: "other", Unpriced: true},
	}, Settings: event.Settings{MaxCostUSD: 0.5}})
	s.add(ms, event.ToolServerStatus{Server: "everything", Status: "ready", Detail: "14 tools"})
	s.add(ms, event.UsageReported{Agent: "local", Usage: provider.Usage{InputTokens: 100, OutputTokens: 10}})
	s.add(ms, event.UsageReported{Agent: "gpt", Usage: provider.Usage{InputTokens: 100, OutputTokens: 10}, CostUSD: 0.001})
	s.add(ms, event.ToolServerStatus{Server: "everything", Status: "died", Detail: "exit status 1"})
	s.add(ms, event.ToolServerStatus{Server: "everything", Status: "stopped"})
	s.add(ms, event.ToolServerStatus{Server: event.ServerCommands, Status: "weaker confinement", Detail: "no namespaces"})
	st := fold(s.events)
	if st.CostKnown() || !st.Agent("gpt").CostKnown() || !st.Agent("idle").CostKnown() {
		t.Errorf("cost known: session %v, gpt %v, idle %v; want false, true, true (idle used nothing)",
			st.CostKnown(), st.Agent("gpt").CostKnown(), st.Agent("idle").CostKnown())
	}
	if got := st.UnpricedModels(); len(got) != 1 || got[0] != "my-finetune" {
		t.Errorf("UnpricedModels = %v", got)
	}
	var status struct {
		Agents map[string]struct {
			Usage struct {
				Known bool `json:"cost_known"`
			} `json:"usage"`
		} `json:"agents"`
		Usage struct {
			Cost  float64 `json:"cost_usd"`
			Known bool    `json:"cost_known"`
		} `json:"usage"`
		Servers map[string]struct{ Status, Detail string } `json:"mcp_servers"`
	}
	decode(t, StatusJSON(st, t0), &status)
	if status.Usage.Known || status.Usage.Cost != 0.001 || status.Agents["local"].Usage.Known || !status.Agents["gpt"].Usage.Known {
		t.Errorf("status.json usage %+v, agents %+v", status.Usage, status.Agents)
	}
	if srv := status.Servers["everything"]; srv.Status != "died" || srv.Detail != "exit status 1" || len(status.Servers) != 1 {
		t.Errorf("status.json mcp_servers = %+v", status.Servers)
	}
	var meta struct {
		Totals struct {
			Known    bool     `json:"cost_known"`
			Unpriced []string `json:"unpriced_models"`
		} `json:"totals"`
		Agents []struct {
			BaseURL string `json:"base_url"`
		} `json:"agents"`
	}
	decode(t, metadataJSON(st, Meta{}), &meta)
	if meta.Totals.Known || len(meta.Totals.Unpriced) != 1 || meta.Agents[0].BaseURL != "http://127.0.0.1:8000/v1" {
		t.Errorf("metadata.json totals %+v, agents %+v", meta.Totals, meta.Agents)
	}
}

const ms = time.Millisecond

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
}
