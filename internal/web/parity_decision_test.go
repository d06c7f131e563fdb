package web

import (
	"strconv"
	"testing"

	"massgen/internal/event"
)

// decisionLog is an events.jsonl written from events, to fold the decision record in Go and
// in the studio's decision.js.
type decisionLog struct {
	name string
	evs  []event.Payload
}

func conf(x float64) *float64 { return &x }

// decisionLogs: confidence weighting with weights, a stale vote, a dead voter and a dissent;
// a plain tie broken by agent order; a session without a vote.
func decisionLogs() []decisionLog {
	three := []event.AgentInfo{{ID: "a", Label: "agent1", VoteWeight: 2}, {ID: "b", Label: "agent2"},
		{ID: "c", Label: "agent3", VoteWeight: 0.5}, {ID: "d", Label: "agent4"}}
	weighted := []event.Payload{
		event.SessionStarted{Question: "q", Turn: 1, Agents: three, Settings: event.Settings{VoteWeighting: "confidence"}},
		event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "A1", Version: 1, Confidence: conf(0.9)},
		event.VoteCast{Agent: "c", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "early", Version: 1},
		event.AnswerSubmitted{Agent: "b", Label: "agent2.1", Content: "B1", Version: 2, Confidence: conf(0.4), Invalidated: []string{"c"}},
		event.VoteCast{Agent: "a", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "mine is complete", Version: 2, Confidence: conf(0.8)},
		event.VoteCast{Agent: "b", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "better sources", Version: 2},
		event.VoteCast{Agent: "c", Target: "b", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "shorter <b>and</b> right", Version: 2, Confidence: conf(0.9)},
		event.VoteCast{Agent: "d", Target: "b", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "agree", Version: 2, Confidence: conf(1)},
		event.AgentDead{Agent: "d", Reason: "failed 3 times"},
		event.CoordinationEnded{Reason: event.EndConsensus, Winner: "a", WinnerLabel: "agent1", AnswerLabel: "agent1.1"},
		event.FinalAnswer{Agent: "a", Label: "agent1.final", Content: "A1", Mode: "verbatim"},
		event.SessionEnded{Status: event.StatusCompleted},
	}
	two := []event.AgentInfo{{ID: "a", Label: "agent1"}, {ID: "b", Label: "agent2"}}
	tie := []event.Payload{
		event.SessionStarted{Question: "q", Turn: 1, Agents: two},
		event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "A1", Version: 1},
		event.AnswerSubmitted{Agent: "b", Label: "agent2.1", Content: "B1", Version: 2, Confidence: conf(0.7)},
		event.VoteCast{Agent: "a", Target: "b", TargetLabel: "agent2", AnswerLabel: "agent2.1", Reason: "B is better", Version: 2},
		event.VoteCast{Agent: "b", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "A is better", Version: 2, Confidence: conf(0.6)},
		event.CoordinationEnded{Reason: event.EndConsensus, Winner: "a", WinnerLabel: "agent1", AnswerLabel: "agent1.1", Tie: true},
		event.SessionEnded{Status: event.StatusCompleted},
	}
	skipped := []event.Payload{
		event.SessionStarted{Question: "q", Turn: 1, Agents: two, Settings: event.Settings{SkipVoting: true}},
		event.AnswerSubmitted{Agent: "b", Label: "agent2.1", Content: "B1", Version: 1},
		event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "A1", Version: 2},
		event.CoordinationEnded{Reason: event.EndAllAnswered, Winner: "b", WinnerLabel: "agent2", AnswerLabel: "agent2.1"},
		event.SessionEnded{Status: event.StatusCompleted},
	}
	// The vote's leader fails correctness; the next answer passes both verifiers and wins.
	verified := []event.Payload{
		event.SessionStarted{Question: "q", Turn: 1, Agents: two},
		event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "A1", Version: 1},
		event.AnswerSubmitted{Agent: "b", Label: "agent2.1", Content: "B1", Version: 2},
		event.VoteCast{Agent: "a", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "mine", Version: 2},
		event.VoteCast{Agent: "b", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Reason: "A", Version: 2},
		event.AnswerVerified{Agent: "b", Verifier: 1, Aspect: "correctness", Candidate: "a", AnswerLabel: "agent1.1", Verdict: event.VerdictFail, Reason: "wrong"},
		event.AnswerVerified{Agent: "b", Verifier: 1, Aspect: "correctness", Candidate: "b", AnswerLabel: "agent2.1", Verdict: event.VerdictPass, Reason: "right"},
		event.AnswerVerified{Agent: "a", Verifier: 2, Aspect: "format", SubagentID: "verifier_2_agent2_1", Candidate: "b", AnswerLabel: "agent2.1", Verdict: event.VerdictPass},
		event.CoordinationEnded{Reason: event.EndConsensus, Winner: "b", WinnerLabel: "agent2", AnswerLabel: "agent2.1"},
		event.SessionEnded{Status: event.StatusCompleted},
	}
	return []decisionLog{{"decision_weighted.jsonl", weighted}, {"decision_tie.jsonl", tie}, {"decision_skipped.jsonl", skipped},
		{"decision_verified.jsonl", verified}}
}

// normalise drops the zero values of a decoded JSON value (false, "", null, 0, empty lists
// and objects) so that Go's omitempty and the JS fold's explicit zeros compare equal.
func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if n := normalise(e); n != nil {
				out[k] = n
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(x) == 0 {
			return nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalise(e)
		}
		return out
	case bool:
		if !x {
			return nil
		}
	case string:
		if x == "" {
			return nil
		}
	case float64:
		if x == 0 {
			return nil
		}
	}
	return v
}

// TestDecisionLogs_Fold checks that the logs the parity test folds hold what they are meant
// to: a parity of two empty records would prove nothing.
func TestDecisionLogs_Fold(t *testing.T) {
	want := map[string]string{
		"decision_weighted.jsonl": "agent3 for agent2.1 worth 0.45; agent1 score 2.1",
		"decision_tie.jsonl":      "agent1 for agent2.1 worth 1; agent1 score 1",
		"decision_skipped.jsonl":  "no vote",
		"decision_verified.jsonl": "agent1 for agent1.1 worth 1; agent1 score 2; passed after 3 verdicts",
	}
	for _, l := range decisionLogs() {
		d := goFold(t, writeLog(t, l.name, l.evs)).Decision
		m, _ := d.(map[string]any)
		if m == nil {
			t.Fatalf("%s: no decision record", l.name)
		}
		var got string
		if m["no_vote"] == true {
			got = "no vote"
		} else {
			ds := m["dissent"].(map[string]any)
			c := m["tally"].([]any)[0].(map[string]any)
			got = ds["voter_label"].(string) + " for " + ds["for"].(string) + " worth " + num(ds["worth"]) + "; " + c["label"].(string) + " score " + num(c["score"])
		}
		if v, _ := m["verifiers"].([]any); len(v) > 0 {
			got += "; " + m["verified"].(string) + " after " + strconv.Itoa(len(v)) + " verdicts"
		}
		if got != want[l.name] {
			t.Errorf("%s: %q, want %q", l.name, got, want[l.name])
		}
	}
}

func num(v any) string {
	f, _ := v.(float64)
	return strconv.FormatFloat(f, 'f', -1, 64)
}
