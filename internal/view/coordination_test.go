package view

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
)

const longPersona = "You are a researcher who checks every claim against primary sources before you accept it, " +
	"and you say plainly when the evidence is thin, which sources disagree, and what would settle the question."

// coordinated is a session with MassGen v0.1.9x coordination settings: personas (one a
// built-in fallback), a round that runs out of time and one cut off, a deferred vote, waits
// (one repeated), skip voting's all_answered end and a presenter note.
func coordinated() []event.Event {
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	ps := []event.Payload{
		event.SessionStarted{Question: "Q?", Turn: 1, Agents: []event.AgentInfo{
			{ID: "researcher", Label: "agent1", Backend: "scripted", Model: "m"},
			{ID: "critic", Label: "agent2", Backend: "scripted", Model: "m"},
			{ID: "agent3", Label: "agent3", Backend: "scripted", Model: "m"},
		}},
		event.PersonasGenerated{Agent: "researcher", Mode: "perspective", Personas: []event.Persona{
			{Agent: "researcher", Label: "agent1", Text: longPersona},
			{Agent: "critic", Label: "agent2", Text: "You look for\nwhat is missing."},
			{Agent: "agent3", Label: "agent3", Text: "You favour the practical.", Fallback: true},
		}, Warning: "the persona reply had none for agent3: they got a built-in persona"},
		event.TurnStarted{Agent: "critic", Fresh: true},
		event.TextDelta{Agent: "critic", Text: "Thinking it over"},
		event.RoundTimeout{Agent: "critic", Round: 2, Phase: event.RoundSoft, LimitSeconds: 60, GraceSeconds: 120, ElapsedSeconds: 61.2},
		event.EnforcementSent{Agent: "critic", Message: "Time is up for this round: ..."},
		event.EnforcementSent{Agent: "critic", Message: "Call new_answer or vote."},
		event.VoteDeferred{Agent: "researcher", TargetLabel: "agent1", Reason: "mine", Waiting: []string{"agent2", "agent3"}},
		event.AgentWaiting{Agent: "researcher", Reason: "voting opens once every agent has answered; waiting for agent2, agent3"},
		event.AgentWaiting{Agent: "researcher", Reason: "voting opens once every agent has answered; waiting for agent2, agent3"},
		event.VoteDeferred{Agent: "agent3", TargetLabel: "agent1", Reason: "ok", Waiting: []string{"agent2"}},
		event.AgentWaiting{Agent: "researcher", Reason: "voting opens once every agent has answered; waiting for agent2"},
		event.RoundTimeout{Agent: "critic", Round: 2, Phase: event.RoundCut, LimitSeconds: 60, GraceSeconds: 120, ElapsedSeconds: 180.4},
		event.AnswerSubmitted{Agent: "critic", Label: "agent2.1", Content: "B", Version: 3},
		event.CoordinationEnded{Reason: event.EndAllAnswered, Winner: "researcher", WinnerLabel: "agent1", AnswerLabel: "agent1.1",
			Tally: []event.Tally{{Agent: "researcher", Label: "agent1"}, {Agent: "critic", Label: "agent2"}}},
		event.FinalStarted{Agent: "researcher", Mode: "synthesize", Note: `presenter_agent "zed" is not one of the agents, so the winner researcher presents`},
		event.FinalAnswer{Agent: "researcher", Label: "agent1.final", Content: "Merged.", Mode: "synthesize"},
		event.SessionEnded{Status: event.StatusCompleted, DurationSeconds: 1},
	}
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.Event{Seq: int64(i + 1), Time: t0.Add(time.Duration(i) * time.Second), Payload: p}
	}
	return evs
}

func TestPlain_CoordinationSettings_Golden(t *testing.T) {
	var b bytes.Buffer
	p := NewPlain(&b)
	for _, e := range coordinated() {
		p.Handle(e)
	}
	golden(t, "plain_coordination.golden", b.Bytes())
	out := b.String()
	// The warning comes before the personas it explains.
	if w, first := strings.Index(out, "personas: warning:"), strings.Index(out, "personas (perspective):"); w < 0 || w > first {
		t.Errorf("the personas' warning is not printed before them:\n%s", out)
	}
	for _, want := range []string{
		"personas (perspective): agent1 researcher: You are a researcher",
		"personas (perspective): agent2 critic: You look for what is missing.",
		"personas (perspective): agent3 (built-in): You favour the practical.",
		"personas: warning: the persona reply had none for agent3",
		"agent2 critic: round 2 time is up after 60s; told to submit",
		"agent2 critic: round 2 cut after 180s",
		"agent1 researcher: vote for agent1 held back until agent2, agent3 answer",
		"agent3: vote for agent1 held back until agent2 answers",
		"agent1 researcher: waiting: voting opens once every agent has answered; waiting for agent2\n",
		"winner: agent1 (agent1.1), the first answer in agent order (no vote: orchestrator.skip_voting)",
		`final answer by agent1 researcher (merged from all answers; presenter_agent "zed" is not one of the agents, so the winner researcher presents):`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("plain output lacks %q", want)
		}
	}
	if n := strings.Count(out, "waiting: voting opens once every agent has answered; waiting for agent2, agent3"); n != 1 {
		t.Errorf("the same wait is told %d times, want once", n)
	}
	// The time-up note is an EnforcementSent, but not the usual reminder; the next one is.
	if n := strings.Count(out, "reminded to vote or answer"); n != 1 {
		t.Errorf("%d reminder lines, want 1 (the time-up note is not one)", n)
	}
	if strings.Contains(out, "0 vote(s)") {
		t.Errorf("skip voting prints a tally of zeros:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "personas (") && len([]rune(l)) > 180 {
			t.Errorf("a persona line is not clipped: %d runes", len([]rune(l)))
		}
	}
}

// A presenter other than the winner is named with the winner it presents for.
func TestPlain_FinalLineSaysHowTheAnswerIsMade(t *testing.T) {
	for _, tc := range []struct {
		started event.FinalStarted
		want    string
	}{
		{event.FinalStarted{Agent: "a", Mode: "regenerate"}, "final answer by agent1 a (written by the winner after reading all answers):"},
		{event.FinalStarted{Agent: "a", Mode: "verbatim"}, "final answer by agent1 a (the winner's answer as is):"},
		{event.FinalStarted{Agent: "b", Mode: "regenerate", Winner: "a"},
			"final answer by agent2 b for the winner agent1 a (written by the presenter after reading all answers):"},
	} {
		var b bytes.Buffer
		p := NewPlain(&b)
		p.Handle(event.Event{Payload: event.SessionStarted{Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}, {ID: "b", Label: "agent2"}}}})
		p.Handle(event.Event{Payload: tc.started})
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%+v: output lacks %q:\n%s", tc.started, tc.want, b.String())
		}
	}
}

// The automation view stays MassGen's KEY: value lines whatever the coordination settings
// add to the stream.
func TestAutomation_CoordinationSettingsAddNoStrayLines(t *testing.T) {
	var b bytes.Buffer
	a := NewAutomation(&b)
	for _, e := range coordinated() {
		a.Handle(e)
	}
	key := regexp.MustCompile(`^[A-Z_]+: `)
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if !key.MatchString(l) && l != "[Coordination in progress - monitor status.json for real-time updates]" {
			t.Errorf("automation line without a key: %q", l)
		}
	}
}
