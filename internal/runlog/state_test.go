package runlog

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// statuses returns every agent's status in config order.
func statuses(s *readmodel.State) []readmodel.Status {
	var out []readmodel.Status
	for _, a := range s.Agents {
		out = append(out, a.Status)
	}
	return out
}

func TestState_Apply(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		build func(s *stream)
		check func(t *testing.T, s *readmodel.State)
	}{{
		name:  "session start",
		build: func(*stream) {},
		check: func(t *testing.T, s *readmodel.State) {
			if s.Question == "" || s.SessionID != "log_20250314_150926_535897" || !s.StartTime.Equal(t0) {
				t.Errorf("session fields = %q %q %v", s.Question, s.SessionID, s.StartTime)
			}
			if diff := cmp.Diff([]readmodel.Status{readmodel.StatusWaiting, readmodel.StatusWaiting, readmodel.StatusWaiting}, statuses(s)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if s.Phase != readmodel.PhaseInitialAnswer || s.ActiveAgent() != nil || s.CompletionPercentage() != 0 {
				t.Errorf("phase %s active %v completion %d", s.Phase, s.ActiveAgent(), s.CompletionPercentage())
			}
		},
	}, {
		name: "answers",
		build: func(s *stream) {
			s.add(ms, event.TurnStarted{Agent: "alice", Fresh: true}).
				add(ms, event.TurnStarted{Agent: "bob", Fresh: true}).
				add(ms, event.TextDelta{Agent: "bob", Text: "draft"}).
				add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
				add(ms, event.TurnStarted{Agent: "alice", Version: 1, Fresh: true}).
				add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.2", Content: "A2", Version: 2})
		},
		check: func(t *testing.T, s *readmodel.State) {
			a, b := s.Agent("alice"), s.Agent("bob")
			if a.Status != readmodel.StatusAnswered || len(a.Answers) != 2 || a.LatestAnswerLabel() != "agent1.2" || a.Answers[1].Version != 2 {
				t.Errorf("alice = %+v", a)
			}
			if b.Status != readmodel.StatusStreaming || b.Stream() != "draft" || s.ActiveAgent() != b {
				t.Errorf("bob status %s stream %q, active %v", b.Status, b.Stream(), s.ActiveAgent())
			}
			if s.Version != 2 || s.Totals.Answers != 2 || s.Phase != readmodel.PhaseInitialAnswer {
				t.Errorf("version %d answers %d phase %s", s.Version, s.Totals.Answers, s.Phase)
			}
		},
	}, {
		name: "a new answer invalidates votes",
		build: func(s *stream) {
			s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
				add(ms, event.VoteCast{Agent: "alice", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 1}).
				add(ms, event.VoteCast{Agent: "carol", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 1})
		},
		check: func(t *testing.T, s *readmodel.State) {
			if diff := cmp.Diff([]readmodel.Count{{Agent: "alice", AnswerLabel: "agent1.1", Votes: 2, Voters: []string{"alice", "carol"}}}, s.Tally()); diff != "" {
				t.Errorf("tally before (-want +got):\n%s", diff)
			}
			if got := s.CompletionPercentage(); got != 66 {
				t.Errorf("completion = %d, want 66", got)
			}
			s.Apply(event.Event{Seq: 99, Time: t0.Add(time.Second), Payload: event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "B", Version: 2, Invalidated: []string{"alice", "carol"}}})
			if len(s.Tally()) != 0 || s.CompletionPercentage() != 0 {
				t.Errorf("after invalidation: tally %v completion %d", s.Tally(), s.CompletionPercentage())
			}
			if diff := cmp.Diff([]readmodel.Status{readmodel.StatusRestarting, readmodel.StatusAnswered, readmodel.StatusRestarting}, statuses(s)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			a := s.Agent("alice")
			if a.Vote != nil || a.Restarts != 1 || a.VotesCast != 1 || s.Agent("bob").CausedRestarts != 1 {
				t.Errorf("alice vote %v restarts %d votes %d, bob caused %d", a.Vote, a.Restarts, a.VotesCast, s.Agent("bob").CausedRestarts)
			}
			if s.Phase != readmodel.PhaseEnforcement || s.Totals.Votes != 2 || s.Totals.Invalidations != 2 {
				t.Errorf("phase %s votes %d invalidations %d", s.Phase, s.Totals.Votes, s.Totals.Invalidations)
			}
		},
	}, {
		name: "a stale vote is ignored",
		build: func(s *stream) {
			s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
				add(ms, event.TurnStarted{Agent: "bob", Version: 1, Fresh: true}).
				add(ms, event.AnswerSubmitted{Agent: "carol", Label: "agent3.1", Content: "C", Version: 2}).
				add(ms, event.VoteIgnored{Agent: "bob", TargetLabel: "agent1", SeenVersion: 1, CurrentVersion: 2})
		},
		check: func(t *testing.T, s *readmodel.State) {
			b := s.Agent("bob")
			if b.Status != readmodel.StatusRestarting || b.VotesIgnored != 1 || b.VotesCast != 0 || b.Vote != nil || b.Restarts != 1 {
				t.Errorf("bob = %+v", b)
			}
			if len(s.Tally()) != 0 || s.Totals.Votes != 0 || s.Totals.IgnoredVotes != 1 || s.Phase != readmodel.PhaseInitialAnswer {
				t.Errorf("tally %v totals %+v phase %s", s.Tally(), s.Totals, s.Phase)
			}
		},
	}, {
		name: "errors and recovery",
		build: func(s *stream) {
			s.add(ms, event.TurnStarted{Agent: "alice", Fresh: true}).
				add(ms, event.AgentError{Agent: "alice", Message: "boom", Consecutive: 1, Budget: 3}).
				add(ms, event.AgentError{Agent: "bob", Message: "slow", Consecutive: 1, Budget: 3, Timeout: true}).
				add(ms, event.TurnStarted{Agent: "alice", Fresh: true})
		},
		check: func(t *testing.T, s *readmodel.State) {
			a, b := s.Agent("alice"), s.Agent("bob")
			if a.Status != readmodel.StatusStreaming || a.LastError == nil || a.LastError.Message != "boom" || a.Errors != 1 {
				t.Errorf("alice = %+v", a)
			}
			if b.Status != readmodel.StatusTimeout || b.LastError.Type != "timeout" || !b.LastError.Time.Equal(t0.Add(3*ms)) {
				t.Errorf("bob = %+v %+v", b, b.LastError)
			}
		},
	}, {
		name: "a dead agent stays dead and leaves the count",
		build: func(s *stream) {
			s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
				add(ms, event.AgentDead{Agent: "carol", Reason: "budget spent"}).
				add(ms, event.TurnStarted{Agent: "carol", Version: 1}).
				add(ms, event.VoteCast{Agent: "alice", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 1})
		},
		check: func(t *testing.T, s *readmodel.State) {
			c := s.Agent("carol")
			if c.Status != readmodel.StatusDead || !c.Dead || c.LastError.Type != "dead" || s.Live() != 2 {
				t.Errorf("carol = %+v, live %d", c, s.Live())
			}
			if got := s.CompletionPercentage(); got != 50 {
				t.Errorf("completion = %d, want 50 (1 of 2 live agents voted)", got)
			}
		},
	}, {
		name: "timeout end",
		build: func(s *stream) {
			s.add(ms, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
				add(ms, event.VoteCast{Agent: "bob", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 1}).
				add(ms, event.TurnStarted{Agent: "carol", Version: 1}).
				add(ms, event.CoordinationEnded{Reason: event.EndTimeout, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"}).
				add(ms, event.FinalAnswer{Agent: "alice", Label: "agent1.final", Content: "A", Mode: "verbatim"}).
				add(ms, event.SessionEnded{Status: event.StatusTimeout, ExitCode: 3})
		},
		check: func(t *testing.T, s *readmodel.State) {
			if diff := cmp.Diff([]readmodel.Status{readmodel.StatusCompleted, readmodel.StatusCompleted, readmodel.StatusTimeout}, statuses(s)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if s.EndReason != event.EndTimeout || s.ExitCode != 3 || s.SessionStatus != event.StatusTimeout || s.Phase != readmodel.PhaseDone {
				t.Errorf("end %s exit %d status %s phase %s", s.EndReason, s.ExitCode, s.SessionStatus, s.Phase)
			}
			if s.CompletionPercentage() != 100 || s.Final == nil || s.Final.Content != "A" {
				t.Errorf("completion %d final %+v", s.CompletionPercentage(), s.Final)
			}
		},
	}, {
		name: "final presentation",
		build: func(s *stream) {
			s.add(ms, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "B", Version: 1}).
				add(ms, event.VoteCast{Agent: "alice", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Version: 1}).
				add(ms, event.VoteCast{Agent: "bob", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Version: 1}).
				add(ms, event.VoteCast{Agent: "carol", Target: "bob", TargetLabel: "agent2", AnswerLabel: "agent2.1", Version: 1}).
				add(ms, event.CoordinationEnded{Reason: event.EndConsensus, Winner: "bob", WinnerLabel: "agent2", AnswerLabel: "agent2.1"}).
				add(ms, event.FinalStarted{Agent: "bob", Mode: "regenerate"}).
				add(ms, event.TextDelta{Agent: "bob", Text: "Final ", Presentation: true}).
				add(ms, event.TextDelta{Agent: "bob", Text: "text", Presentation: true})
		},
		check: func(t *testing.T, s *readmodel.State) {
			b := s.Agent("bob")
			if s.Phase != readmodel.PhasePresentation || !s.FinalPresentation || s.ActiveAgent() != b || b.Presentation != "Final text" || b.Stream() != "" {
				t.Errorf("phase %s active %v presentation %q stream %q", s.Phase, s.ActiveAgent(), b.Presentation, b.Stream())
			}
			if diff := cmp.Diff([]readmodel.Status{readmodel.StatusCompleted, readmodel.StatusStreaming, readmodel.StatusCompleted}, statuses(s)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			s.Apply(event.Event{Seq: 99, Time: t0.Add(time.Second), Payload: event.FinalAnswer{Agent: "bob", Label: "agent2.final", Content: "Final text"}})
			if b.Status != readmodel.StatusCompleted || s.Final.Label != "agent2.final" || s.Winner != "bob" {
				t.Errorf("after final: %s %+v %s", b.Status, s.Final, s.Winner)
			}
		},
	}, {
		name: "usage adds up",
		build: func(s *stream) {
			s.add(ms, event.UsageReported{Agent: "alice", CostUSD: 0.1}).
				add(ms, event.UsageReported{Agent: "alice", CostUSD: 0.2}).
				add(ms, event.UsageReported{Agent: "bob", CostUSD: 0.05})
		},
		check: func(t *testing.T, s *readmodel.State) {
			if roundCost(s.Agent("alice").CostUSD) != 0.3 || roundCost(s.Totals.CostUSD) != 0.35 {
				t.Errorf("cost alice %v total %v", s.Agent("alice").CostUSD, s.Totals.CostUSD)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := started()
			tt.build(s)
			tt.check(t, fold(s.events))
		})
	}
}

// TestState_ReplayIsIdentical: folding the JSON round trip of a stream gives the same
// status.json as folding the stream itself, since State reads no clock.
func TestState_ReplayIsIdentical(t *testing.T) {
	events := session().events
	b, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	var back []event.Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	now := t0.Add(time.Hour)
	if diff := cmp.Diff(string(StatusJSON(fold(events), now)), string(StatusJSON(fold(back), now))); diff != "" {
		t.Errorf("replayed status differs (-live +replayed):\n%s", diff)
	}
}

func TestState_Session(t *testing.T) {
	s := fold(session().events)
	if diff := cmp.Diff([]readmodel.Status{readmodel.StatusCompleted, readmodel.StatusCompleted, readmodel.StatusDead}, statuses(s)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	want := readmodel.Totals{Answers: 2, Votes: 3, IgnoredVotes: 1, Invalidations: 1, Errors: 3}
	got := s.Totals
	got.Usage, got.CostUSD, got.Rounds = want.Usage, 0, nil
	if !cmp.Equal(got, want) {
		t.Errorf("totals = %+v, want %+v", got, want)
	}
	if s.Totals.Usage.InputTokens != 2700 || roundCost(s.Totals.CostUSD) != 0.0254 {
		t.Errorf("usage %+v cost %v", s.Totals.Usage, s.Totals.CostUSD)
	}
}
