package view

import (
	"fmt"
	"strings"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// breakdown splits a session's usage by agent and by round for the final summary.
type breakdown struct {
	agents []string
	agent  map[string]*spent
	rounds []roundSpent // in order: setup, rounds 1.., final
}

type spent struct {
	u        provider.Usage
	cost     float64
	unpriced bool // a model without a price used tokens in it
}

func (s *spent) add(v event.UsageReported, unpriced bool) {
	s.u, s.cost = s.u.Add(v.Usage), s.cost+v.CostUSD
	s.unpriced = s.unpriced || unpriced && v.Usage != (provider.Usage{})
}

type roundSpent struct {
	name string // "setup", "round 2", "final"
	rank int
	spent
}

// add counts v; unpriced says its agent's model has no price.
func (b *breakdown) add(v event.UsageReported, unpriced bool) {
	if b.agent == nil {
		b.agent = map[string]*spent{}
	}
	a := b.agent[v.Agent]
	if a == nil {
		a = &spent{}
		b.agent[v.Agent] = a
		b.agents = append(b.agents, v.Agent)
	}
	a.add(v, unpriced)
	name, rank := fmt.Sprintf("round %d", v.Round), v.Round
	switch {
	case v.Presentation:
		name, rank = "final", 1<<30
	case v.Round == 0:
		name, rank = "setup", -1
	}
	k := 0
	for k < len(b.rounds) && b.rounds[k].rank < rank {
		k++
	}
	if k == len(b.rounds) || b.rounds[k].rank != rank {
		b.rounds = append(b.rounds[:k], append([]roundSpent{{name: name, rank: rank}}, b.rounds[k:]...)...)
	}
	b.rounds[k].add(v, unpriced)
}

// lines are the summary's breakdown, when there is more than one agent or round to tell
// apart: "by agent: a 1200 in (200 cached) $0.0041; b ..." and "by round: ...".
func (b *breakdown) lines() []string {
	var out []string
	part := func(name string, s spent) string {
		t := fmt.Sprintf("%s %d in", name, s.u.InputTokens)
		if s.u.CachedInputTokens > 0 {
			t += fmt.Sprintf(" (%d cached)", s.u.CachedInputTokens)
		}
		return t + fmt.Sprintf(", %d out, %s", s.u.OutputTokens, usage.AmountOf(s.cost, s.u, !s.unpriced))
	}
	if len(b.agents) > 1 {
		parts := make([]string, len(b.agents))
		for i, id := range b.agents {
			parts[i] = part(id, *b.agent[id])
		}
		out = append(out, "by agent: "+strings.Join(parts, "; "))
	}
	if len(b.rounds) > 1 {
		parts := make([]string, len(b.rounds))
		for i, r := range b.rounds {
			parts[i] = part(r.name, r.spent)
		}
		out = append(out, "by round: "+strings.Join(parts, "; "))
	}
	return out
}
