package engine

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// recordingTool counts its runs, noting whether each came during the final presentation.
type recordingTool struct {
	mu   sync.Mutex
	runs []string
}

func (r *recordingTool) tool(name string) tool.Tool {
	return tool.Tool{
		Spec: provider.ToolSpec{Name: name, Description: "acts on " + name, Parameters: map[string]any{"type": "object"}},
		Run: func(context.Context, string) tool.Result {
			r.mu.Lock()
			r.runs = append(r.runs, name)
			r.mu.Unlock()
			return tool.Result{Content: name + " done"}
		},
	}
}

// planner judges the planning check with verdict, tries post and read during coordination,
// answers, and posts when presenting.
func planner(verdict string, checkErr error) *fake {
	return &fake{next: func(n int, req provider.Request) step {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case req.Stage == provider.StagePlanning:
			return step{text: verdict, err: checkErr}
		case req.Stage == provider.StagePresentation && last.Role == provider.RoleUser:
			return toolCall("p1", "mcp__chat__post", `{}`)
		case req.Stage == provider.StagePresentation:
			return step{text: "Posted the announcement."}
		case len(req.Messages) == 1:
			return toolCall("c1", "mcp__chat__post", `{}`)
		case len(req.Messages) == 3:
			return toolCall("c2", "mcp__chat__read", `{}`)
		case !hasOwnAnswer(req, "Plan: post the announcement."):
			return answer("Plan: post the announcement.")
		}
		return vote("agent1", "the plan")
	}}
}

func TestRun_PlanningModeHoldsBackIrreversibleTools(t *testing.T) {
	for _, tc := range []struct {
		name     string
		verdict  string
		checkErr error
		hold     bool
		held     []string
		reason   string
	}{
		{"named tool", "IRREVERSIBLE: YES\nBLOCKED_TOOLS: post", nil, true, []string{"mcp__chat__post"}, "irreversible actions needed"},
		{"no", "IRREVERSIBLE: NO\nBLOCKED_TOOLS:", nil, false, nil, "no irreversible action needed"},
		{"unclear", "Hard to say.", nil, true, nil, "unclear"},
		{"check failed", "", errRetryable, true, nil, "the check failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTool{}
			model := planner(tc.verdict, tc.checkErr)
			a := agents(model)
			a[0].Tools = tool.Set{rec.tool("mcp__chat__post"), rec.tool("mcp__chat__read")}
			res, evs := run(t, t.Context(), Options{Agents: a, Orchestrator: config.Orchestrator{PlanningMode: true}})
			if res.ExitCode != 0 || res.FinalAnswer != "Posted the announcement." {
				t.Fatalf("result %+v", res)
			}
			d := ofType[event.PlanningDecided](evs)
			if len(d) != 1 || d[0].Agent != "a1" || d[0].HoldBack != tc.hold || !cmp.Equal(d[0].Held, tc.held) || !strings.Contains(d[0].Reason, tc.reason) {
				t.Fatalf("decision %+v", d)
			}
			// What is held back fails during coordination; the presentation's post always runs.
			want, wantRefused := []string{"mcp__chat__post", "mcp__chat__read", "mcp__chat__post"}, []string(nil)
			switch {
			case tc.hold && tc.held != nil:
				want, wantRefused = want[1:], []string{"mcp__chat__post"}
			case tc.hold:
				want, wantRefused = want[2:], []string{"mcp__chat__post", "mcp__chat__read"}
			}
			if !cmp.Equal(rec.runs, want) {
				t.Errorf("runs %v, want %v", rec.runs, want)
			}
			var refused []string
			for _, r := range ofType[event.ToolResult](evs) {
				if r.IsError {
					refused = append(refused, r.Tool)
					if !strings.Contains(r.Content, "planning mode: "+r.Tool+" is held back until the final presentation") {
						t.Errorf("refusal %q", r.Content)
					}
				}
			}
			if !cmp.Equal(refused, wantRefused) {
				t.Errorf("refused %v, want %v", refused, wantRefused)
			}
			reqs := model.requests()
			var coordination, presentation string
			for _, r := range reqs {
				switch r.Stage {
				case provider.StagePresentation:
					// A continued presentation says it in its last message, a fresh one in its system prompt.
					presentation = r.System
					for _, m := range r.Messages {
						if m.Role == provider.RoleUser {
							presentation += m.Content
						}
					}
				case provider.StagePlanning:
					if len(r.Tools) != 0 || !strings.Contains(r.Messages[0].Content, "- mcp__chat__post: acts on mcp__chat__post") {
						t.Errorf("planning check %+v", r)
					}
				default:
					coordination = r.System
				}
			}
			if strings.Contains(coordination, "PLANNING MODE") != tc.hold || strings.Contains(presentation, prompt.PlanningRelease) != tc.hold {
				t.Errorf("system prompts: coordination %q\npresentation %q", coordination, presentation)
			}
		})
	}
}

func TestRun_PlanningModeWithoutMCPToolsAsksNothing(t *testing.T) {
	model := answerThenVote("Paris.", "agent1")
	res, evs := run(t, t.Context(), Options{Agents: agents(model), Orchestrator: config.Orchestrator{PlanningMode: true}})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	if d := ofType[event.PlanningDecided](evs); len(d) != 1 || d[0].HoldBack || d[0].Agent != "" {
		t.Errorf("decision %+v", d)
	}
	for _, r := range model.requests() {
		if r.Stage == provider.StagePlanning {
			t.Error("a planning check was made with no MCP tool to hold back")
		}
	}
}

func TestPlanningVerdictIgnoresUnknownTools(t *testing.T) {
	rec := &recordingTool{}
	model := planner("IRREVERSIBLE: YES\nBLOCKED_TOOLS: send_email", nil)
	a := agents(model)
	a[0].Tools = tool.Set{rec.tool("mcp__chat__post"), rec.tool("mcp__chat__read")}
	_, evs := run(t, t.Context(), Options{Agents: a, Orchestrator: config.Orchestrator{PlanningMode: true}})
	d := ofType[event.PlanningDecided](evs)
	if len(d) != 1 || !d[0].HoldBack || d[0].Held != nil || !strings.Contains(d[0].Reason, "none of the tools named exists") {
		t.Fatalf("decision %+v", d)
	}
	if len(rec.runs) != 1 { // read and the first post are both held: only the presentation's post ran
		t.Errorf("runs %v", rec.runs)
	}
}
