package view

import (
	"strings"

	"massgen/internal/event"
)

// restartLine prints the orchestration restart events: the post-evaluation, its decision, and
// a restart's banner with the reason and instructions every agent reads next.
func (p *Plain) restartLine(v event.Payload) {
	switch v := v.(type) {
	case event.PostEvaluationStarted:
		p.endFinal()
		what := "the final answer"
		if v.Debug {
			what = "debug_final_answer in place of the final answer"
		}
		p.line("post-evaluation by %s (attempt %d/%d): checks %s", p.who(v.Agent), v.Attempt, v.MaxAttempts, what)
	case event.AnswerSubmittedFinal:
		p.flush(v.Agent)
		if v.Auto {
			p.line("post-evaluation: no decision (%s); the final answer of attempt %d stands", oneLine(v.Why, 200), v.Attempt)
			return
		}
		p.line("%s: submit: the final answer of attempt %d stands", p.who(v.Agent), v.Attempt)
	case event.OrchestrationRestarted:
		p.flush(v.Agent)
		p.wrote = false // the next attempt's final answer is printed anew
		p.line("%s", strings.Repeat("=", 60))
		p.line("ORCHESTRATION RESTART (attempt %d/%d), asked by %s", v.Attempt, v.MaxAttempts, p.who(v.Agent))
		p.line("reason: %s", oneLine(v.Reason, 500))
		p.line("instructions: %s", oneLine(v.Instructions, 500))
		p.line("%s", strings.Repeat("=", 60))
	}
}
