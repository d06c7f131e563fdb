package subagent

import (
	"context"

	"massgen/internal/provider"
)

// Call is one subagent the orchestrator launches itself (the round evaluator,
// criteria_mode: bootstrap_subagent's critic) rather than an agent's spawn_subagents: it is
// outside the agents' spawn caps, inside the session's shared budget and its concurrency.
type Call struct {
	Agent    string // the agent it is billed to and counted under
	Kind     string // KindRoundEvaluator, KindCriteriaCritic
	ID       string // wanted id (made unique); "" for <agent>_sub<n>
	Question string
	Refine   bool
}

// Reply is how a launched subagent ended: its answer, or Error when it gave none, and what it
// spent, which the caller bills.
type Reply struct {
	ID     string
	Answer string
	Error  string
	Spent  provider.Usage
}

// Launch runs c to its end, publishing its start and end like any subagent's. It returns
// when the subagent has ended: by its answer, its timeout, the budget, or ctx.
func (m *Manager) Launch(ctx context.Context, c Call) Reply {
	if left, ok := m.remaining(); ok && left <= 0 {
		return Reply{Error: "the session's max_cost_usd is spent: no subagent can start"}
	}
	id := m.reserve(c.Agent, c.ID)
	r := Request{Agent: c.Agent, ID: id, Kind: c.Kind, Question: c.Question, System: system(c.Kind), Refine: c.Refine,
		Timeout: m.set.Timeout, Presentation: m.set.Timeout / presentationPart, LogRoot: m.set.LogRoot}
	m.wg.Add(1)
	defer m.wg.Done()
	res := m.launch(ctx, r, false)
	out := Reply{ID: id, Spent: res.spent}
	if res.Success {
		out.Answer = res.Answer
	} else {
		out.Error = cmpOr(res.Error, "it gave no answer ("+res.Status+")")
	}
	return out
}
