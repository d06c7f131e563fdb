package config

import (
	"fmt"
	"slices"

	"massgen/internal/suggest"
)

// Verifiers (orchestrator.verifiers, this port's): before an answer can win, each verifier
// judges one aspect of it, correctness first. MassGen has no such key; it generalises
// checklist_gated voting, where the voters themselves score the answers.

const secVerifier = "orchestrator.verifiers[]"

// The aspects a verifier judges.
const (
	AspectCorrectness  = "correctness"
	AspectCompleteness = "completeness"
	AspectFormat       = "format"
	AspectCustom       = "custom"
)

// Aspects are the values of verifiers[].aspect, in the order a session checks them.
var Aspects = []string{AspectCorrectness, AspectCompleteness, AspectFormat, AspectCustom}

// Verifier is one entry of orchestrator.verifiers: who judges which aspect of the leading
// answer. Agent is the agent whose model makes the check ("" with Subagent: a verifier
// subagent; "" without: the first agent).
type Verifier struct {
	Aspect       string
	Agent        string
	Subagent     bool
	Instructions string
	agentF       *field // where agent: is written, checked against the agents once both are read
}

// maxVerifiers bounds the list: each one is a paid call per checked answer.
const maxVerifiers = 8

func verifierKeys() []Key {
	return []Key{
		{Section: secVerifier, Name: "aspect", Type: TypeEnum, Enum: Aspects, Status: Implemented, Since: "port", ex: "completeness",
			Doc: "What it judges: correctness, completeness, format, or custom (its instructions say what).",
			set: func(_ *walker, t *target, v value) { t.ver.Aspect = v.s }},
		{Section: secVerifier, Name: "agent", Type: TypeString, Status: Implemented, Since: "port", ex: "a",
			Doc: "The id of the agent whose model makes the check, in a fresh conversation (default: the first agent).",
			set: func(_ *walker, t *target, v value) { t.ver.Agent, t.ver.agentF = v.s, &v.f }},
		{Section: secVerifier, Name: "subagent", Type: TypeBool, Default: "false", Status: Implemented, Since: "port",
			Doc: "Check with a verifier subagent (a nested session of the team) instead of one agent's model call.",
			set: func(_ *walker, t *target, v value) { t.ver.Subagent = v.b }},
		{Section: secVerifier, Name: "instructions", Type: TypeString, Status: Implemented, Since: "port",
			Doc: "What to check, added to the aspect's own instructions (required for custom).",
			set: func(_ *walker, t *target, v value) { t.ver.Instructions = v.s }},
	}
}

func (w *walker) verifiers(f field, t *target) []Verifier {
	list := walkEach(w, f, t, secVerifier, "write {aspect: correctness}", func(t *target, x *Verifier) { t.ver = x },
		func(x *Verifier) bool { return x.Aspect != "" })
	if len(list) > maxVerifiers {
		w.errf(f, fmt.Sprintf("keep at most %d verifiers", maxVerifiers), "%d verifiers is too many: each is a paid check of every answer it reads", len(list))
		return nil
	}
	// Correctness first: an answer that is wrong need not be checked for anything else.
	slices.SortStableFunc(list, func(a, b Verifier) int { return slices.Index(Aspects, a.Aspect) - slices.Index(Aspects, b.Aspect) })
	return list
}

func verifierAfter(w *walker, t *target, f field, present map[string]field) {
	v := t.ver
	switch {
	case v.Aspect == "":
		w.errAt(f.loc, "missing required key `aspect`", "add aspect: "+oneOf(Aspects), f.raw)
	case v.Aspect == AspectCustom && v.Instructions == "":
		w.errAt(f.loc, "a custom verifier needs instructions", "add instructions: saying what the verifier checks", f.raw)
	}
	if _, ok := present["agent"]; ok && v.Subagent {
		w.errAt(f.loc, "a verifier is either an agent's check or a subagent, not both", "remove agent:, or subagent: true", f.raw)
	}
}

// checkVerifiers checks each verifier's agent against the agents, and that the session votes.
func (w *walker) checkVerifiers(t *target, defs []agentDef) {
	o := &t.cfg.Orchestrator
	w.verifiersModeCheck(t)
	var ids []string
	for _, d := range defs {
		if d.idN != nil {
			ids = append(ids, d.agent.ID)
		}
	}
	for _, v := range o.Verifiers {
		if v.agentF == nil || slices.Contains(ids, v.Agent) {
			continue
		}
		sugg := "use the id of one of the agents: " + oneOf(quoteAll(ids))
		if c := suggest.Closest(v.Agent, ids); c != "" {
			sugg = fmt.Sprintf("did you mean `%s`?", c)
		}
		w.errf(*v.agentF, sugg, "verifier agent `%s` is not the id of an agent", clip(v.Agent))
	}
}

// verifiersModeCheck refuses verifiers in decomposition mode, where parts are merged, not
// voted on, so there is no leading answer to check.
func (w *walker) verifiersModeCheck(t *target) {
	if t.verifiersF != nil && len(t.cfg.Orchestrator.Verifiers) > 0 && t.cfg.Orchestrator.Decomposing() {
		w.errf(*t.verifiersF, "remove verifiers, or use coordination_mode: voting",
			"verifiers check the answer that would win the vote, and decomposition mode has no vote")
	}
}
