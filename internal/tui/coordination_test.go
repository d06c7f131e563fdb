package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"massgen/internal/event"
)

// coordinated is a session run with MassGen v0.1.9x coordination settings, up to the point
// where alice waits with a deferred vote, bob was told his round's time is up and carol's
// round was cut off.
func coordinated() *stream {
	s := started(3)
	s.add(ms, event.PersonasGenerated{Agent: "alice", Mode: "perspective", Personas: []event.Persona{
		{Agent: "alice", Label: "agent1", Text: "You are a\nresearcher who checks every claim against primary sources before accepting it."},
		{Agent: "bob", Label: "agent2", Text: "You are a critic who looks for what is missing."},
		{Agent: "carol", Label: "agent3", Text: "You favour the practical.", Fallback: true},
	}, Warning: "the persona reply had none for agent3: they got a built-in persona"}).
			add(ms, event.TurnStarted{Agent: "alice", Fresh: true}).
			add(ms, event.TurnStarted{Agent: "bob", Fresh: true}).
			add(ms, event.TurnStarted{Agent: "carol", Fresh: true}).
			add(ms, call("alice")).add(ms, call("bob")).add(ms, call("carol")).
			add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
			add(ms, event.TurnStarted{Agent: "alice", Version: 1, Available: []string{"agent1"}}).
			add(ms, call("alice")).
			add(ms, event.VoteDeferred{Agent: "alice", TargetLabel: "agent1", Reason: "mine", Waiting: []string{"agent2", "agent3"}}).
			add(ms, event.AgentWaiting{Agent: "alice", Reason: "voting opens once every agent has answered; waiting for agent2, agent3"}).
			add(ms, event.RoundTimeout{Agent: "bob", Round: 1, Phase: event.RoundSoft, LimitSeconds: 60, GraceSeconds: 120, ElapsedSeconds: 61}).
			add(ms, event.EnforcementSent{Agent: "bob", Message: "Time is up for your first round: ..."}).
			add(ms, event.RoundTimeout{Agent: "carol", Round: 1, Phase: event.RoundCut, LimitSeconds: 60, GraceSeconds: 120, ElapsedSeconds: 181})
	return s
}

