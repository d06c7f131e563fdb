package tui

import (
	"errors"
	"strings"
	"testing"

	"massgen/internal/event"
)

// TestFinal_WholeSession feeds a whole recorded session (answers, an invalidated vote, a stale
// vote, errors, a dead agent, a final answer) and checks the final screen.
func TestFinal_WholeSession(t *testing.T) {
	m := newModel(120, 80, session().events)
	v := screenText(m)
	for _, s := range []string{
		"done · winner agent2 (bob) with agent2.1 · completed (exit 0)",
		"Final answer · agent2 (bob) · agent2.final\n  written by the winner after reading all answers\n",
		"A four-week plan",          // the Markdown heading
		"Week 2: a CLI with cobra.", // bold markers and backticks rendered away
		`func main() { fmt.Println("hello") }`,
		"agent2 (bob) with agent2.1 won: the most votes (2 of 2 counted).",
		"Coordination ended when every live agent had voted.",
		"agent2.1  2 votes",
		"agent1 (alice): agent2 gives a week-by-week plan",
		"agent2 (bob): More complete than agent1.",
		"agent3 (carol): dead, no vote",
		"agent2 bob   claude-sonnet-4     1  1.5k      0    900       400  $0.021",
		"total                            3  2.7k    200   1.2k       400  $0.025",
		"completed, exit code 0, 0.6s",
		"log: .massgen/massgen_logs/log_20250314_150926/turn_1",
	} {
		if !strings.Contains(v, s) {
			t.Errorf("final screen lacks %q", s)
		}
	}
	if strings.Contains(v, "**Week") {
		t.Error("Markdown was not rendered")
	}
	if t.Failed() {
		t.Log("\n" + v)
	}
}

// TestFinal_ScrollsWhenLong: a long final answer scrolls in the viewport.
func TestFinal_ScrollsWhenLong(t *testing.T) {
	evs := session().events
	long := strings.Repeat("A paragraph of the final answer.\n\n", 40) + "THE LAST LINE"
	for i, e := range evs {
		if f, ok := e.Payload.(event.FinalAnswer); ok {
			f.Content = long
			evs[i].Payload = f
		}
	}
	m := newModel(80, 24, evs)
	if strings.Contains(screenText(m), "THE LAST LINE") {
		t.Fatal("the whole answer fits; the test needs a longer one")
	}
	press(m, "G")
	for range 10 {
		press(m, "up")
	}
	if !strings.Contains(screenText(m), "THE LAST LINE") {
		t.Errorf("scrolling did not reach the end of the answer:\n%s", screenText(m))
	}
}

func TestFinal_Why(t *testing.T) {
	tally := []event.Tally{{Agent: "alice", Label: "agent1", Votes: 1, Voters: []string{"bob"}}}
	cases := []struct {
		name string
		tail []event.Payload
		want []string
	}{
		{"tie", []event.Payload{
			event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1},
			event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "B", Version: 2},
			event.VoteCast{Agent: "alice", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "r", Version: 2},
			event.VoteCast{Agent: "bob", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "r", Version: 2},
			event.CoordinationEnded{Reason: event.EndConsensus, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1", Tie: true},
		}, []string{"agent1 (alice) with agent1.1 won: a tie at 1 vote, broken by agent order."}},
		{"no votes, timeout", []event.Payload{
			event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "B", Version: 1},
			event.CoordinationEnded{Reason: event.EndTimeout, Winner: "bob", WinnerLabel: "agent2", AnswerLabel: "agent2.1"},
		}, []string{"no vote counted, so the first agent with an answer wins", "timed out"}},
		{"interrupted", []event.Payload{
			event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1},
			event.VoteCast{Agent: "bob", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "r", Version: 1},
			event.CoordinationEnded{Reason: event.EndInterrupted, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1", Tally: tally},
		}, []string{"the most votes (1 of 1 counted)", "interrupted"}},
		{"all dead", []event.Payload{
			event.AgentDead{Agent: "alice", Reason: "x"}, event.AgentDead{Agent: "bob", Reason: "x"},
			event.CoordinationEnded{Reason: event.EndAllDead},
		}, []string{"No agent produced an answer", "Every agent failed too often"}},
		{"fallback", []event.Payload{
			event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1},
			event.CoordinationEnded{Reason: event.EndBudget, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"},
			event.FinalAnswer{Agent: "alice", Label: "agent1.final", Content: "A", Mode: "regenerate", Fallback: true},
		}, []string{"cost budget", "the stored answer was used"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := started(2)
			for _, p := range c.tail {
				s.add(ms, p)
			}
			s.add(ms, event.SessionEnded{Status: event.StatusCompleted})
			m := newModel(100, 60, s.events)
			why := m.why()
			for _, w := range c.want {
				if !strings.Contains(why, w) {
					t.Errorf("why = %q, lacks %q", why, w)
				}
			}
			if !strings.Contains(screenText(m), "Winner") {
				t.Error("final screen lacks the Winner section")
			}
		})
	}
}

func TestMarkdown_RendersAndCaches(t *testing.T) {
	m := New()
	calls := 0
	m.renderMD = func(md string, w int) (string, error) {
		calls++
		return renderMarkdown(md, w)
	}
	out := m.markdown("# Title\n\n**body**", 40)
	if !strings.Contains(out, "Title") || !strings.Contains(out, "body") || strings.Contains(out, "**") {
		t.Errorf("markdown = %q", out)
	}
	if again := m.markdown("# Title\n\n**body**", 40); again != out || calls != 1 {
		t.Errorf("second rendering: same %v, renderings %d", again == out, calls)
	}
}

func TestMarkdown_FallsBackToPlainText(t *testing.T) {
	m := New()
	m.renderMD = func(string, int) (string, error) { return "", errors.New("broken") }
	out := m.markdown("# Title\n\n**body** \x1b[31mred", 40)
	if out != "# Title\n\n**body** red\n" {
		t.Errorf("fallback = %q, want the plain, sanitised text", out)
	}
}
