package coord

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

func stopCall(id, summary, status string) Call {
	b, _ := json.Marshal(map[string]string{"summary": summary, "status": status})
	return Call{ID: id, Name: ToolStop, Arguments: string(b)}
}

func decomposed(agents int) *Machine {
	return New(Settings{Agents: agents, Decomposition: true})
}

func mustStop(t *testing.T, m *Machine, i int, status string) Stop {
	t.Helper()
	out := m.Resolve(i, []Call{stopCall("s", "my part is done", status)}, "", m.Version())
	if out.Kind != Stopped {
		t.Fatalf("agent %d stop: got kind %v feedback %v", i, out.Kind, out.Feedback)
	}
	return out.Stop
}

func TestDecomposition_Rules(t *testing.T) {
	// Agent 0 has shared "part one" before each case runs.
	tests := []struct {
		name     string
		settings Settings
		agent    int
		calls    []Call
		stale    bool
		want     Kind
		wantErr  []string
	}{
		{name: "no tool call", calls: nil, want: NoWorkflow},
		{name: "vote is not a tool here", calls: []Call{voteCall("1", "agent1", "x")}, want: Retry,
			wantErr: []string{"there is no vote in decomposition mode"}},
		{name: "stop and answer", calls: []Call{stopCall("1", "done", "complete"), answerCall("2", "more")}, want: Retry,
			wantErr: []string{"one workflow call", "one workflow call"}},
		{name: "two stops", calls: []Call{stopCall("1", "done", "complete"), stopCall("2", "done", "complete")}, want: Retry,
			wantErr: []string{"one workflow call", "one workflow call"}},
		{name: "bad status", calls: []Call{stopCall("1", "done", "finished")}, want: Retry,
			wantErr: []string{`invalid status "finished"`}},
		{name: "empty summary", calls: []Call{stopCall("1", "  ", "complete")}, want: Retry,
			wantErr: []string{`non-empty "summary"`}},
		{name: "summary over the cap", calls: []Call{stopCall("1", strings.Repeat("x", MaxStopSummaryChars+1), "complete")}, want: Retry,
			wantErr: []string{"over 4000 characters"}},
		{name: "bad JSON", calls: []Call{{ID: "1", Name: ToolStop, Arguments: "{"}}, want: Retry,
			wantErr: []string{"not valid JSON"}},
		{name: "complete without a part of its own", agent: 1, calls: []Call{stopCall("1", "done", "complete")}, want: Retry,
			wantErr: []string{"you have not shared any work yet"}},
		{name: "blocked without a part of its own", agent: 1, calls: []Call{stopCall("1", "need the API spec", "blocked")}, want: Stopped},
		{name: "status defaults to complete", calls: []Call{stopCall("1", "done", "")}, want: Stopped},
		{name: "stale stop", calls: []Call{stopCall("1", "done", "complete")}, stale: true, want: StaleStop},
		{name: "answer cap says stop", settings: Settings{MaxNewAnswersPerAgent: 1}, calls: []Call{answerCall("1", "part one, revised")}, want: Retry,
			wantErr: []string{"maximum of 1 answers; call stop"}},
		{name: "identical part", agent: 1, calls: []Call{answerCall("1", "part one")}, want: Retry,
			wantErr: []string{"identical to agent1's current answer: submit your own part's new work, or call stop"}},
		{name: "new part", agent: 1, calls: []Call{answerCall("1", "part two")}, want: Answered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.settings
			s.Agents, s.Decomposition = 2, true
			m := New(s)
			mustAnswer(t, m, 0, "part one")
			seen := m.Version()
			if tc.stale {
				seen--
			}
			out := m.Resolve(tc.agent, tc.calls, "", seen)
			if out.Kind != tc.want {
				t.Fatalf("kind = %v, want %v (feedback %v)", out.Kind, tc.want, out.Feedback)
			}
			if len(out.Feedback) != len(tc.wantErr) {
				t.Fatalf("feedback = %v, want %d", out.Feedback, len(tc.wantErr))
			}
			for k, w := range tc.wantErr {
				if !strings.Contains(out.Feedback[k].Error, w) {
					t.Errorf("feedback[%d] = %q, want it to contain %q", k, out.Feedback[k].Error, w)
				}
			}
		})
	}
}

func TestDecomposition_StopInVotingModeIsUnknown(t *testing.T) {
	m := New(Settings{Agents: 2})
	mustAnswer(t, m, 0, "a")
	out := m.Resolve(1, []Call{stopCall("1", "done", "complete")}, "", m.Version())
	if out.Kind != Retry || !strings.Contains(out.Feedback[0].Error, `unknown tool "stop"`) {
		t.Fatalf("got %v %v", out.Kind, out.Feedback)
	}
}

func TestDecomposition_NewAnswerWakesStoppedAgents(t *testing.T) {
	m := decomposed(3)
	mustAnswer(t, m, 0, "frontend")
	mustAnswer(t, m, 1, "backend")
	mustAnswer(t, m, 2, "tests")
	mustStop(t, m, 0, StopComplete)
	mustStop(t, m, 1, StopComplete)
	if m.Converged() {
		t.Fatal("converged with agent3 still working")
	}
	if m.NeedsTurn(0) || m.NeedsTurn(1) || !m.NeedsTurn(2) {
		t.Fatal("stopped agents must rest, the working one act")
	}
	out := m.Resolve(2, []Call{answerCall("a", "tests, now covering the API")}, "", m.Version())
	if out.Kind != Answered || len(out.Invalidated) != 2 {
		t.Fatalf("answer: %v, invalidated %v; want agents 0 and 1 woken", out.Kind, out.Invalidated)
	}
	if !m.NeedsTurn(0) || !m.NeedsTurn(1) {
		t.Fatal("a new answer must wake the stopped agents")
	}
	for i := range 3 {
		mustStop(t, m, i, StopComplete)
	}
	if !m.Converged() {
		t.Fatal("every agent stopped on the current answers: coordination is over")
	}
}

