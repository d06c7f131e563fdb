package eval

import (
	"sync"

	"massgen/internal/event"
)

// observer is the sink that watches one item's session and collects what the record needs:
// the agents, every accepted answer, the deciding votes, the final answer and the spend.
type observer struct {
	mu      sync.Mutex
	agents  []AgentRecord
	index   map[string]int // agent id -> position in agents
	first   []bool         // the agent at that position has its first answer in
	votes   []Vote
	byLabel map[string]string // answer label -> content, for the answers agents endorse
	final   string
	hasFin  bool
	winner  string
	reason  string
	tokens  Tokens
	calls   int
	cost    float64
}

func newObserver() *observer { return &observer{index: map[string]int{}, byLabel: map[string]string{}} }

// Handle implements event.Sink.
func (o *observer) Handle(e event.Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch p := e.Payload.(type) {
	case event.SessionStarted:
		o.agents = make([]AgentRecord, len(p.Agents))
		o.first = make([]bool, len(p.Agents))
		for k, a := range p.Agents {
			o.agents[k] = AgentRecord{ID: a.ID, Backend: a.Backend, Model: a.Model, Unpriced: a.Unpriced, Answers: []string{}}
			o.index[a.ID] = k
		}
	case event.AnswerSubmitted:
		if k, ok := o.index[p.Agent]; ok {
			o.agents[k].Answers = append(o.agents[k].Answers, p.Content)
			o.first[k] = true
		}
		o.byLabel[p.Label] = p.Content
	case event.VoteCast:
		// An agent that votes before it ever answers (it joined late: lazy start) takes the
		// answer it voted for as its own stance.
		if k, ok := o.index[p.Agent]; ok && !o.first[k] {
			o.agents[k].Endorsed = o.byLabel[p.AnswerLabel]
			o.first[k] = true
		}
	case event.ModelCalled:
		o.calls++
		if k, ok := o.index[p.Agent]; ok {
			o.agents[k].Calls++
			if !o.first[k] {
				o.agents[k].FirstCalls++
			}
		}
	case event.UsageReported:
		t := Tokens{Input: p.Usage.InputTokens, CachedInput: p.Usage.CachedInputTokens, Output: p.Usage.OutputTokens, Reasoning: p.Usage.ReasoningTokens}
		o.tokens = o.tokens.Add(t)
		o.cost += p.CostUSD
		if k, ok := o.index[p.Agent]; ok {
			a := &o.agents[k]
			a.CostUSD += p.CostUSD
			// The engine reports a call's usage before it acts on the call, so the call that
			// wrote the first answer counts towards it.
			if !o.first[k] {
				a.FirstCostUSD += p.CostUSD
				a.FirstTokens = a.FirstTokens.Add(t)
			}
		}
	case event.AgentError:
		if k, ok := o.index[p.Agent]; ok {
			o.agents[k].Error = p.Message
		}
	case event.CoordinationEnded:
		o.winner, o.reason = p.Winner, p.Reason
		o.votes = nil
		for _, t := range p.Tally {
			for _, v := range t.Voters {
				o.votes = append(o.votes, Vote{Voter: v, For: t.Agent})
			}
		}
	case event.FinalAnswer:
		o.final, o.hasFin = p.Content, true
		if o.winner == "" {
			o.winner = p.Agent
		}
	}
}

// fill copies what the session showed into r.
func (o *observer) fill(r *Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.agents != nil {
		r.Agents = o.agents
	}
	r.Votes = o.votes
	r.Winner = o.winner
	r.EndReason = o.reason
	r.Tokens = o.tokens
	r.Calls = o.calls
	r.CostUSD = o.cost
	r.CostKnown = true
	for _, a := range o.agents {
		if a.Unpriced {
			r.CostKnown = false
		}
	}
	if o.hasFin {
		r.Final = o.final
	}
}
