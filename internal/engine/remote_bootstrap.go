package engine

import (
	"massgen/internal/coord"
	"massgen/internal/criteria"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// Checklists and the orchestrator's own subagents for a remote driver. A turn runs on a
// replica, whose machine accepts the agent's submit_checklist calls (and, with criteria_mode:
// bootstrap_inline, the criteria proposed with them); those changes would be lost with the
// replica, so the turn returns them (TurnOutcome.Checklists) and the coordinator adopts them
// (OpChecklist): the verdict the agent read is the one its vote is held to, and later
// replicas score the criteria the proposals added. The critic, the round evaluator and the
// verifier subagents run where the coordinator says (SubagentOn), and their outcomes are ops
// too (remote_subagents.go).

// Checklisted is a checklist a turn's replica accepted, with the proposals it took.
type Checklisted struct {
	Checklist coord.Checklist     `json:"checklist"`
	Proposals []criteria.Proposal `json:"proposals,omitempty"`
}

// OpChecklist adopts a checklist a turn accepted (Op.Checklist).
const OpChecklist = "checklist"

// remoteBootstrap is a session's part in the exchange: a replica records its turn's
// checklists; a coordinator counts what the orchestrator's subagents spend as ops.
type remoteBootstrap struct {
	record     bool
	checklists []Checklisted
	// account, on a coordinator, counts spending as Coordinator.Account does; op keeps an op.
	account func(i int, u provider.Usage, cost float64)
	op      func(Op)
}

// recordChecklistLocked keeps a checklist agent's turn accepted on a replica, with the
// criteria its proposals added, for the coordinator. s.mu must be held.
func (s *session) recordChecklistLocked(out coord.ChecklistOutcome) {
	if s.rb == nil || !s.rb.record {
		return
	}
	var props []criteria.Proposal
	for _, a := range out.Added {
		props = append(props, criteria.Proposal{Text: a.Text, Category: a.Category})
	}
	s.rb.checklists = append(s.rb.checklists, Checklisted{Checklist: out.Checklist, Proposals: props})
}

// attachBootstrap makes x's session count the orchestrator's subagents' spending as ops.
func (x *Coordinator) attachBootstrap() {
	x.s.rb = &remoteBootstrap{account: x.account, op: func(op Op) { x.ops = append(x.ops, op) }}
}

// adoptChecklists applies the checklists agent i's turn accepted, in order, and publishes the
// criteria they added (the replica's copy of that event is left out: Decided).
func (x *Coordinator) adoptChecklists(i int, list []Checklisted) {
	s := x.s
	for _, ck := range list {
		ck := ck
		x.ops = append(x.ops, Op{Kind: OpChecklist, Agent: i, Checklist: &ck})
		// The replica's machine, rebuilt from these ops, accepted it: an error would be a
		// checklist from another session, which then gates nothing.
		added, evicted, _ := s.m.AdoptChecklist(i, ck.Checklist, ck.Proposals)
		if len(added) > 0 || len(evicted) > 0 {
			s.publish(s.criteriaEventLocked(s.agents[i].ID, event.CriteriaInline, added, evicted))
		}
	}
}

// replayChecklist is OpChecklist on a replica.
func (s *session) replayChecklist(op Op) {
	if op.Checklist != nil {
		_, _, _ = s.m.AdoptChecklist(op.Agent, op.Checklist.Checklist, op.Checklist.Proposals)
	}
}