func TestDecomposition_CappedAgentIsDoneWithoutACall(t *testing.T) {
	m := New(Settings{Agents: 2, Decomposition: true, MaxNewAnswersPerAgent: 1})
	mustAnswer(t, m, 0, "part one")
	if m.NeedsTurn(0) || !m.Done(0) {
		t.Fatal("an agent at its answer cap is done (MassGen's auto-stop)")
	}
	if m.Converged() {
		t.Fatal("agent2 has not answered")
	}
	mustAnswer(t, m, 1, "part two")
	if !m.Converged() {
		t.Fatal("both capped: over")
	}
}

func TestDecomposition_GlobalCapEndsEvenWithoutAnswers(t *testing.T) {
	m := New(Settings{Agents: 3, Decomposition: true, MaxNewAnswersGlobal: 1})
	mustAnswer(t, m, 0, "only part")
	if !m.Converged() {
		t.Fatal("the global cap leaves no answer to give: every agent is done")
	}
}

func TestDecomposition_DeadAgentDoesNotBlock(t *testing.T) {
	m := decomposed(2)
	mustAnswer(t, m, 0, "part one")
	mustStop(t, m, 0, StopComplete)
	m.Kill(1)
	if !m.Converged() {
		t.Fatal("the only live agent stopped")
	}
}

func TestDecomposition_AllBlockedEnds(t *testing.T) {
	m := decomposed(2)
	mustStop(t, m, 0, StopBlocked)
	if m.Converged() {
		t.Fatal("agent2 has not stopped")
	}
	mustStop(t, m, 1, StopBlocked)
	if !m.Converged() {
		t.Fatal("every agent blocked: waiting would only run into the timeout")
	}
}

func TestDecomposition_Restore(t *testing.T) {
	m := decomposed(2)
	if err := m.Restore(Restored{
		Answers: []Answer{{Agent: 0, Label: "agent1.1", Content: "a", Version: 1}},
		Stops:   []Stop{{Agent: 0, Summary: "done", Status: StopComplete, Version: 1}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.CurrentStop(0); !ok || m.NeedsTurn(0) || !m.NeedsTurn(1) {
		t.Fatal("the restored stop must count")
	}
	for name, r := range map[string]Restored{
		"stale stop": {Answers: []Answer{{Agent: 0, Label: "agent1.1", Content: "a", Version: 1}},
			Stops: []Stop{{Agent: 1, Summary: "x", Status: StopBlocked, Version: 0}}},
		"bad status": {Stops: []Stop{{Agent: 1, Summary: "x", Status: "done"}}},
		"twice":      {Stops: []Stop{{Agent: 1, Summary: "x", Status: StopBlocked}, {Agent: 1, Summary: "y", Status: StopBlocked}}},
	} {
		if err := decomposed(2).Restore(r); err == nil {
			t.Errorf("%s: restored without an error", name)
		}
	}
	if err := New(Settings{Agents: 2}).Restore(Restored{Stops: []Stop{{Agent: 1, Summary: "x", Status: StopBlocked}}}); err == nil {
		t.Error("stops restored into a voting session")
	}
}

// TestDecomposition_RandomRunsEnd drives random responses through the machine and checks the
// mode's invariants: no vote is ever accepted, a stop counts only on the current answers, an
// agent that is done takes no turn, and with an answer cap every run ends.
func TestDecomposition_RandomRunsEnd(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		n := 1 + rng.IntN(4)
		m := New(Settings{Agents: n, Decomposition: true, MaxNewAnswersPerAgent: 1 + rng.IntN(3), FailureBudget: 2})
		for step := 0; step < 500 && !m.Converged(); step++ {
			i := rng.IntN(n)
			if !m.NeedsTurn(i) {
				continue
			}
			seen := m.Version() - rng.IntN(2)
			var calls []Call
			switch rng.IntN(6) {
			case 0:
				calls = []Call{voteCall("v", "agent1", "x")}
			case 1, 2:
				calls = []Call{answerCall("a", "part "+strings.Repeat("x", rng.IntN(50)))}
			case 3:
				calls = []Call{stopCall("s", "done", []string{StopComplete, StopBlocked}[rng.IntN(2)])}
			case 4:
				m.TurnFailed(i)
				continue
			}
			out := m.Resolve(i, calls, "", max(seen, 0))
			switch out.Kind {
			case Voted, StaleVote, Deferred:
				t.Fatalf("seed %d: a vote was accepted in decomposition mode", seed)
			case Stopped:
				if out.Stop.Version != m.Version() {
					t.Fatalf("seed %d: a stop on version %d counted at %d", seed, out.Stop.Version, m.Version())
				}
			}
			for k := range n {
				if m.NeedsTurn(k) && (m.Done(k) || m.Dead(k)) {
					t.Fatalf("seed %d: agent %d is done or dead and still needs a turn", seed, k)
				}
			}
		}
		// Every agent is done, dead, or can still act: the run cannot be stuck.
		if !m.Converged() && m.Live() > 0 {
			stuck := true
			for k := range n {
				if m.NeedsTurn(k) {
					stuck = false
				}
			}
			if stuck {
				t.Fatalf("seed %d: no agent can act and coordination is not over", seed)
			}
		}
	}
}
