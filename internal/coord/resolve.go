package coord

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Workflow tool names.
const (
	ToolNewAnswer = "new_answer"
	ToolVote      = "vote"
)

// Call is one tool call from a model response.
type Call struct {
	ID, Name, Arguments string
}

// Feedback is the error result for one rejected call, phrased so the model can fix it.
type Feedback struct {
	CallID string
	Tool   string
	Error  string
}

// Kind says how a response was resolved.
type Kind int

const (
	// Retry: every call was rejected; Feedback holds one result per call.
	Retry Kind = iota
	// NoWorkflow: the response made no workflow tool call.
	NoWorkflow
	// Answered: a new answer was accepted.
	Answered
	// Voted: a vote was accepted and counts.
	Voted
	// StaleVote: the vote was cast on an answer set that is no longer current; it does not
	// count, and the agent must look at the new answers.
	StaleVote
	// Deferred: the vote came before every live agent had an answer (DeferVoting). It does not
	// count; the agent waits until they all have one and then takes its turn again.
	Deferred
	// Stopped: a stop was accepted and counts (decomposition mode).
	Stopped
	// StaleStop: the stop was made on an answer set that is no longer current; it does not
	// count, and the agent must look at the new answers.
	StaleStop
)

// Outcome is the result of resolving one model response.
type Outcome struct {
	Kind     Kind
	Answer   Answer
	Vote     Vote
	Stop     Stop // Stopped, StaleStop
	Feedback []Feedback
	// Invalidated lists the agents whose votes stopped counting because of Answer.
	Invalidated []int
	// Accepted is the ID of the call that was accepted (every Kind but Retry and NoWorkflow).
	Accepted string
	// Waiting lists the live agents without an answer yet (Deferred).
	Waiting []int
}

// Resolve applies the protocol's rules (reference/protocol.md 2.3) to one response of agent i,
// which was built from answer-set version seen. text is the streamed text, used as the answer
// when new_answer comes without content. Accepted answers and votes change the state.
func (m *Machine) Resolve(i int, calls []Call, text string, seen int) Outcome {
	if m.ended || m.agents[i].dead {
		return Outcome{Kind: Retry, Feedback: rejectAll(calls, "coordination is over; this call was not counted")}
	}
	if m.s.Decomposition {
		return m.resolveDecomposition(i, calls, text, seen)
	}
	var votes, answers int
	for _, c := range calls {
		switch c.Name {
		case ToolVote:
			votes++
		case ToolNewAnswer:
			answers++
		}
	}
	if votes+answers == 0 {
		if len(calls) == 0 {
			return Outcome{Kind: NoWorkflow}
		}
		fb := make([]Feedback, len(calls))
		for k, c := range calls {
			fb[k] = Feedback{c.ID, c.Name, fmt.Sprintf("unknown tool %q: finish by calling exactly one of new_answer or vote", c.Name)}
		}
		return Outcome{Kind: Retry, Feedback: fb}
	}
	if votes > 1 {
		fb := make([]Feedback, len(calls))
		first := true
		for k, c := range calls {
			msg := "rejected: this response made more than one vote call"
			if first && c.Name == ToolVote {
				msg = "only one vote per response is allowed: call vote exactly once"
				first = false
			}
			fb[k] = Feedback{c.ID, c.Name, msg}
		}
		return Outcome{Kind: Retry, Feedback: fb}
	}
	if votes > 0 && answers > 0 {
		return Outcome{Kind: Retry, Feedback: rejectAll(calls,
			"a response may call vote or new_answer, not both: pick one and call it alone")}
	}
	if answers > 1 {
		return Outcome{Kind: Retry, Feedback: rejectAll(calls,
			"only one new_answer per response is allowed: submit one complete answer")}
	}
	for _, c := range calls {
		switch c.Name {
		case ToolVote:
			return m.resolveVote(i, c, calls, seen)
		case ToolNewAnswer:
			return m.resolveAnswer(i, c, calls, text)
		}
	}
	return Outcome{Kind: NoWorkflow}
}

func rejectAll(calls []Call, msg string) []Feedback {
	fb := make([]Feedback, len(calls))
	for k, c := range calls {
		fb[k] = Feedback{c.ID, c.Name, msg}
	}
	return fb
}

// retryOne rejects call c with msg and every other call as not run.
func retryOne(calls []Call, c Call, msg string) Outcome {
	fb := make([]Feedback, 0, len(calls))
	for _, o := range calls {
		if o.ID == c.ID && o.Name == c.Name {
			fb = append(fb, Feedback{o.ID, o.Name, msg})
		} else {
			fb = append(fb, Feedback{o.ID, o.Name, "not run: the workflow call in this response was rejected"})
		}
	}
	return Outcome{Kind: Retry, Feedback: fb}
}

