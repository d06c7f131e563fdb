package tui

import (
	"encoding/json"
	"fmt"
	"slices"

	"massgen/internal/event"
	"massgen/internal/readmodel"
	"massgen/internal/view"
)

// pane is the view state of one agent beyond what readmodel.State holds: its last tool activity,
// its run of failed turns, and the cache of its wrapped text.
type pane struct {
	a *readmodel.Agent
	// ver changes whenever anything shown about the agent changes.
	ver int64
	// activity is the agent's last tool activity, e.g. "vote -> agent2"; bad marks a rejection
	// or a failure.
	activity string
	bad      bool
	// short is activity without its details ("writing new_answer…" without the size), for a
	// column too narrow for the whole of it; "" when there is none.
	short string
	// calls are the agent's last tool calls, oldest first (maxCalls at most).
	calls []toolCall
	// cutSeen is how many of the agent's CutOff calls the pane has told.
	cutSeen int
	// failures is the run of consecutive failed turns, out of budget.
	failures, budget int
	// persona is the persona persona_generator wrote for the agent ("" without one).
	persona string

	body bodyCache
	chr  chrome
}

// bodyCache holds a pane's wrapped, styled text lines for one version and size.
type bodyCache struct {
	ver   int64
	w, n  int
	lines []string
}

// Apply folds one event into the model: the session state, the coordination table and the
// agents' view state. It is the pure reducer behind Update and can be used without a program.
func (m *Model) Apply(e event.Event) {
	if p, ok := e.Payload.(event.AnswerSubmitted); ok {
		m.invalidated(p)
	}
	m.table.Handle(e) // applies e to m.st
	switch e.Payload.(type) {
	case event.TextDelta, event.ReasoningDelta, event.ToolCallStreaming:
	default:
		m.tableVer++
	}
	m.dirty = true
	m.permissionEvent(e)
	m.callEvent(e)
	switch p := e.Payload.(type) {
	case event.SessionStarted:
		for len(m.panes) < len(m.st.Agents) {
			pn := &pane{a: m.st.Agents[len(m.panes)], budget: p.Settings.FailureBudget}
			m.panes = append(m.panes, pn)
			m.byID[pn.a.ID] = pn
		}
		if w := view.BudgetWarning(p); w != "" {
			m.notice(w)
		}
		for _, w := range view.EndpointWarnings(p) {
			m.notice(w)
		}
	case event.OrchestrationRestarted:
		// The banner stays for the rest of the turn: every agent now works on it.
		m.notice(fmt.Sprintf("orchestration restart: attempt %d/%d, asked by %s: %s", p.Attempt, p.MaxAttempts, m.label(p.Agent), p.Reason))
	case event.AnswerSubmittedFinal:
		if p.Auto {
			m.notice(fmt.Sprintf("post-evaluation made no decision (%s): the final answer of attempt %d stands", p.Why, p.Attempt))
		}
	case event.ToolServerStatus:
		if !event.OwnServer(p.Server) && (p.Status == "failed" || p.Status == "died") {
			m.notice(fmt.Sprintf("mcp server %s %s: %s", p.Server, p.Status, p.Detail))
		}
	case event.TextDelta:
		m.touch(p.Agent)
	case event.ReasoningDelta:
		m.touch(p.Agent)
	case event.TurnStarted:
		m.touch(p.Agent)
	case event.ModelCalled:
		m.touch(p.Agent)
	case event.ToolCallStreaming:
		m.activity(p.Agent, fmt.Sprintf("writing %s… (%s)", oneLine(p.Tool, 60), byteSize(p.Bytes)), false)
		if pn := m.pane(p.Agent); pn != nil {
			pn.short = fmt.Sprintf("writing %s…", oneLine(p.Tool, 60))
		}
	case event.ToolCalled:
		m.activity(p.Agent, describeCall(p.Call.Name, p.Call.Arguments), false)
	case event.ToolRejected:
		m.activity(p.Agent, "rejected: "+p.Tool+": "+oneLine(p.Error, 200), true)
	case event.EnforcementSent:
		if a := m.st.Agent(p.Agent); a != nil && !a.Reminded {
			break // the round's time-up note, shown already
		}
		m.activity(p.Agent, "no new_answer or vote: reminded", true)
	case event.CriteriaEmerged:
		for _, l := range view.CriteriaLines(p) {
			m.notice(l)
		}
	case event.RoundEvaluated:
		if p.Warning != "" {
			m.activity(p.Agent, "round evaluator: "+oneLine(p.Warning, 200), true)
		} else {
			m.activity(p.Agent, "round evaluator reviewed the answers: "+oneLine(p.Report, 200), false)
		}
	case event.PersonasGenerated:
		for _, ps := range p.Personas {
			if pn := m.pane(ps.Agent); pn != nil {
				pn.persona = oneLine(ps.Text, 4000)
				if ps.Fallback {
					pn.persona = "(built-in) " + pn.persona
				}
				pn.chr = chrome{}
				pn.ver++
			}
		}
		if p.Warning != "" {
			m.notice("personas: " + p.Warning)
		}
	case event.TaskPlanChanged:
		if pn := m.pane(p.Agent); pn != nil {
			pn.ver++
		}
	case event.QuestionParaphrased:
		for _, pv := range p.Variants {
			m.activity(pv.Agent, view.ParaphraseText(pv, p.Cached), pv.Fallback && pv.Why != "")
		}
		if p.Warning != "" {
			m.notice("paraphrases: " + p.Warning)
		}
	case event.RoundTimeout:
		m.activity(p.Agent, view.RoundTimeoutText(p), true)
	case event.VoteDeferred:
		m.activity(p.Agent, view.DeferredVote(p), false)
		m.succeeded(p.Agent)
	case event.AgentWaiting:
		m.activity(p.Agent, "waiting: "+oneLine(p.Reason, 200), false)
	case event.AnswerSubmitted:
		m.activity(p.Agent, "new_answer "+p.Label, false)
		m.succeeded(p.Agent)
	case event.VoteCast:
		m.activity(p.Agent, "vote -> "+p.TargetLabel, false)
		m.succeeded(p.Agent)
	case event.VoteIgnored:
		m.activity(p.Agent, fmt.Sprintf("vote -> %s not counted: saw v%d, now v%d", p.TargetLabel, p.SeenVersion, p.CurrentVersion), true)
		m.succeeded(p.Agent)
	case event.AgentError:
		kind := "error"
		if p.Timeout {
			kind = "timeout"
		}
		text := fmt.Sprintf("%s (%d/%d): %s", kind, p.Consecutive, p.Budget, oneLine(p.Message, 200))
		if p.Fatal { // a rejected key: no count of tries, it is over
			text = "fatal error: " + oneLine(p.Message, 200)
		}
		m.activity(p.Agent, text, true)
		if pn := m.pane(p.Agent); pn != nil {
			pn.failures, pn.budget = p.Consecutive, p.Budget
		}
	case event.AgentDead:
		m.activity(p.Agent, "dead: "+oneLine(p.Reason, 200), true)
	case event.PlanningDecided:
		if p.Agent != "" {
			m.activity(p.Agent, "planning check: "+oneLine(view.PlanningSummary(p), 200), false)
		}
	case event.FinalStarted:
		m.presenter = p.Agent // the winner, or presenter_agent
		m.activity(p.Agent, "presenting: "+view.FinalMethod(p.Mode, p.Winner == "" || p.Winner == p.Agent), false)
		if p.Note != "" {
			m.presenterNote = p.Note
			m.notice(p.Note)
		}
	case event.FinalAnswer:
		text := "final answer " + p.Label
		if p.Fallback {
			text += " (stored answer used)"
		}
		m.activity(p.Agent, text, false)
	case event.CoordinationEnded, event.SessionEnded:
		for _, pn := range m.panes {
			pn.ver++
		}
	case event.UsageReported:
		m.touch(p.Agent)
	case event.AgentSession:
		m.touch(p.Agent)
	}
}