func TestApply_CoordinationSettings(t *testing.T) {
	m := newModel(160, 48, coordinated().events)
	want := []struct{ activity, badge string }{
		{"waiting: voting opens once every agent has answered; waiting for agent2, agent3", "waiting for others"},
		{"round 1 time is up after 60s; told to submit", "thinking"},
		{"round 1 cut after 180s", "thinking"},
	}
	for i, w := range want {
		pn := m.panes[i]
		if pn.activity != w.activity {
			t.Errorf("%s activity = %q, want %q", pn.a.Label, pn.activity, w.activity)
		}
		if b := m.badge(pn); b.text != w.badge {
			t.Errorf("%s badge = %q, want %q", pn.a.Label, b.text, w.badge)
		}
	}
	if got := m.panes[2].persona; got != "(built-in) You favour the practical." {
		t.Errorf("carol's persona = %q", got)
	}
	v := screenText(m)
	for _, s := range []string{
		"persona: You are a researcher who checks", // folded onto one line
		"persona: You are a critic",
		"! personas: the persona reply had none for agent3",
		"↳ round 1 time is up after 60s; told to submit",
	} {
		if !strings.Contains(v, s) {
			t.Errorf("view lacks %q", s)
		}
	}
	// The deferred vote shows until the wait replaces it.
	m = New()
	evs := coordinated().events
	for _, e := range evs {
		m.Apply(e)
		if _, ok := e.Payload.(event.VoteDeferred); ok {
			break
		}
	}
	if got := m.pane("alice").activity; got != "vote for agent1 held back until agent2, agent3 answer" {
		t.Errorf("alice activity after the deferred vote = %q", got)
	}
	// A new turn ends the wait.
	m = newModel(160, 48, evs)
	m.Apply(event.Event{Seq: 99, Time: t0, Payload: event.TurnStarted{Agent: "alice", Version: 3}})
	if b := m.badge(m.pane("alice")); b.text != "thinking" {
		t.Errorf("alice badge after her next turn started = %q", b.text)
	}
	// The presentation ends every wait, and says how the answer is made.
	m = newModel(160, 48, evs)
	m.Apply(event.Event{Seq: 99, Time: t0, Payload: event.CoordinationEnded{Reason: event.EndConsensus, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"}})
	m.Apply(event.Event{Seq: 100, Time: t0, Payload: event.FinalStarted{Agent: "alice", Mode: "synthesize"}})
	if pn := m.pane("alice"); pn.activity != "presenting: merged from all answers" || m.badge(pn).text != "presenting" {
		t.Errorf("presenter: activity %q, badge %q", pn.activity, m.badge(pn).text)
	}
	// presenter_agent presents for the winner.
	m = newModel(160, 48, evs)
	m.Apply(event.Event{Seq: 99, Time: t0, Payload: event.CoordinationEnded{Reason: event.EndConsensus, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"}})
	m.Apply(event.Event{Seq: 100, Time: t0, Payload: event.FinalStarted{Agent: "bob", Mode: "regenerate", Winner: "alice"}})
	if pn := m.pane("bob"); pn.activity != "presenting: written by the presenter after reading all answers" || m.badge(pn).text != "presenting" {
		t.Errorf("presenter_agent: activity %q, badge %q", pn.activity, m.badge(pn).text)
	}
	if t.Failed() {
		t.Log("\n" + v)
	}
}

// The persona shows in full on the agent's own screen.
func TestAgentScreen_ShowsPersona(t *testing.T) {
	m := newModel(100, 30, coordinated().events)
	press(m, "1")
	if v := screenText(m); !strings.Contains(v, "persona: You are a researcher who checks every claim against primary sources") {
		t.Errorf("agent screen lacks the persona:\n%s", v)
	}
}

// skip_voting: the final screen says there was no vote and which rule chose the winner, and
// how the final answer was made, in words.
func TestFinal_AllAnsweredAndStrategies(t *testing.T) {
	end := func(mode string, fallback bool, tail ...event.Payload) *stream {
		s := started(3)
		s.add(ms, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "B", Version: 1}).
			add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 2})
		for _, p := range tail {
			s.add(ms, p)
		}
		return s.add(ms, event.FinalAnswer{Agent: "alice", Label: "agent1.final", Content: "Final.", Mode: mode, Fallback: fallback}).
			add(ms, event.SessionEnded{Status: event.StatusCompleted})
	}
	allAnswered := event.CoordinationEnded{Reason: event.EndAllAnswered, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"}
	cases := []struct {
		name string
		s    *stream
		want []string
	}{
		{"all answered, synthesize", end("synthesize", false,
			event.AnswerSubmitted{Agent: "carol", Label: "agent3.1", Content: "C", Version: 3}, allAnswered,
			event.FinalStarted{Agent: "alice", Mode: "synthesize"}),
			[]string{"No vote (orchestrator.skip_voting): every live agent answered once, so agent1 (alice) with agent1.1, the first answer in agent order, won.",
				"agent1.final\n  merged from all answers\n"}},
		{"verbatim", end("verbatim", false, allAnswered, event.FinalStarted{Agent: "alice", Mode: "verbatim"}),
			[]string{"agent1.final\n  the winner's answer as is\n"}},
		{"fallback", end("regenerate", true, allAnswered, event.FinalStarted{Agent: "alice", Mode: "regenerate"}),
			[]string{"agent1.final\n  the stored answer as is\n"}},
		{"presenter note", end("regenerate", false, allAnswered,
			event.FinalStarted{Agent: "alice", Mode: "regenerate", Note: `presenter_agent "zed" is not one of the agents, so the winner alice presents`}),
			[]string{`Note: presenter_agent "zed" is not one of the agents, so the winner alice presents.`,
				`! presenter_agent "zed" is not one of the agents`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(200, 60, c.s.events)
			v := screenText(m) + m.why() // the why, unwrapped
			for _, w := range c.want {
				if !strings.Contains(v, w) {
					t.Errorf("final screen lacks %q:\n%s", w, v)
				}
			}
		})
	}
}

func TestFinal_GlobalCapAndPresenter(t *testing.T) {
	s := started(3)
	st := s.events[0].Payload.(event.SessionStarted)
	st.Settings.SkipVoting, st.Settings.MaxNewAnswersGlobal = true, 2
	s.events[0].Payload = st
	s.add(ms, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "B", Version: 1}).
		add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 2}).
		add(ms, event.CoordinationEnded{Reason: event.EndAllAnswered, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"}).
		add(ms, event.FinalStarted{Agent: "carol", Mode: "regenerate", Winner: "alice"}).
		add(ms, event.FinalAnswer{Agent: "carol", Label: "agent3.final", Content: "Final.", Mode: "regenerate"}).
		add(ms, event.SessionEnded{Status: event.StatusCompleted})
	m := newModel(200, 60, s.events)
	v := screenText(m) + m.why()
	for _, w := range []string{
		"No vote (orchestrator.skip_voting): max_new_answers_global (2) allowed no more answers, so agent1 (alice) with agent1.1",
		"agent3 (carol) presented it, as orchestrator.presenter_agent asks.",
		"agent3.final\n  written by the presenter after reading all answers\n",
	} {
		if !strings.Contains(v, w) {
			t.Errorf("final screen lacks %q:\n%s", w, v)
		}
	}
}

// An interactive turn's q goes back to the prompt, and the footer and help say so; a
// one-shot run's quits.
func TestFooter_EndKeyHelp(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, "q quit"},
		{Options{EndKeyHelp: "back to the prompt"}, "q back to the prompt"},
	} {
		m := New()
		m.configure(tc.opts)
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		m.Update(EventBatchMsg{Events: session().events})
		v := screenText(m)
		if !strings.Contains(v, tc.want+"\n") {
			t.Errorf("%+v: footer lacks %q:\n%s", tc.opts, tc.want, v)
		}
		press(m, "?")
		if help := screenText(m); !strings.Contains(help, "after the end: "+strings.TrimPrefix(tc.want, "q ")) {
			t.Errorf("%+v: help does not say what q does after the end:\n%s", tc.opts, help)
		}
	}
}
