package view

import (
	"fmt"
	"strings"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// breakdown splits a session's usage by agent and by round for the final summary.
type breakdown struct {
	agents []string
	agent  map[string]*spent
	rounds []roundSpent // in order: setup, rounds 1.., final
}

type spent struct {
	u    provider.Usage
	cost float64
}

type roundSpent struct {
	name string // "setup", "round 2", "final"
	rank int
	spent
}

func (b *breakdown) add(v event.UsageReported) {
	if b.agent == nil {
		b.agent = map[string]*spent{}
	}
	a := b.agent[v.Agent]
	if a == nil {
		a = &spent{}
		b.agent[v.Agent] = a
		b.agents = append(b.agents, v.Agent)
	}
	a.u, a.cost = a.u.Add(v.Usage), a.cost+v.CostUSD
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
	r := &b.rounds[k]
	r.u, r.cost = r.u.Add(v.Usage), r.cost+v.CostUSD
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
		return t + fmt.Sprintf(", %d out, %s", s.u.OutputTokens, Dollars(s.cost))
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
