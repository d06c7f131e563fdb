package engine

import "massgen/internal/taskplan"

// Agent task planning under a remote driver. Locally an agent's plan lives in the session
// (s.tp.plans) for the whole run. A remote driver runs each turn on a replica rebuilt from
// the ops, which know nothing of plans; but a plan belongs to one agent and only that agent's
// turns change it, so it travels with the agent's Conversation: BeginTurn hands it to the
// turn, RunTurn puts it into the replica before the turn and takes it back after, and Finish
// keeps it even when a failed turn resets the conversation, as the local session keeps it.

// planForTurn is agent i's plan for its next turn: the one its last turn left, else an
// execution run's planned tasks (Options.PlanSeed), else an empty plan; nil when task
// planning is off.
func (x *Coordinator) planForTurn(i int, p *taskplan.Plan) *taskplan.Plan {
	if x.s.tp == nil {
		return nil
	}
	if p != nil {
		return p
	}
	seed := taskplan.Plan{Tasks: x.s.o.PlanSeed}
	return &taskplan.Plan{Tasks: seed.Clone()}
}

// takePlan puts agent i's plan, as its conversation carries it, into the replica that runs
// its turn. With task_planning_filesystem_mode the plan file follows it: an execution run's
// seeded plan is written by no coordinator (the workspaces are the workers'), and a workspace
// restored on another worker from an older snapshot would hold an older plan.
func (s *session) takePlan(i int, p *taskplan.Plan) {
	if s.tp == nil || p == nil {
		return
	}
	s.mu.Lock()
	s.tp.plans[i] = taskplan.Plan{Tasks: p.Clone()}
	s.mu.Unlock()
	if len(p.Tasks) > 0 {
		s.savePlan(i, p.Clone())
	}
}

// givePlan is agent i's plan as its turn left it on this replica, for its conversation.
func (s *session) givePlan(i int) *taskplan.Plan {
	if s.tp == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &taskplan.Plan{Tasks: s.tp.plans[i].Clone()}
}

func withPlan(c Conversation, p *taskplan.Plan) Conversation {
	c.Plan = p
	return c
}
