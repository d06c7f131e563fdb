package engine

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// fakeWorkspace counts the engine's calls.
type fakeWorkspace struct {
	mu                        sync.Mutex
	snapshots, grants, revoke int
}

func (w *fakeWorkspace) Snapshot() error                                  { w.mu.Lock(); w.snapshots++; w.mu.Unlock(); return nil }
func (w *fakeWorkspace) GrantFinal()                                      { w.mu.Lock(); w.grants++; w.mu.Unlock() }
func (w *fakeWorkspace) RevokeFinal()                                     { w.mu.Lock(); w.revoke++; w.mu.Unlock() }
func (w *fakeWorkspace) ShareText(s string) string                        { return s }
func (w *fakeWorkspace) ReadFile(string, int, bool) (string, bool, error) { return "", false, nil }

func lookupTool(calls *int, mu *sync.Mutex) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: "mcp__kb__lookup", Description: "look up a fact", Parameters: map[string]any{"type": "object"}},
		Run: func(ctx context.Context, args string) tool.Result {
			mu.Lock()
			*calls++
			mu.Unlock()
			var a struct{ Q string }
			if json.Unmarshal([]byte(args), &a) != nil {
				return tool.Errorf("send {\"q\": \"...\"}")
			}
			tool.Output(ctx)("looking up " + a.Q + "\n")
			return tool.Result{Content: "Paris is the capital of France."}
		},
	}
}

func toolCall(id, name, args string) step {
	return step{calls: []provider.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

func TestRun_ToolLoop(t *testing.T) {
	var mu sync.Mutex
	n := 0
	ws := &fakeWorkspace{}
	model := &fake{next: func(k int, req provider.Request) step {
		last := req.Messages[len(req.Messages)-1]
		if req.Stage == provider.StagePresentation {
			if last.Role == provider.RoleUser {
				return toolCall("p1", "mcp__kb__lookup", `{"q":"final check"}`)
			}
			return step{text: "Paris (checked)."}
		}
		switch {
		case k <= 4: // four tool rounds, then a bad call, then the answer: no attempt is used up by tools
			return toolCall("t"+string(rune('0'+k)), "mcp__kb__lookup", `{"q":"capital"}`)
		case k == 5:
			return toolCall("t5", "no_such_tool", `{}`)
		case !hasOwnAnswer(req, "Paris."):
			return answer("Paris.")
		}
		return vote("agent1", "checked")
	}}
	a := agents(model)
	a[0].Tools = tool.Set{lookupTool(&n, &mu)}
	a[0].Workspace = ws
	res, evs := run(t, t.Context(), Options{Agents: a})
	if res.ExitCode != 0 || res.FinalAnswer != "Paris (checked)." {
		t.Fatalf("result %+v", res)
	}
	if n != 5 {
		t.Errorf("tool ran %d times, want 4 in coordination + 1 in the presentation", n)
	}
	results := ofType[event.ToolResult](evs)
	if len(results) != 6 || !results[4].IsError || !strings.Contains(results[4].Content, `unknown tool "no_such_tool"`) {
		t.Fatalf("tool results: %+v", results)
	}
	if out := ofType[event.ToolOutput](evs); len(out) != 5 || out[0].Text != "looking up capital\n" {
		t.Errorf("tool output events: %+v", out)
	}
	// The tool's result reached the model as the result of its call; the tools come before
	// the workflow tools in every request (stable prefix first).
	reqs := model.requests()
	second := reqs[1]
	if m := second.Messages[len(second.Messages)-1]; m.Role != provider.RoleTool || m.ToolCallID != "t1" || m.Content != "Paris is the capital of France." {
		t.Errorf("second request ends with %+v", m)
	}
	if second.Tools[0].Name != "mcp__kb__lookup" || second.Tools[len(second.Tools)-1].Name != "vote" {
		t.Errorf("tool order: %v", second.Tools)
	}
	if ws.snapshots != 1 || ws.grants != 1 || ws.revoke != 1 {
		t.Errorf("workspace: %d snapshots, %d grants, %d revokes", ws.snapshots, ws.grants, ws.revoke)
	}
}

func TestRun_EndlessToolCallsFailTheTurn(t *testing.T) {
	var mu sync.Mutex
	n := 0
	loop := &fake{next: func(k int, req provider.Request) step {
		return toolCall("x", "mcp__kb__lookup", `{"q":"again"}`)
	}}
	a := agents(answerThenVote("Paris.", "agent1"), loop)
	a[1].Tools = tool.Set{lookupTool(&n, &mu)}
	a[1].Workspace = nil
	res, evs := run(t, t.Context(), Options{Agents: a})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v", res)
	}
	errs := ofType[event.AgentError](evs)
	if len(errs) == 0 || !strings.Contains(errs[0].Message, "rounds of tool calls") {
		t.Fatalf("errors: %+v", errs)
	}
}

// What a tool paid a provider (a generated video) is the agent's cost, in its round, and
// counts towards the session's total; a spend the tool could not price makes the total
// unknown rather than passing for free.
func TestRun_ToolSpendingIsCounted(t *testing.T) {
	for _, tc := range []struct {
		name      string
		spent     provider.Usage
		wantCost  float64
		wantKnown bool
	}{
		{"priced", provider.Usage{CostUSD: 0.4, InputTokens: 999}, 0.4, true},
		{"unpriced", provider.Usage{Unknown: true}, 0, false},
		{"nothing", provider.Usage{}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			maker := tool.Tool{Spec: provider.ToolSpec{Name: "custom_tool__generate_media", Parameters: map[string]any{"type": "object"}},
				Run: func(context.Context, string) tool.Result {
					return tool.Result{Content: `{"success": true}`, Spent: tc.spent}
				}}
			model := &fake{next: func(k int, req provider.Request) step {
				switch {
				case req.Stage == provider.StagePresentation:
					return step{text: "Done."}
				case k == 1:
					return toolCall("v1", "custom_tool__generate_media", `{}`)
				case !hasOwnAnswer(req, "Made it."):
					return answer("Made it.")
				}
				return vote("agent1", "done")
			}}
			a := agents(model)
			a[0].Tools = tool.Set{maker}
			res, evs := run(t, t.Context(), Options{Agents: a})
			if res.ExitCode != 0 {
				t.Fatalf("result %+v", res)
			}
			var tools []event.UsageReported
			for _, u := range ofType[event.UsageReported](evs) {
				if u.Usage.InputTokens == 0 && u.Usage.OutputTokens == 0 {
					tools = append(tools, u)
				}
			}
			if tc.spent == (provider.Usage{}) {
				if len(tools) != 0 {
					t.Errorf("a tool that spent nothing reported %+v", tools)
				}
				return
			}
			if len(tools) != 1 || tools[0].Agent != "a1" || tools[0].CostUSD != tc.wantCost || tools[0].Round != 1 || tools[0].Usage.InputTokens != 0 {
				t.Fatalf("the tool's usage events: %+v", tools)
			}
			if res.CostUSD < tc.wantCost || res.Cost().Known != tc.wantKnown {
				t.Errorf("session cost %v (known %v), want at least %v (known %v)", res.CostUSD, res.Cost().Known, tc.wantCost, tc.wantKnown)
			}
		})
	}
}
