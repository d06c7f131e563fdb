package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// Decomposition mode (orchestrator.coordination_mode: decomposition): every agent owns a part
// of the task, shares its work with new_answer, reads the others' work, and signals its part
// done with stop; once every live agent is done, the presenter (presenter_agent, else the last
// agent, as in MassGen) integrates the parts. The parts' workspace files are gathered into the
// presenter's workspace first, so that they reach the final result whatever the presenter
// does; a part that did not finish is named in the final answer, not dropped.

// partGatherer is what decomposition mode needs of the presenter's workspace besides
// Workspace (workspace.Agent has it).
type partGatherer interface {
	GatherPart(label string) (added []string, conflicts map[string]string, err error)
}

// decomposerTimeout is task_decomposer.timeout_seconds' default.
const decomposerTimeout = 300 * time.Second

func (s *session) decomposing() bool { return s.m.Decomposition() }

// decompositionWord is SessionStarted's coordination mode: "decomposition", or "" for voting.
func decompositionWord(on bool) string {
	if on {
		return "decomposition"
	}
	return ""
}

// assignSubtasks gives every agent its part: its configured subtask, else one the task
// decomposer writes in one call to the first agent's model (MassGen spawns a whole subagent
// team for it; one call gives the same kind of result), else a built-in share of the task.
// With the decomposer disabled, agents without a subtask pick their part from the task. It
// returns the event it published, nil when ctx was cancelled first.
func (s *session) assignSubtasks(ctx context.Context) *event.SubtasksAssigned {
	ev, ok := s.splitTask(func(request string) (string, error) {
		tctx, cancel := context.WithTimeout(ctx, cmp.Or(s.o.Orchestrator.TaskDecomposer.Timeout, decomposerTimeout))
		defer cancel()
		reply, err := s.ask(tctx, 0, provider.StageDecompose, "", request)
		if ctx.Err() != nil {
			return "", errStepCancelled
		}
		return reply, err
	})
	if !ok {
		return nil
	}
	s.subtasks = s.subtasksFrom(ev)
	s.publish(ev)
	return &ev
}

// errStepCancelled: the session was cancelled during a step's call.
var errStepCancelled = errors.New("cancelled")

// splitTask is the parts assignSubtasks gives, decompose making the decomposer's call with
// its request when one is needed; false when that call was cancelled (errStepCancelled).
func (s *session) splitTask(decompose func(request string) (string, error)) (event.SubtasksAssigned, bool) {
	n := len(s.agents)
	labels := make([]string, n)
	systems := make([]string, n)
	fixed := map[string]string{}
	subtasks := make([]string, n)
	ev := event.SubtasksAssigned{}
	var missing []int
	for i, a := range s.agents {
		labels[i], systems[i] = coord.Label(i), a.System
		if t := strings.TrimSpace(a.Subtask); t != "" {
			subtasks[i], fixed[labels[i]] = t, t
		} else {
			missing = append(missing, i)
		}
	}
	source := make([]string, n)
	for i := range source {
		source[i] = event.SubtaskConfig
	}
	switch {
	case len(missing) == 0:
	case s.o.Orchestrator.TaskDecomposer.Disabled:
		for _, i := range missing {
			source[i] = event.SubtaskNone
		}
	default:
		ev.Agent = s.agents[0].ID
		reply, err := decompose(prompt.DecompositionRequest(s.o.Question, labels, systems, fixed,
			s.o.Orchestrator.TaskDecomposer.Guidelines, s.splitCriteria()))
		if errors.Is(err, errStepCancelled) {
			return ev, false
		}
		found := map[string]string{}
		if err == nil {
			found = prompt.ParseSubtasks(reply, labels)
		}
		var fell []string
		for _, i := range missing {
			if t, ok := found[labels[i]]; ok {
				subtasks[i], source[i] = t, event.SubtaskDecomposer
				continue
			}
			fell = append(fell, labels[i])
		}
		for _, i := range missing {
			if source[i] == event.SubtaskConfig {
				others := map[string]string{}
				for k, t := range subtasks {
					if t != "" {
						others[labels[k]] = t
					}
				}
				subtasks[i], source[i] = prompt.FallbackSubtask(labels[i], i, n, others), event.SubtaskFallback
			}
		}
		switch {
		case err != nil:
			ev.Warning = fmt.Sprintf("the task decomposer's call failed (%v): %s got a built-in subtask", err, strings.Join(fell, ", "))
		case len(fell) > 0:
			ev.Warning = "the task decomposer's reply had no subtask for " + strings.Join(fell, ", ") + ": they got a built-in one"
		}
	}
	for i, a := range s.agents {
		ev.Subtasks = append(ev.Subtasks, event.Subtask{Agent: a.ID, Label: labels[i], Text: subtasks[i], Source: source[i]})
	}
	return ev, true
}

