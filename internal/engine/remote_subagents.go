package engine

import "context"

// The orchestrator's own subagents (criteria_mode: bootstrap_subagent's critic, the round
// evaluator, verifiers with subagent: true) for a remote driver: the coordinator launches
// them where the driver says (SubagentOn: on the worker that holds the session), before an
// agent's round (BeforeTurn) as Run's agents do, or while it presents (verifiers). What they
// decide is the coordinator's, kept as ops so that replicas (and a coordinator resumed from
// the ops) rebuild it: the criteria a critique added, the answer sets read, and the
// evaluator's report until the agent's round opens with it. What they spend is counted once,
// by the coordinator (accountSpentLocked, an OpUsage).

// The kinds of Op of the orchestrator's subagents.
const (
	OpCritique   = "critique"    // the critic read answer set Seen; Proposals joined the criteria
	OpEvaluate   = "evaluate"    // the evaluator read answer set Seen before Agent's round; Text is its report
	OpReportRead = "report_read" // Agent's round opened with the evaluator's report
)

// SubagentFunc launches one of the orchestrator's subagents and returns how it ended.
type SubagentFunc func(ctx context.Context, c SubagentCall) SubagentReply

// SubagentOn has the coordinator launch the orchestrator's subagents with f, for a session
// whose subagents run elsewhere.
func (x *Coordinator) SubagentOn(f SubagentFunc) { x.s.o.Subagent = f }

// BeforeTurn runs what comes before agent i's round, as Run does before each: the criteria
// critic (bootstrap_subagent) and the round evaluator, each launched with SubagentOn's
// function while the driver waits. It reports whether the round can begin: false when
// coordination ended meanwhile, or the agent no longer needs a turn.
func (x *Coordinator) BeforeTurn(ctx context.Context, i int) bool {
	s := x.s
	s.mu.Lock()
	defer s.mu.Unlock()
	var c conversation // the coordinator's conversations travel: none of them is a redo
	return s.beforeRoundLocked(ctx, i, &c)
}

// noteOpLocked keeps op on a coordinator's list (a session that is no coordinator keeps
// none). s.mu must be held.
func (s *session) noteOpLocked(op Op) {
	if s.rb != nil && s.rb.op != nil {
		s.rb.op(op)
	}
}

// reportWaiting reports whether agent i's next round opens with an evaluator's report.
func (x *Coordinator) reportWaiting(i int) bool { return x.s.reports[i] != "" }

// reportRead notes that agent i's round opened with the report that was waiting, if one was.
func (x *Coordinator) reportRead(i int, was bool) {
	if was && x.s.reports[i] == "" {
		x.ops = append(x.ops, Op{Kind: OpReportRead, Agent: i})
	}
}

// replayBootstrap applies an op of the orchestrator's subagents on a replica.
func (s *session) replayBootstrap(op Op) {
	switch op.Kind {
	case OpCritique:
		s.critiqued[op.Seen] = true
		s.criticRuns++
		s.m.AddCriteria(op.Proposals)
	case OpEvaluate:
		s.evaluated[op.Seen] = true
		s.evaluatorRuns++
		s.reports[op.Agent] = op.Text
	case OpReportRead:
		s.reports[op.Agent] = ""
	}
}

// AgentIndex is the index of the agent with id, -1 for none.
func (x *Coordinator) AgentIndex(id string) int { return x.s.index(id) }
