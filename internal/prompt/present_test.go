package prompt

import (
	"strings"
	"testing"
	"time"

	"massgen/internal/provider"
)

func TestPresentation(t *testing.T) {
	answers := []Answer{{Label: "agent1", Content: "one"}, {Label: "agent2", Content: "two"}}
	history := []provider.Message{{Role: provider.RoleUser, Content: "earlier"}, {Role: provider.RoleAssistant, Content: "reply"}}
	votes := VoteResult{Votes: 2, Reasons: []string{"clear"}}
	tests := []struct {
		name              string
		p                 Presentation
		system, user, not []string
	}{
		{name: "winner presents", p: Presentation{Presenter: "agent2", Winner: "agent2", Voted: true, Votes: votes},
			system: []string{"The other agents voted for your answer."},
			user:   []string{"Your answer (agent2) received 2 vote(s).", "(your own answer)\n<agent2>", "Present the final answer now."}},
		{name: "another presenter", p: Presentation{Presenter: "agent1", Winner: "agent2", Voted: true, Votes: votes},
			system: []string{"You have been chosen to write the final answer. The agents voted agent2's answer the best.", "using agent2's answer as the primary basis"},
			user:   []string{"The answer of agent2 received the most votes: 2.", "(your own answer)\n<agent1>"}},
		{name: "synthesize after a vote", p: Presentation{Strategy: "synthesize", Presenter: "agent2", Winner: "agent2", Voted: true, Votes: votes},
			system: []string{"The agents voted your answer (agent2) the best.", "synthesizing the best of all the answers", "use your answer as the primary basis"},
			user:   []string{"(your own answer)\n<agent2>", "Synthesize the final answer now."}},
		{name: "synthesize without a vote", p: Presentation{Strategy: "synthesize", Presenter: "agent1", Winner: "agent1"},
			system: []string{"No answer is favoured"}, user: []string{"No vote was held in this session."},
			not: []string{"(your own answer)", "received"}},
		{name: "no vote, winner_present", p: Presentation{Presenter: "agent1", Winner: "agent1"},
			system: []string{"using your own answer as the primary basis"}, user: []string{"No vote was held", "(your own answer)\n<agent1>"}},
		{name: "history first", p: Presentation{Presenter: "agent1", Winner: "agent1", Voted: true, History: history},
			user: []string{"<CONVERSATION HISTORY>\nUser: earlier\nAssistant: reply\n<END OF CONVERSATION HISTORY>\n\n<ORIGINAL MESSAGE>\nQ?"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.p.Question, tc.p.Answers = "Q?", answers
			sys, user := tc.p.System("You are terse."), tc.p.User()
			if !strings.HasPrefix(sys, "You are terse.\n\n") || !strings.HasSuffix(sys, "do not mention agents, votes or this process.") {
				t.Errorf("system prompt:\n%s", sys)
			}
			for _, w := range tc.system {
				if !strings.Contains(sys, w) {
					t.Errorf("system lacks %q:\n%s", w, sys)
				}
			}
			for _, w := range tc.user {
				if !strings.Contains(user, w) {
					t.Errorf("message lacks %q:\n%s", w, user)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(user, w) {
					t.Errorf("message has %q:\n%s", w, user)
				}
			}
		})
	}
}

func TestDirect(t *testing.T) {
	if got := Direct("Q?", nil); got != "Q?" {
		t.Errorf("without history: %q", got)
	}
	got := Direct("Q?", []provider.Message{{Role: provider.RoleUser, Content: "earlier"}})
	if got != "<CONVERSATION HISTORY>\nUser: earlier\n<END OF CONVERSATION HISTORY>\n\n<ORIGINAL MESSAGE>\nQ?\n<END OF ORIGINAL MESSAGE>" {
		t.Errorf("with history: %q", got)
	}
}

func TestRoundTimeUp(t *testing.T) {
	got := RoundTimeUp(true, true, 61400*time.Millisecond, time.Minute, 14*time.Second)
	for _, w := range []string{"Time is up for your first round: 1m1s spent, the limit is 1m0s", "or vote", "In 14s this round is cut off"} {
		if !strings.Contains(got, w) {
			t.Errorf("lacks %q: %s", w, got)
		}
	}
	if got := RoundTimeUp(false, false, time.Minute, time.Minute, 0); strings.Contains(got, "vote") || !strings.Contains(got, "this round") {
		t.Errorf("without a vote: %s", got)
	}
}