// subtasksFrom is each agent's part in ev, by id.
func (s *session) subtasksFrom(ev event.SubtasksAssigned) []string {
	out := make([]string, len(s.agents))
	for _, st := range ev.Subtasks {
		if i := s.index(st.Agent); i >= 0 {
			out[i] = st.Text
		}
	}
	return out
}

// splitCriteria are the criteria a checklist preset or inline list sets (the decomposition
// preset judges a split), for the decomposer's request and the agents' parts; none when the
// config names none.
func (s *session) splitCriteria() []string {
	c := s.o.Orchestrator.Checklist
	if c.CriteriaPreset == "" && len(c.CriteriaInline) == 0 && !isChecklist(s.o.Orchestrator.VotingSensitivity) {
		return nil
	}
	out := make([]string, len(s.criteria))
	for k, cr := range s.criteria {
		out[k] = cr.Text
	}
	return out
}

// workflowTools are the workflow tools of a turn: new_answer and vote on labels, new_answer
// alone without a vote, new_answer and stop in decomposition mode.
func (s *session) workflowTools(labels []string) []provider.ToolSpec {
	switch {
	case s.decomposing():
		return prompt.DecompositionTools()
	case s.skipVoting:
		return prompt.AnswerTools()
	case s.weighting() == coord.WeightConfidence:
		return prompt.WithConfidence(prompt.Tools(labels))
	}
	return prompt.Tools(labels)
}

// enforcement is what an agent that called no workflow tool is told.
func (s *session) enforcement() string {
	switch {
	case s.decomposing():
		return prompt.EnforcementStop
	case s.skipVoting:
		return prompt.EnforcementNoVote
	}
	return prompt.Enforcement
}

// turnTail is the last message of a turn laid out from the shared prefix.
func (s *session) turnTail(own, lead string, shown, total int) string {
	if s.decomposing() {
		return prompt.TurnParts(own, lead)
	}
	return prompt.Turn(own, lead, shown, total, !s.skipVoting)
}

// Leads of the turn after a stop.
const (
	leadStopped   = "New work arrived from the other agents after you stopped, so your part is open again."
	leadStaleStop = "Your stop was not counted: new work arrived while you were working."
)

// applyStopLocked publishes an accepted stop (or one made on answers that changed) and ends
// the turn; s.mu must be held.
func (s *session) applyStopLocked(i int, c *conversation, out coord.Outcome) bool {
	s.m.TurnSucceeded(i)
	st := out.Stop
	stale := out.Kind == coord.StaleStop
	s.publish(event.AgentStopped{Agent: s.agents[i].ID, Label: coord.Label(i), Summary: st.Summary, Status: st.Status, Version: st.Version, Stale: stale})
	c.accepted = out.Accepted
	if stale {
		c.lead = leadStaleStop
		return true
	}
	c.lead = leadStopped
	s.broadcastLocked() // the fairness cap's active set changed
	s.checkEndLocked()
	return true
}

// presenterIndexLocked is who integrates the parts: presenter_agent while it is live, else
// the last live agent (MassGen's default is the last agent); s.mu must be held.
func (s *session) presenterIndexLocked() (int, string) {
	last := -1
	for k := len(s.agents) - 1; k >= 0; k-- {
		if !s.m.Dead(k) {
			last = k
			break
		}
	}
	if last < 0 {
		last = len(s.agents) - 1
	}
	id := s.o.Orchestrator.PresenterAgent
	if id == "" {
		return last, ""
	}
	for k, a := range s.agents {
		if a.ID == id {
			if s.m.Dead(k) {
				return last, fmt.Sprintf("presenter_agent %q failed during coordination, so %s integrates the parts", id, s.agents[last].ID)
			}
			return k, ""
		}
	}
	return last, fmt.Sprintf("presenter_agent %q is not one of the agents, so %s integrates the parts", id, s.agents[last].ID)
}