func (m *Machine) resolveVote(i int, c Call, calls []Call, seen int) Outcome {
	var args struct {
		AgentID    string          `json:"agent_id"`
		Reason     string          `json:"reason"`
		Confidence json.RawMessage `json:"confidence"`
	}
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return retryOne(calls, c, fmt.Sprintf(
			`arguments are not valid JSON (%v): call vote with {"agent_id": "agentN", "reason": "..."}`, err))
	}
	conf, err := Confidence(args.Confidence)
	if err != nil {
		return retryOne(calls, c, "vote: "+err.Error())
	}
	if m.s.SkipVoting {
		return retryOne(calls, c, "there is no vote in this session (orchestrator.skip_voting): submit your complete answer with new_answer")
	}
	view := m.agents[i].view
	if view != nil && !m.viewCurrent(view) || view == nil && seen != m.version {
		target := ParseLabel(strings.TrimSpace(args.AgentID), len(m.agents))
		v := Vote{Voter: i, Target: target, TargetLabel: strings.TrimSpace(args.AgentID), Reason: args.Reason, Version: seen, Confidence: conf}
		return Outcome{Kind: StaleVote, Vote: v, Accepted: c.ID}
	}
	labels := m.VoteLabels()
	if len(labels) == 0 {
		return retryOne(calls, c, "cannot vote: no answers exist yet; use new_answer to submit yours")
	}
	id := strings.TrimSpace(args.AgentID)
	target := ParseLabel(id, len(m.agents))
	if target < 0 || len(m.agents[target].answers) == 0 {
		return retryOne(calls, c, fmt.Sprintf("invalid agent_id %q; valid agents: %s", args.AgentID, strings.Join(labels, ", ")))
	}
	if view != nil && target != i && view[target] == 0 {
		var shown []string
		for k, n := range view {
			if n > 0 {
				shown = append(shown, Label(k))
			}
		}
		return retryOne(calls, c, fmt.Sprintf("you may vote only for an answer you were shown: %s", strings.Join(shown, ", ")))
	}
	ans, _ := m.Current(target)
	if m.s.Checklist != nil {
		if msg := m.checklistBlocksVote(i, target, seen); msg != "" {
			return retryOne(calls, c, msg)
		}
	}
	v := Vote{Voter: i, Target: target, TargetLabel: Label(target), AnswerLabel: ans.Label,
		Reason: strings.TrimSpace(args.Reason), Version: m.version, Confidence: conf}
	if view != nil {
		v.View = append([]int(nil), view...)
	}
	if m.s.DeferVoting && !m.GlobalCapReached() && !m.AllAnswered() {
		// MassGen holds back an agent that cannot answer again until everyone has answered;
		// a vote cast before then is held back the same way rather than failing the turn, as
		// the agent did nothing wrong by voting and can only wait.
		if len(m.agents[i].answers) == 0 {
			return retryOne(calls, c, "voting opens only once every agent has answered (orchestrator.defer_voting_until_all_answered), "+
				"and you have not: submit your own complete answer with new_answer")
		}
		m.agents[i].deferred = true
		return Outcome{Kind: Deferred, Vote: v, Accepted: c.ID, Waiting: m.Unanswered()}
	}
	m.agents[i].vote = &v
	return Outcome{Kind: Voted, Vote: v, Accepted: c.ID}
}

