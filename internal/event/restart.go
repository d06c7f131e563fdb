package event

// Orchestration restart events (coordination.max_orchestration_restarts): after the final
// answer the presenter evaluates it and ends with submit (AnswerSubmittedFinal) or
// restart_orchestration (OrchestrationRestarted, which also opens the next attempt). A turn
// runs at most 1 + max_orchestration_restarts attempts; the last one is not evaluated.

// PostEvaluationStarted: Agent, who presented attempt Attempt's final answer, starts checking
// it. Its model calls (stage post_evaluation) and tool calls follow; its streamed text is
// marked Presentation, as the presentation's is.
type PostEvaluationStarted struct {
	Agent       string `json:"agent"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	// Debug is set when debug_final_answer replaced the answer it reads (attempt 1 only).
	Debug bool `json:"debug,omitempty"`
}

// AnswerSubmittedFinal: the post-evaluation accepted the final answer of attempt Attempt,
// which stands. Auto is set when the model did not decide (no call, wrong calls twice, an
// error, the budget); Why then says what happened.
type AnswerSubmittedFinal struct {
	Agent   string `json:"agent"`
	Attempt int    `json:"attempt"`
	Auto    bool   `json:"auto,omitempty"`
	Why     string `json:"why,omitempty"`
}

// OrchestrationRestarted: Agent's post-evaluation called restart_orchestration, so attempt
// Attempt (2 or more) of MaxAttempts starts: every agent begins again from nothing, with
// Reason, Instructions and the previous attempt's final answer (PreviousAnswer) at the top of
// its first message. Answers, votes and the winner are the new attempt's from here on; usage
// and cost add up over the attempts.
type OrchestrationRestarted struct {
	Agent          string `json:"agent"`
	Attempt        int    `json:"attempt"`
	MaxAttempts    int    `json:"max_attempts"`
	Reason         string `json:"reason"`
	Instructions   string `json:"instructions"`
	PreviousAnswer string `json:"previous_answer,omitempty"`
}

func (PostEvaluationStarted) Type() string  { return "post_evaluation_started" }
func (AnswerSubmittedFinal) Type() string   { return "final_submitted" }
func (OrchestrationRestarted) Type() string { return "orchestration_restarted" }