// partsLocked is every part at the end of coordination; s.mu must be held.
func (s *session) partsLocked(reason string) ([]event.PartStatus, []prompt.Part) {
	statuses := make([]event.PartStatus, len(s.agents))
	parts := make([]prompt.Part, len(s.agents))
	for i, a := range s.agents {
		ps := event.PartStatus{Agent: a.ID, Label: coord.Label(i), Subtask: s.subtaskOf(i)}
		pt := prompt.Part{Label: ps.Label, Subtask: ps.Subtask}
		if ans, ok := s.m.Current(i); ok {
			ps.AnswerLabel = ans.Label
			pt.Answer = s.visible([]coord.Answer{ans})[0].Content
		}
		st, stopped := s.m.CurrentStop(i)
		switch {
		case s.m.Dead(i):
			ps.Status, ps.Why = event.PartFailed, s.deadReasonLocked(a.ID)
		case stopped:
			ps.Status, ps.Summary = st.Status, st.Summary
		case s.m.Capped(i):
			ps.Status = event.PartCapped
		default:
			ps.Status, ps.Why = event.PartUnfinished, unfinishedWhy(reason)
		}
		pt.Status, pt.Summary = ps.Status, ps.Summary
		if ps.Status == event.PartFailed || ps.Status == event.PartUnfinished {
			pt.Status, pt.Unfinished = "", ps.Why
		}
		statuses[i], parts[i] = ps, pt
	}
	return statuses, parts
}

func (s *session) subtaskOf(i int) string {
	if i < len(s.subtasks) {
		return s.subtasks[i]
	}
	return ""
}

// deadReasonLocked is why agent id left, as deadWhy keeps it; s.mu must be held.
func (s *session) deadReasonLocked(id string) string {
	for _, w := range s.deadWhy {
		if r, ok := strings.CutPrefix(w, id+": "); ok {
			return "failed: " + r
		}
	}
	return "failed"
}

// unfinishedWhy says why a part that did not stop is unfinished, from how coordination ended.
func unfinishedWhy(reason string) string {
	switch reason {
	case event.EndTimeout:
		return "the session timed out before it stopped"
	case event.EndInterrupted:
		return "the session was interrupted before it stopped"
	case event.EndBudget:
		return "the cost budget ran out before it stopped"
	}
	return "coordination ended before it stopped"
}

// gatherParts copies every other part's shared workspace into the presenter's, in agent
// order, and reports in ev what it copied and which files conflict; false when the presenter
// has no workspace to gather into.
func (s *session) gatherParts(presenter int, ev *event.PartsIntegrated) bool {
	g, ok := s.agents[presenter].Workspace.(partGatherer)
	if !ok {
		return false
	}
	byPath := map[string]*event.FileConflict{}
	var order []string
	from := map[string]string{} // path -> the label whose version is in place
	var errs []error
	for k := range s.agents {
		if k == presenter {
			continue
		}
		label := coord.Label(k)
		added, conflicts, err := g.GatherPart(label)
		if err != nil {
			errs = append(errs, err)
		}
		for _, p := range added {
			ev.Files = append(ev.Files, p)
			from[p] = label
		}
		for _, p := range slices.Sorted(mapKeys(conflicts)) {
			fc := byPath[p]
			if fc == nil {
				fc = &event.FileConflict{Path: p, Kept: cmp.Or(from[p], coord.Label(presenter)), Copies: map[string]string{}}
				byPath[p] = fc
				order = append(order, p)
			}
			fc.Copies[label] = conflicts[p]
		}
	}
	if err := errors.Join(errs...); err != nil {
		ev.Error = err.Error()
	}
	for _, p := range order {
		ev.Conflicts = append(ev.Conflicts, *byPath[p])
	}
	return true
}