func (m *Machine) resolveAnswer(i int, c Call, calls []Call, text string) Outcome {
	var args struct {
		Content    *string         `json:"content"`
		Confidence json.RawMessage `json:"confidence"`
	}
	if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
		return retryOne(calls, c, fmt.Sprintf(
			`arguments are not valid JSON (%v): call new_answer with {"content": "your complete answer"}`, err))
	}
	conf, err := Confidence(args.Confidence)
	if err != nil {
		return retryOne(calls, c, "new_answer: "+err.Error())
	}
	content := text
	if args.Content != nil {
		content = *args.Content
	}
	content = strings.TrimSpace(content)
	if content == "" {
		return retryOne(calls, c, `new_answer needs a non-empty "content": put your complete answer there`)
	}
	if limit := m.s.MaxAnswerChars; limit > 0 {
		if n := utf8.RuneCountInString(content); n > limit {
			return retryOne(calls, c, fmt.Sprintf(
				"this answer is %d characters long, over the limit of %d (orchestrator.max_answer_chars): submit a shorter complete answer", n, limit))
		}
	}
	if m.s.CheckAnswer != nil {
		if err := m.s.CheckAnswer(content); err != nil {
			return retryOne(calls, c, "answer rejected: "+err.Error())
		}
	}
	if limit := m.s.MaxNewAnswersGlobal; limit > 0 && m.TotalAnswers() >= limit {
		return retryOne(calls, c, fmt.Sprintf(
			"the maximum of %d answers across all agents (orchestrator.max_new_answers_global) has been reached; %s instead", limit, m.instead()))
	}
	if limit := m.s.MaxNewAnswersPerAgent; limit > 0 && len(m.agents[i].answers) >= limit {
		return retryOne(calls, c, fmt.Sprintf(
			"you have reached the maximum of %d answers; %s instead", limit, m.instead()))
	}
	if lead, over := m.overLeadCap(i); over && len(m.agents[i].answers) > 0 {
		// MassGen says "wait for peers to catch up or vote"; within a turn waiting is not
		// something a model can do, so the message names the action that is.
		return retryOne(calls, c, fmt.Sprintf(
			"fairness lead cap reached: another new_answer would put you %d answers ahead of the slowest active agent "+
				"(the cap is %d, orchestrator.fairness_lead_cap_answers); %s now, "+
				"and answer again once the others have caught up", lead, m.s.LeadCap, m.instead()))
	}
	current := m.CurrentAnswers()
	for _, a := range current {
		if strings.TrimSpace(a.Content) == content {
			return retryOne(calls, c, fmt.Sprintf(
				"this answer is identical to %s's current answer: %s", Label(a.Agent), m.identical(a.Agent)))
		}
	}
	if limit, ok := noveltyLimit(m.s.Novelty); ok {
		for _, a := range current {
			if sim := Jaccard(a.Content, content); sim > limit {
				return retryOne(calls, c, fmt.Sprintf(
					"this answer is too similar to %s's current answer (%.0f%% of words shared, the limit is %.0f%%): take a substantially different approach or %s",
					Label(a.Agent), sim*100, limit*100, m.terminal()))
			}
		}
	}
	return m.accept(i, content, c.ID, conf)
}

func (m *Machine) accept(i int, content, callID string, conf *float64) Outcome {
	m.version++
	a := Answer{Agent: i, Label: fmt.Sprintf("%s.%d", Label(i), len(m.agents[i].answers)+1), Content: content, Version: m.version,
		Confidence: conf}
	m.agents[i].answers = append(m.agents[i].answers, a)
	var invalidated []int
	for k := range m.agents {
		if st := m.agents[k].stop; st != nil {
			// A new answer wakes every agent that stopped (MassGen resets has_voted).
			if st.Version == m.version-1 {
				invalidated = append(invalidated, k)
			}
			m.agents[k].stop = nil
		}
		v := m.agents[k].vote
		switch {
		case v == nil:
		case v.View != nil:
			// A bounded view's vote stops counting only if it was shown this agent's answer.
			if !m.viewCurrent(v.View) {
				invalidated = append(invalidated, k)
				m.agents[k].vote = nil
			}
		default:
			if v.Version == m.version-1 {
				invalidated = append(invalidated, k)
			}
			m.agents[k].vote = nil
		}
	}
	return Outcome{Kind: Answered, Answer: a, Invalidated: invalidated, Accepted: callID}
}

// identical is what to do instead of resubmitting agent k's answer, worded for the mode.
func (m *Machine) identical(k int) string {
	if m.s.Decomposition {
		return "submit your own part's new work, or call stop if your part is done"
	}
	return "submit a different, improved answer or vote for " + Label(k)
}

// terminal names the mode's terminal tool.
func (m *Machine) terminal() string {
	if m.s.Decomposition {
		return ToolStop
	}
	return ToolVote
}

func noveltyLimit(level string) (float64, bool) {
	switch level {
	case "balanced":
		return 0.70, true
	case "strict":
		return 0.50, true
	}
	return 0, false
}

// Jaccard is the word-set similarity of two texts: |A∩B| / |A∪B| over lower-cased words with
// surrounding punctuation removed.
// Two empty texts are identical (1).
func Jaccard(a, b string) float64 {
	wa, wb := words(a), words(b)
	if len(wa) == 0 && len(wb) == 0 {
		return 1
	}
	inter := 0
	for w := range wa {
		if wb[w] {
			inter++
		}
	}
	return float64(inter) / float64(len(wa)+len(wb)-inter)
}

func words(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(strings.ToLower(s)) {
		if w = strings.TrimFunc(w, isPunct); w != "" {
			set[w] = true
		}
	}
	return set
}

func isPunct(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) }