// invalidated records, before the state forgets them, the votes a new answer makes stale.
func (m *Model) invalidated(p event.AnswerSubmitted) {
	for _, pn := range m.panes {
		v := pn.a.Vote
		if v == nil || pn.a.ID == p.Agent || ((v.Version >= p.Version || v.Scoped) && !slices.Contains(p.Invalidated, pn.a.ID)) {
			continue
		}
		pn.activity, pn.bad = "vote for "+v.AnswerLabel+" invalidated by "+p.Label, true
		pn.ver++
	}
}

// pane returns the pane of agent id, or nil.
func (m *Model) pane(id string) *pane { return m.byID[id] }

// touch marks agent id's pane changed.
func (m *Model) touch(id string) {
	if pn := m.pane(id); pn != nil {
		pn.ver++
	}
}

func (m *Model) activity(id, text string, bad bool) {
	if pn := m.pane(id); pn != nil {
		pn.activity, pn.short, pn.bad = text, "", bad
		pn.ver++
	}
}

// succeeded ends agent id's run of failed turns.
func (m *Model) succeeded(id string) {
	if pn := m.pane(id); pn != nil {
		pn.failures = 0
	}
}

// describeCall summarises a tool call: "vote -> agent2", "new_answer ...", "called tool".
func describeCall(name, args string) string {
	var a struct {
		AgentID string `json:"agent_id"`
	}
	switch name {
	case "vote":
		if json.Unmarshal([]byte(args), &a) == nil && a.AgentID != "" {
			return "vote -> " + oneLine(a.AgentID, 40)
		}
		return "vote"
	case "new_answer":
		return "new_answer ..."
	}
	return "called " + oneLine(name, 60) // its arguments and outcome are on its call line
}
