package tui

import (
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// demoNames gives the session's agents ids and models as long as the demo's, and makes
// carol's model one without a price.
func demoNames(evs []event.Event) []event.Event {
	out := make([]event.Event, len(evs))
	copy(out, evs)
	st := out[0].Payload.(event.SessionStarted)
	agents := make([]event.AgentInfo, len(st.Agents))
	copy(agents, st.Agents)
	for i := range agents {
		agents[i].Model = "scripted-" + agents[i].ID + "-researcher-long"
	}
	agents[2].Unpriced = true
	st.Agents = agents
	out[0].Payload = st
	return out
}

// TestFinal_UsageFitsAt80: with long model names the usage table drops and narrows columns
// to fit 80 cells, the cost column whole; an unpriced model's cost reads "price unknown", the
// total "≥", and the screen says why.
func TestFinal_UsageFitsAt80(t *testing.T) {
	evs := demoNames(session().events)
	end := evs[len(evs)-1]
	// carol used tokens before she died.
	s := &stream{at: end.Time.Sub(t0), events: slices.Clone(evs[:len(evs)-1])}
	s.add(0, event.UsageReported{Agent: "carol", Usage: provider.Usage{InputTokens: 900, OutputTokens: 90}})
	s.add(0, end.Payload)
	m := newModel(80, 24, s.events)
	screen := ansi.Strip(m.finalScreen(80))
	_, usage, _ := strings.Cut(screen, "\nUsage\n")
	usage, _, _ = strings.Cut(usage, "\nSession\n")
	for _, l := range strings.Split(usage, "\n") {
		if ansi.StringWidth(l) > 80 {
			t.Errorf("usage line of %d cells: %q", ansi.StringWidth(l), l)
		}
	}
	for _, want := range []string{"   cost\n", " $0.0041\n", " $0.021\n", "900      0     90         0 unknown\n", " ≥$0.025\n"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage table lacks %q:\n%s", want, usage)
		}
	}
	if note := "no price is known for scripted-carol-researcher-long: their tokens are counted, their cost is not"; !strings.Contains(strings.ReplaceAll(usage, "\n  ", " "), note) {
		t.Errorf("usage lacks the note %q:\n%s", note, usage)
	}
	if footer := screenText(m); !strings.Contains(footer, "· ≥$0.025\n") {
		t.Errorf("the footer does not say the cost is a lower bound:\n%s", footer)
	}
}

// TestColumns_KeepPreviousAnswer: an agent that starts a new turn keeps showing its latest
// answer until it streams text.
func TestColumns_KeepPreviousAnswer(t *testing.T) {
	s := midSession()
	s.add(ms, event.TurnStarted{Agent: "bob", Version: 2, Available: []string{"agent1", "agent2"}})
	s.add(ms, event.ModelCalled{Agent: "bob", Stage: provider.StageEnforcement, Attempt: 1})
	m := newModel(160, 40, s.events)
	if v := screenText(m); !strings.Contains(v, "agent2.1 (latest):") || !strings.Contains(v, "Week 1: the Tour of Go") {
		t.Errorf("bob's column went blank while he works:\n%s", v)
	}
	s.add(ms, event.TextDelta{Agent: "bob", Text: "Checking the answers again."})
	m = newModel(160, 40, s.events)
	if v := screenText(m); strings.Contains(v, "agent2.1 (latest):") || !strings.Contains(v, "Checking the answers again.") {
		t.Errorf("bob's new text does not replace his answer:\n%s", v)
	}
}

// TestApply_FatalErrorHasNoCount: a rejected key kills the agent at once; its activity says
// so instead of counting "3/3" failed turns.
func TestApply_FatalErrorHasNoCount(t *testing.T) {
	s := started(2)
	s.add(ms, event.AgentError{Agent: "alice", Message: "openai: status 401: the API key was rejected: check OPENAI_API_KEY", Consecutive: 3, Budget: 3, Fatal: true})
	m := newModel(120, 30, s.events)
	if a := m.pane("alice").activity; a != "fatal error: openai: status 401: the API key was rejected: check OPENAI_API_KEY" {
		t.Errorf("activity = %q", a)
	}
}

// TestHeader_Notices: warnings given to the view (config warnings) and those the session
// reports (a budget that cannot see a model, a server that died) show under the header.
func TestHeader_Notices(t *testing.T) {
	s := started(2)
	st := s.events[0].Payload.(event.SessionStarted)
	st.Settings.MaxCostUSD = 0.5
	st.Agents[1].Unpriced = true
	s.events[0].Payload = st
	s.add(ms, event.ToolServerStatus{Server: "everything", Status: "died", Detail: "exit status 9"})
	m := New()
	m.notices = []string{"warning: team.yaml:3:1: orchestratr: unknown top-level key"}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	m.Update(EventBatchMsg{Events: s.events})
	v := screenText(m)
	lines := strings.Split(v, "\n")
	for i, want := range []string{"! warning: team.yaml:3:1: orchestratr: unknown top-level key",
		"! max_cost_usd $0.500 cannot be enforced for agent2 bob (model claude-sonnet-4)",
		"! mcp server everything died: exit status 9"} {
		if !strings.HasPrefix(lines[2+i], want) {
			t.Errorf("line %d = %q, want %q", 3+i, lines[2+i], want)
		}
	}
	if len(lines) != 31 { // 30 lines and the final newline: the body made room
		t.Errorf("%d lines, want 30", len(lines)-1)
	}
}

// TestFooter_VotesCastIncludeStale: the second vote count counts every vote cast, stale ones
// too, so it never goes down or hides a vote.
func TestFooter_VotesCastIncludeStale(t *testing.T) {
	m := newModel(120, 30, session().events)
	// 3 accepted votes (one later invalidated) and carol's stale one.
	if v := screenText(m); !strings.Contains(v, "votes 2/4") {
		t.Errorf("footer:\n%s", v)
	}
}

// TestApply_StreamingArguments: while a model streams a long new_answer, its activity line
// says how much it has written.
func TestApply_StreamingArguments(t *testing.T) {
	s := started(2)
	s.add(ms, event.ToolCallStreaming{Agent: "bob", CallID: "c1", Tool: "new_answer", Bytes: 1200})
	m := newModel(120, 30, s.events)
	if a := m.pane("bob").activity; a != "writing new_answer… (1.2 kB)" {
		t.Errorf("activity = %q", a)
	}
	if v := screenText(m); !strings.Contains(v, "↳ writing new_answer… (1.2 kB)") {
		t.Errorf("screen:\n%s", v)
	}
}

// TestAgentScreen_ShowsEndpoint: an agent's full screen says where its requests go.
func TestAgentScreen_ShowsEndpoint(t *testing.T) {
	s := started(2)
	st := s.events[0].Payload.(event.SessionStarted)
	st.Agents[0].BaseURL = "http://127.0.0.1:4000/v1"
	s.events[0].Payload = st
	m := newModel(120, 30, s.events)
	press(m, "1")
	if v := screenText(m); !strings.Contains(v, "agent1 alice · openai gpt-5 at http://127.0.0.1:4000/v1") {
		t.Errorf("agent screen:\n%s", v)
	}
}

// TestAgentScreen_ShowsCLISession: a coding-agent CLI's full screen names its own session.
func TestAgentScreen_ShowsCLISession(t *testing.T) {
	s := started(2)
	s.add(0, event.AgentSession{Agent: "alice", SessionID: "5d0c-77"})
	m := newModel(120, 30, s.events)
	press(m, "1")
	if v := screenText(m); !strings.Contains(v, "gpt-5 · session 5d0c-77") {
		t.Errorf("agent screen:\n%s", v)
	}
}
