package readmodel

import "massgen/internal/event"

// maxPending bounds the calls remembered as running per agent; the engine caps the calls of a
// response well below it (max_tool_calls_per_response), so only a hostile log reaches it.
const maxPending = 64

// CutCall is a tool call the end of coordination or of the session cut off.
type CutCall struct {
	Tool string
	// Writing: the model was still writing the call; otherwise the tool ran and had no result.
	Writing bool
}

// pendingCall is a tool call the agent made that has had no result yet.
type pendingCall struct{ id, tool string }

// workflowTool reports whether name is answered by AnswerSubmitted, VoteCast or ToolRejected
// rather than a ToolResult (coord.ToolNewAnswer, coord.ToolVote; state.js's workflow set), so
// its call is never left running.
func workflowTool(name string) bool { return name == "new_answer" || name == "vote" }

// toolCalls folds what the views need to tell a call in progress from one the end cut off:
// the call the agent is writing (Writing), the calls that run without a result yet, and at the
// end of coordination or of the session, both of those as CutOff. state.js folds the same.
func (s *State) toolCalls(p event.Payload) {
	switch p := p.(type) {
	case event.ToolCallStreaming:
		s.agent(p.Agent, func(a *Agent) { a.Writing = p.Tool })
	case event.ToolCalled:
		s.agent(p.Agent, func(a *Agent) {
			a.Writing = ""
			if !workflowTool(p.Call.Name) && p.Call.ID != "" && len(a.pending) < maxPending {
				a.pending = append(a.pending, pendingCall{p.Call.ID, p.Call.Name})
			}
		})
	case event.ToolResult:
		s.agent(p.Agent, func(a *Agent) { a.answered(p.CallID) })
	case event.ToolRejected:
		s.agent(p.Agent, func(a *Agent) { a.Writing = ""; a.answered(p.CallID) })
	case event.TurnStarted, event.ModelCalled, event.AgentError, event.AgentDead:
		// A new model call starts after the last response's tools have all run; a failed turn
		// or a dead agent ends its calls, and the end of the session does not cut them off.
		s.agent(agentOf(p), func(a *Agent) { a.Writing, a.pending = "", nil })
	case event.AnswerSubmitted:
		s.agent(p.Agent, func(a *Agent) { a.Writing = "" })
	case event.VoteCast:
		s.agent(p.Agent, func(a *Agent) { a.Writing = "" })
	case event.VoteIgnored:
		s.agent(p.Agent, func(a *Agent) { a.Writing = "" })
	case event.CoordinationEnded, event.SessionEnded:
		for _, a := range s.Agents {
			a.cutOff()
		}
	}
}

// agentOf is the agent the payloads toolCalls ends the calls of are about.
func agentOf(p event.Payload) string {
	switch p := p.(type) {
	case event.TurnStarted:
		return p.Agent
	case event.ModelCalled:
		return p.Agent
	case event.AgentError:
		return p.Agent
	case event.AgentDead:
		return p.Agent
	}
	return ""
}

// agent applies f to agent id; unknown ids are ignored.
func (s *State) agent(id string, f func(*Agent)) {
	if a := s.byID[id]; a != nil {
		f(a)
	}
}

// answered forgets the running call id.
func (a *Agent) answered(id string) {
	for i, c := range a.pending {
		if c.id == id {
			a.pending = append(a.pending[:i:i], a.pending[i+1:]...)
			return
		}
	}
}

// cutOff moves the call being written and the running ones to CutOff.
func (a *Agent) cutOff() {
	if a.Writing != "" && len(a.CutOff) < maxPending {
		a.CutOff = append(a.CutOff, CutCall{Tool: a.Writing, Writing: true})
	}
	for _, c := range a.pending {
		if len(a.CutOff) < maxPending {
			a.CutOff = append(a.CutOff, CutCall{Tool: c.tool})
		}
	}
	a.Writing, a.pending = "", nil
}