// conflictsOf are ev's conflicts as the presenter is told of them.
func conflictsOf(ev event.PartsIntegrated) []prompt.Conflict {
	out := make([]prompt.Conflict, 0, len(ev.Conflicts))
	for _, fc := range ev.Conflicts {
		out = append(out, prompt.Conflict{Path: fc.Path, Kept: fc.Kept, Others: fc.Copies})
	}
	return out
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// presentParts ends a decomposition session: the presenter integrates every part into the
// final answer. Without a presentation (interrupted, every agent failed) or when it fails,
// the parts themselves, in agent order, are the final answer. Parts that did not finish are
// named at its end whatever the presenter wrote.
func (s *session) presentParts(ctx context.Context) Result {
	s.mu.Lock()
	reason := s.reason
	presenter, note := s.presenterIndexLocked()
	statuses, parts := s.partsLocked(reason)
	hasAnswer := s.m.TotalAnswers() > 0
	ended := event.CoordinationEnded{Reason: reason, Winner: s.agents[presenter].ID, WinnerLabel: coord.Label(presenter)}
	if a, ok := s.m.Current(presenter); ok {
		ended.AnswerLabel = a.Label
	}
	s.publish(ended)
	s.mu.Unlock()

	status, code := outcome(reason)
	res := Result{Status: status, ExitCode: code, EndReason: reason, Err: s.errorFor(reason)}
	if !hasAnswer {
		if res.ExitCode == 0 {
			res.Status, res.ExitCode = event.StatusFailed, 2
		}
		res.Err = errors.Join(res.Err, errors.New("no agent shared any work: every part is missing"))
		return res
	}
	w := s.agents[presenter]
	ev := event.PartsIntegrated{Presenter: w.ID, Parts: statuses}
	pp := prompt.PartsPresentation{Question: s.o.Question, History: s.o.History, Presenter: coord.Label(presenter), Parts: parts}
	if s.gatherParts(presenter, &ev) {
		pp.Workspace = true
	} else if s.remote.gather != nil {
		// On Temporal the workspaces are on the worker that holds the session.
		if g, ok := s.remote.gather(ctx, presenter); ok {
			pp.Workspace = true
			ev.Files, ev.Conflicts, ev.Error = g.Files, g.Conflicts, g.Error
		}
	}
	pp.Conflicts = conflictsOf(ev)
	s.publish(ev)

	mode := "synthesize"
	live := reason != event.EndInterrupted && reason != event.EndAllDead && ctx.Err() == nil
	if !live {
		mode = "verbatim"
	}
	s.publish(event.FinalStarted{Agent: w.ID, Mode: mode, Note: note})
	content, fallback, truncated := "", true, ""
	if live {
		if ws := w.Workspace; ws != nil {
			ws.GrantFinal()
			defer ws.RevokeFinal()
		}
		var text, cutBy string
		var err error
		if s.remote.present != nil {
			text, cutBy, err = s.remote.present(ctx, presenter, pp.System(w.System), pp.User())
		} else {
			text, cutBy, err = s.presentation(ctx, presenter, presentCall{system: pp.System(w.System),
				msgs: []provider.Message{{Role: provider.RoleUser, Content: pp.User()}}, tools: w.Tools.Specs()})
		}
		switch {
		case err != nil:
			s.publish(event.AgentError{Agent: w.ID, Message: fmt.Sprintf("integrating the parts failed, the parts are the answer as they are: %v", err),
				Budget: s.o.Orchestrator.FailureBudget, Timeout: errors.Is(err, errCallTimeout)})
		case strings.TrimSpace(text) != "":
			content, fallback, truncated = text, false, cutBy
		}
		if ctx.Err() != nil && res.ExitCode == 0 {
			res.Status, res.ExitCode, res.Err = event.StatusInterrupted, 4, errors.New("interrupted during the final presentation")
		}
	}
	if fallback {
		content = partsAsAnswer(parts)
	}
	if missing := ev.Unfinished(); len(missing) > 0 {
		content = strings.TrimRight(content, "\n") + "\n\n---\nIncomplete: " + strings.Join(missing, "; ") + "."
	}
	s.publish(event.FinalAnswer{Agent: w.ID, Label: coord.Label(presenter) + ".final", Content: content, Mode: mode, Fallback: fallback,
		Truncated: truncated != "", TruncatedBy: truncated, Changedoc: s.finalChangedoc(presenter, !fallback, coord.Answer{})})
	res.Winner, res.FinalAnswer, res.TruncatedBy = w.ID, content, truncated
	return res
}

// partsAsAnswer is the final answer made of the parts as they are, in agent order.
func partsAsAnswer(parts []prompt.Part) string {
	var b strings.Builder
	for _, p := range parts {
		if strings.TrimSpace(p.Answer) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if p.Subtask != "" {
			fmt.Fprintf(&b, "## %s\n\n", strings.Join(strings.Fields(p.Subtask), " "))
		}
		b.WriteString(strings.TrimSpace(p.Answer))
	}
	return b.String()
}
