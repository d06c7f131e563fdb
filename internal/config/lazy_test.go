package config

import (
	"strings"
	"testing"
)

func TestParse_LazyStart(t *testing.T) {
	team := "agents:\n  - {id: a, backend: {type: scripted, answers: [x]}}\n  - {id: b, backend: {type: scripted, answers: [x]}}\n  - {id: c, backend: {type: scripted, answers: [x]}}\n"
	for _, tc := range []struct {
		orch, want string // want: "" valid, else a piece of the error or warning
		warn       bool
	}{
		{"lazy_start_agents: 1", "", false},
		{"lazy_start_agents: 2\n  lazy_start_agreement: 3", "", false},
		{"lazy_start_agents: 1\n  skip_voting: true", "lazy start needs votes", false},
		{"lazy_start_agents: 1\n  defer_voting_until_all_answered: true", "before every agent has answered", false},
		{"lazy_start_agents: 1\n  lazy_start_agreement: 4", "can never be met by a team of 3 agents", false},
		{"lazy_start_agents: 3", "has no effect: the team has 3 agents", true},
		{"lazy_start_agreement: 1", "at least 2", false},
	} {
		cfg, rep := Parse("c.yaml", []byte(team+"orchestrator:\n  "+tc.orch+"\n"))
		text := rep.Text()
		switch {
		case tc.want == "" && (!rep.OK() || strings.Contains(text, "warning")):
			t.Errorf("%q: want valid, got:\n%s", tc.orch, text)
		case tc.want != "" && !strings.Contains(text, tc.want):
			t.Errorf("%q: want %q in:\n%s", tc.orch, tc.want, text)
		case tc.want != "" && rep.OK() != tc.warn:
			t.Errorf("%q: valid %v, want %v:\n%s", tc.orch, rep.OK(), tc.warn, text)
		case tc.want == "" && cfg.Orchestrator.LazyStartAgents == 0:
			t.Errorf("%q: lazy_start_agents not read", tc.orch)
		}
	}
}
