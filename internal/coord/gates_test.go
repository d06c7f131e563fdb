package coord

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// setup is a sequence of accepted actions: "a0" is an answer by agent 0, "v1>0" a vote by agent
// 1 for agent 0, "x2" kills agent 2.
func setup(t *testing.T, m *Machine, steps ...string) {
	t.Helper()
	for n, st := range steps {
		var i, j int
		switch {
		case strings.HasPrefix(st, "a"):
			fmt.Sscanf(st, "a%d", &i)
			mustAnswer(t, m, i, fmt.Sprintf("answer %d of agent %d", n, i))
		case strings.HasPrefix(st, "v"):
			fmt.Sscanf(st, "v%d>%d", &i, &j)
			mustVote(t, m, i, Label(j))
		case strings.HasPrefix(st, "x"):
			fmt.Sscanf(st, "x%d", &i)
			m.Kill(i)
		default:
			t.Fatalf("bad step %q", st)
		}
	}
}

func TestResolve_Gates(t *testing.T) {
	tests := []struct {
		name     string
		settings Settings
		steps    []string
		agent    int
		call     Call
		want     Kind
		wantErr  string // substring of the feedback, for Retry
		waiting  []int  // Outcome.Waiting, for Deferred
	}{
		{name: "global cap rejects the next answer", settings: Settings{MaxNewAnswersGlobal: 2}, steps: []string{"a0", "a1"},
			agent: 2, call: answerCall("c", "a third view"), want: Retry,
			wantErr: "maximum of 2 answers across all agents (orchestrator.max_new_answers_global)"},
		{name: "global cap still lets agents vote", settings: Settings{MaxNewAnswersGlobal: 2}, steps: []string{"a0", "a1"},
			agent: 2, call: voteCall("c", "agent1", "ok"), want: Voted},
		{name: "under the global cap an answer is accepted", settings: Settings{MaxNewAnswersGlobal: 3}, steps: []string{"a0", "a1"},
			agent: 2, call: answerCall("c", "a third view"), want: Answered},

		{name: "defer: a vote before everyone answered waits", settings: Settings{DeferVoting: true}, steps: []string{"a0", "a1"},
			agent: 0, call: voteCall("c", "agent2", "good"), want: Deferred, waiting: []int{2}},
		{name: "defer: an agent without an answer must answer first", settings: Settings{DeferVoting: true}, steps: []string{"a0"},
			agent: 2, call: voteCall("c", "agent1", "good"), want: Retry,
			wantErr: "voting opens only once every agent has answered (orchestrator.defer_voting_until_all_answered)"},
		{name: "defer: once everyone answered the vote counts", settings: Settings{DeferVoting: true}, steps: []string{"a0", "a1", "a2"},
			agent: 0, call: voteCall("c", "agent2", "good"), want: Voted},
		{name: "defer: a dead agent is not waited for", settings: Settings{DeferVoting: true}, steps: []string{"a0", "a1", "x2"},
			agent: 0, call: voteCall("c", "agent2", "good"), want: Voted},
		{name: "defer: the global cap opens voting", settings: Settings{DeferVoting: true, MaxNewAnswersGlobal: 2}, steps: []string{"a0", "a1"},
			agent: 2, call: voteCall("c", "agent1", "good"), want: Voted},
		{name: "defer: an invalid label is still an error", settings: Settings{DeferVoting: true}, steps: []string{"a0"},
			agent: 0, call: voteCall("c", "agent3", "x"), want: Retry, wantErr: "invalid agent_id"},

		{name: "skip voting: a vote is refused", settings: Settings{SkipVoting: true}, steps: []string{"a0"},
			agent: 1, call: voteCall("c", "agent1", "x"), want: Retry, wantErr: "no vote in this session (orchestrator.skip_voting)"},

		{name: "lead cap: a third answer over a silent peer", settings: Settings{LeadCap: 2}, steps: []string{"a0", "a0"},
			agent: 0, call: answerCall("c", "third try"), want: Retry,
			wantErr: "put you 3 answers ahead of the slowest active agent (the cap is 2, orchestrator.fairness_lead_cap_answers)"},
		{name: "lead cap: within the cap", settings: Settings{LeadCap: 2}, steps: []string{"a0", "a0", "a1", "a2"},
			agent: 0, call: answerCall("c", "third try"), want: Answered},
		{name: "lead cap: a peer that voted is done, not slow", settings: Settings{LeadCap: 1}, steps: []string{"a0", "v1>0", "v2>0"},
			agent: 0, call: answerCall("c", "second try"), want: Answered},
		{name: "lead cap: a dead peer is not waited for", settings: Settings{LeadCap: 1}, steps: []string{"a0", "a1", "x2"},
			agent: 0, call: answerCall("c", "second try"), want: Answered},
		{name: "lead cap: the slowest peer counts", settings: Settings{LeadCap: 1}, steps: []string{"a0", "a1"},
			agent: 0, call: answerCall("c", "second try"), want: Retry, wantErr: "2 answers ahead"},
		{name: "lead cap off", settings: Settings{}, steps: []string{"a0", "a0", "a0"},
			agent: 0, call: answerCall("c", "fourth try"), want: Answered},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.settings.Agents = 3
			m := New(tc.settings)
			setup(t, m, tc.steps...)
			out := m.Resolve(tc.agent, []Call{tc.call}, "", m.Version())
			if out.Kind != tc.want {
				t.Fatalf("kind = %v, want %v (feedback %+v)", out.Kind, tc.want, out.Feedback)
			}
			if tc.wantErr != "" && (len(out.Feedback) != 1 || !strings.Contains(out.Feedback[0].Error, tc.wantErr)) {
				t.Errorf("feedback = %+v, want %q", out.Feedback, tc.wantErr)
			}
			if !slices.Equal(out.Waiting, tc.waiting) {
				t.Errorf("waiting = %v, want %v", out.Waiting, tc.waiting)
			}
			if tc.want == Deferred {
				if _, ok := m.CurrentVote(tc.agent); ok {
					t.Error("a deferred vote counts")
				}
				if out.Accepted != tc.call.ID {
					t.Errorf("accepted %q, want %q", out.Accepted, tc.call.ID)
				}
			}
		})
	}
}

