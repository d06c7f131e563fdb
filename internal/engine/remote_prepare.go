package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"massgen/internal/event"
	"massgen/internal/paraphrase"
	"massgen/internal/provider"
)

// The steps Run takes before coordination (persistent memory's recall, planning mode's
// check, orchestrator.dspy's paraphrases, persona_generator's personas, decomposition's
// subtasks), for a driver that runs the model calls elsewhere: RunPrepare makes them on a
// replica with providers and tools, and the coordinator applies what they decided
// (Coordinator.Prepare), which later replicas rebuild from its op. Each step's decision is
// the event Run publishes for it.

// Prepared is what the steps before coordination decided; nil for a step the session does
// not take.
type Prepared struct {
	Planning   *event.PlanningDecided     `json:"planning,omitempty"`
	Paraphrase *event.QuestionParaphrased `json:"paraphrase,omitempty"`
	Personas   *event.PersonasGenerated   `json:"personas,omitempty"`
	Subtasks   *event.SubtasksAssigned    `json:"subtasks,omitempty"`
	// Memories are what Options.Recall found for each agent ("" for none), which its system
	// message carries (Options.RemoteMemory); MemoryTrouble says why recall could not run.
	Memories      []string             `json:"memories,omitempty"`
	MemoryTrouble *event.MemoryTrouble `json:"memory_trouble,omitempty"`
}

// OpPrepare applies a Prepared (Op.Prepared).
const OpPrepare = "prepare"

// prepare takes the steps o asks for, in Run's order, and returns what they decided.
func (s *session) prepare(ctx context.Context) Prepared {
	orch := s.o.Orchestrator
	var p Prepared
	if orch.PlanningMode {
		ev := s.decidePlanning(ctx)
		p.Planning = &ev
	}
	if orch.DSPy.Enabled {
		p.Paraphrase = s.paraphraseQuestion(ctx)
	}
	if orch.PersonaGenerator.Enabled {
		p.Personas = s.generatePersonas(ctx)
	}
	if s.decomposing() {
		p.Subtasks = s.assignSubtasks(ctx)
	}
	return p
}

// adopt takes p's decisions as the session's, publishing each when publish is set.
func (s *session) adopt(p Prepared, publish bool) {
	show := func(ev event.Payload) {
		if publish {
			s.publish(ev)
		}
	}
	s.applyRecalled(p.Memories)
	if ev := p.MemoryTrouble; ev != nil {
		show(*ev)
	}
	if ev := p.Planning; ev != nil {
		s.plan = planFrom(*ev)
		show(*ev)
	}
	if ev := p.Paraphrase; ev != nil {
		s.variants = s.variantsFrom(*ev)
		show(*ev)
	}
	if ev := p.Personas; ev != nil {
		s.personas = s.personasFrom(*ev)
		show(*ev)
	}
	if ev := p.Subtasks; ev != nil {
		s.subtasks = s.subtasksFrom(*ev)
		show(*ev)
	}
}

// NeedsPrepare reports whether the steps before coordination are still to be taken.
func (x *Coordinator) NeedsPrepare() bool {
	orch := x.s.o.Orchestrator
	steps := (orch.PlanningMode || orch.DSPy.Enabled || orch.PersonaGenerator.Enabled || x.s.decomposing()) && !x.s.m.Ended()
	// Recall comes even when coordination is skipped: the presenter's prompt carries it.
	return (steps || x.s.o.RemoteMemory) && !slices.ContainsFunc(x.ops, func(op Op) bool { return op.Kind == OpPrepare })
}

// Prepare applies and publishes what RunPrepare decided, as Run does before coordination;
// the steps' spending (Account) is in by then, and a budget it used up ends coordination.
func (x *Coordinator) Prepare(p Prepared) {
	x.ops = append(x.ops, Op{Kind: OpPrepare, Prepared: &p})
	x.s.adopt(p, true)
	x.s.seedPlans(nil) // an execution run's plans come after the steps, as in Run
	if x.s.overBudget {
		x.End(event.EndBudget)
	}
}

// PrepareFailed is what the steps decide when they could not run at all (no worker took
// them): each falls back as it does when its model call fails, planning mode holding every
// MCP tool back.
func (x *Coordinator) PrepareFailed(why string) Prepared {
	s, orch := x.s, x.s.o.Orchestrator
	err := errors.New(why)
	var p Prepared
	if s.o.RemoteMemory {
		p.MemoryTrouble = &event.MemoryTrouble{Stage: "retrieve", Message: why + "; the agents start without their memories"}
	}
	if orch.PlanningMode {
		ev := s.planningVerdict(nil, "", err)
		p.Planning = &ev
	}
	if orch.DSPy.Enabled {
		ev := event.QuestionParaphrased{Writer: s.agents[0].ID, Model: s.agents[0].Backend + "/" + s.agents[0].Model, Strategy: orch.DSPy.Strategy}
		ev = s.paraphrased(ev, paraphrase.Outcome{Warning: fmt.Sprintf("the paraphrases could not be written (%s); every agent reads the original question", why)})
		p.Paraphrase = &ev
	}
	if orch.PersonaGenerator.Enabled {
		ev := s.personasWritten("", err)
		p.Personas = &ev
	}
	if s.decomposing() {
		ev, _ := s.splitTask(func(string) (string, error) { return "", err })
		p.Subtasks = &ev
	}
	return p
}

// RunPrepare takes the steps before coordination for the session ops rebuild, with
// o.Agents' providers and tools (and o.Paraphraser, o.Recall), publishing on o.Bus what Run publishes
// for them; the steps' own events are the coordinator's to publish (Decided). It returns what
// they decided and what their calls spent.
func RunPrepare(ctx context.Context, o Options, ops []Op) (Prepared, provider.Usage, float64) {
	s := replica(o, ops)
	startCost, startUsage := s.cost, s.usage
	// Recall first, as in Run: the steps after it see the agents' memories.
	memories := s.recalled(ctx)
	s.applyRecalled(memories)
	var p Prepared
	if !s.m.Ended() { // coordination skipped: only recall is taken
		p = s.prepare(ctx)
	}
	p.Memories = memories
	s.awaitStragglers()
	return p, subUsage(s.usage, startUsage), s.cost - startCost
}
