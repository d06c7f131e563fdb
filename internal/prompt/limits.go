package prompt

import (
	"fmt"
	"time"
)

// Cut tells an agent that its last response was not used because it was cut off: by the
// model's output token limit (stop is the backend's stop reason) or, when stop is "", by
// massgen's own cap of responseChars characters.
func Cut(stop string, responseChars, answerChars int) string {
	why := fmt.Sprintf("it went over %d characters (orchestrator.max_response_chars)", responseChars)
	if stop != "" {
		why = fmt.Sprintf("the output token limit stopped it (stop reason %q) before it was complete", stop)
	}
	return fmt.Sprintf("Your last response was cut off: %s. None of it was used and none of its tool calls were run. "+
		"Take your turn again, shorter: finish with exactly one call, vote or new_answer; a new answer may hold at most "+
		"%d characters (orchestrator.max_answer_chars).", why, answerChars)
}

// CutNotRun is the result of each tool call of a response that was cut off.
const CutNotRun = "not run: the response that made this call was cut off, so its arguments may be incomplete"

// TooManyCalls is the result that stands for the tool calls past the cap of one response.
func TooManyCalls(limit int) string {
	return fmt.Sprintf("not run: this response made more than %d tool calls (orchestrator.max_tool_calls_per_response); "+
		"this call and every later one were dropped. Make at most %d calls in one response.", limit, limit)
}

// RoundTimeUp tells an agent that its round went over its round timeout
// (initial_round_timeout_seconds for its first round, subsequent_round_timeout_seconds after):
// it must submit now, and the round is cut off when left runs out.
// With vote false (skip_voting) only new_answer is named.
func RoundTimeUp(first, vote bool, elapsed, limit, left time.Duration) string {
	kind := "this round"
	if first {
		kind = "your first round"
	}
	finish := "new_answer with your best complete answer so far, or vote for the best current answer"
	if !vote {
		finish = "new_answer with your best complete answer so far"
	}
	return fmt.Sprintf("Time is up for %s: %s spent, the limit is %s. Stop exploring and finish now with exactly one call: %s. "+
		"In %s this round is cut off and nothing more from it counts; later rounds can improve on it.",
		kind, elapsed.Round(time.Second), limit, finish, left.Round(time.Second))
}
