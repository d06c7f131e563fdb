package scripted

import (
	"cmp"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/provider"
)

// postEvaluation plays the agent's check of a final answer it presented: the next of
// Script.PostEvaluation's decisions, the last one repeated. p.mu must be held.
func (p *Provider) postEvaluation() *plan {
	s := &p.script
	d := config.PostSubmit
	if n := len(s.PostEvaluation); n > 0 {
		d = s.PostEvaluation[min(p.evals, n-1)]
	}
	p.evals++
	reason := cmp.Or(s.RestartReason, "The final answer does not address every part of the question.")
	instructions := cmp.Or(s.RestartInstructions, "Cover every part of the question, and check the answer against it before submitting.")
	switch d {
	case config.PostRestart:
		return &plan{text: "The answer falls short.", stop: "tool_calls",
			calls: []provider.ToolCall{p.call(coord.ToolRestart, marshal(map[string]any{"reason": reason, "instructions": instructions}))}}
	case config.PostBadRestart:
		return &plan{text: "Restarting.", stop: "tool_calls",
			calls: []provider.ToolCall{p.call(coord.ToolRestart, marshal(map[string]any{"reason": reason}))}}
	case config.PostIgnore:
		return &plan{text: "The answer looks fine to me.", stop: "stop"}
	}
	return &plan{text: "The answer is complete.", stop: "tool_calls",
		calls: []provider.ToolCall{p.call(coord.ToolSubmit, `{"confirmed":true}`)}}
}