// Which agents must act, and when coordination is complete, under each gate.
func TestNeedsTurnAndConverged_Gates(t *testing.T) {
	tests := []struct {
		name      string
		settings  Settings
		steps     []string
		deferVote int // agent whose vote for agent1 is deferred after the steps; -1 for none
		needs     []bool
		blocked   []string // substrings of Blocked(i); "" for none
		converged bool
	}{
		{name: "defaults", steps: []string{"a0"}, deferVote: -1, needs: []bool{true, true, true}, blocked: []string{"", "", ""}},
		{name: "defer: the early voter waits for the unanswered", settings: Settings{DeferVoting: true}, steps: []string{"a0", "a1"}, deferVote: 0,
			needs: []bool{false, true, true}, blocked: []string{"waiting for agent3", "", ""}},
		{name: "defer: an agent out of answers waits", settings: Settings{DeferVoting: true, MaxNewAnswersPerAgent: 1}, steps: []string{"a0"}, deferVote: -1,
			needs: []bool{false, true, true}, blocked: []string{"waiting for agent2, agent3", "", ""}},
		{name: "defer: everyone answered, nobody waits", settings: Settings{DeferVoting: true, MaxNewAnswersPerAgent: 1}, steps: []string{"a0", "a1", "a2"}, deferVote: -1,
			needs: []bool{true, true, true}, blocked: []string{"", "", ""}},
		{name: "defer: the global cap ends the wait", settings: Settings{DeferVoting: true, MaxNewAnswersPerAgent: 1, MaxNewAnswersGlobal: 1}, steps: []string{"a0"}, deferVote: -1,
			needs: []bool{true, true, true}, blocked: []string{"", "", ""}},
		{name: "skip voting: only agents without an answer act", settings: Settings{SkipVoting: true}, steps: []string{"a0"}, deferVote: -1,
			needs: []bool{false, true, true}, blocked: []string{"", "", ""}},
		{name: "skip voting: complete once every live agent answered", settings: Settings{SkipVoting: true}, steps: []string{"a0", "a2", "x1"}, deferVote: -1,
			needs: []bool{false, false, false}, blocked: []string{"", "", ""}, converged: true},
		{name: "skip voting: complete at the global cap", settings: Settings{SkipVoting: true, MaxNewAnswersGlobal: 1}, steps: []string{"a1"}, deferVote: -1,
			needs: []bool{false, false, false}, blocked: []string{"", "", ""}, converged: true},
		{name: "fairness pause: the agent at the cap waits", settings: Settings{LeadCap: 1, FairnessPause: true}, steps: []string{"a0"}, deferVote: -1,
			needs: []bool{false, true, true}, blocked: []string{"2 answers ahead of the slowest active agent", "", ""}},
		{name: "fairness pause: lifted when the slow agents vote", settings: Settings{LeadCap: 1, FairnessPause: true}, steps: []string{"a0", "v1>0", "v2>0"}, deferVote: -1,
			needs: []bool{true, false, false}, blocked: []string{"", "", ""}},
		{name: "fairness pause: lifted when the slowest answers", settings: Settings{LeadCap: 1, FairnessPause: true}, steps: []string{"a0", "a1", "a2"}, deferVote: -1,
			needs: []bool{true, true, true}, blocked: []string{"", "", ""}},
		{name: "lead cap without the pause: the agent starts a turn and may vote", settings: Settings{LeadCap: 1}, steps: []string{"a0"}, deferVote: -1,
			needs: []bool{true, true, true}, blocked: []string{"", "", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.settings.Agents = 3
			m := New(tc.settings)
			setup(t, m, tc.steps...)
			if tc.deferVote >= 0 {
				if out := m.Resolve(tc.deferVote, []Call{voteCall("d", "agent1", "early")}, "", m.Version()); out.Kind != Deferred {
					t.Fatalf("vote was %v, want deferred (%+v)", out.Kind, out.Feedback)
				}
			}
			for i := range 3 {
				if got := m.NeedsTurn(i); got != tc.needs[i] {
					t.Errorf("NeedsTurn(%d) = %v, want %v (blocked %q)", i, got, tc.needs[i], m.Blocked(i))
				}
				if got := m.Blocked(i); (tc.blocked[i] == "") != (got == "") || !strings.Contains(got, tc.blocked[i]) {
					t.Errorf("Blocked(%d) = %q, want %q", i, got, tc.blocked[i])
				}
			}
			if got := m.Converged(); got != tc.converged {
				t.Errorf("Converged() = %v, want %v", got, tc.converged)
			}
		})
	}
}

func TestUnseen_NewestFirstAndOnlyUnseen(t *testing.T) {
	m := New(Settings{Agents: 4})
	setup(t, m, "a1", "a2", "a0", "a3", "a1")
	got := func(shown []int) []string {
		var labels []string
		for _, a := range m.Unseen(0, shown) {
			labels = append(labels, a.Label)
		}
		return labels
	}
	if g := got([]int{0, 0, 0, 0}); !slices.Equal(g, []string{"agent2.2", "agent4.1", "agent3.1"}) {
		t.Errorf("nothing seen: %v", g)
	}
	if g := got([]int{1, 1, 1, 0}); !slices.Equal(g, []string{"agent2.2", "agent4.1"}) {
		t.Errorf("agent2's first and agent3's seen: %v", g)
	}
	if g := got([]int{1, 2, 1, 1}); len(g) != 0 {
		t.Errorf("all seen: %v", g)
	}
}
