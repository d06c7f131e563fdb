package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/criteria"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// Checklist voting in a session: the criteria and gate settings for coord, the prompt's
// checklist section, and the submit_checklist tool, which the engine runs itself (the rules
// live in coord; reading a gap report from the agent's workspace lives here).

// maxReportChars caps what is read of a gap report file: only its length matters.
const maxReportChars = 64 << 10

// Criteria returns the checklist criteria a config asks for: the inline list, else the preset,
// else the default list (correctness first).
func Criteria(c config.Checklist) ([]criteria.Criterion, error) {
	if len(c.CriteriaInline) > 0 {
		list := make([]criteria.Inline, len(c.CriteriaInline))
		for k, x := range c.CriteriaInline {
			list[k] = criteria.Inline{Text: x.Text, Category: x.Category}
		}
		items, err := criteria.FromInline(list)
		if err != nil {
			return nil, fmt.Errorf("orchestrator.coordination.checklist_criteria_inline: %w", err)
		}
		return items, nil
	}
	if c.CriteriaPreset != "" {
		return criteria.Preset(c.CriteriaPreset)
	}
	return criteria.Default(), nil
}

// isChecklist reports whether a voting sensitivity is one of the checklist modes.
func isChecklist(sensitivity string) bool {
	switch sensitivity {
	case prompt.SensitivityChecklist, prompt.SensitivityChecklistScored, prompt.SensitivityChecklistGated:
		return true
	}
	return false
}

// checklistSettings are coord's gate settings for a session, nil unless it is checklist_gated.
func checklistSettings(o config.Orchestrator, items []criteria.Criterion) *coord.ChecklistSettings {
	if o.VotingSensitivity != prompt.SensitivityChecklistGated {
		return nil
	}
	c := o.Checklist
	return &coord.ChecklistSettings{
		Criteria:         items,
		Threshold:        threshold(o),
		MaxCallsPerRound: cmp.Or(c.MaxCallsPerRound, 1),
		FirstAnswer:      c.FirstAnswer,
		RequireReport:    c.RequireGapReport && c.GapReportMode != "none",
		Propose:          c.CriteriaMode == config.CriteriaBootstrapInline,
		MaxProposals:     maxProposals(c),
		MaxEmerged:       intOr(c.BootstrapMaxTotal, criteria.MaxEmerged),
	}
}

// maxProposals is bootstrap_max_per_agent_per_round: MassGen's 3 when unset, and 0 the hard
// cap.
func maxProposals(c config.Checklist) int {
	n := intOr(c.BootstrapMaxPerAgentPerRound, 3)
	if n <= 0 || n > criteria.MaxProposals {
		return criteria.MaxProposals
	}
	return n
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

func threshold(o config.Orchestrator) int {
	if o.VotingThreshold != nil {
		return *o.VotingThreshold
	}
	return config.DefaultVotingThreshold
}

// checklistSection is agent i's checklist prompt section ("" when its sensitivity is not a
// checklist mode). The visible rule of checklist and checklist_scored is the gate of a full
// answer budget: the prompt is written once per conversation (P10).
func (s *session) checklistSection(sensitivity string) string {
	if !isChecklist(sensitivity) || len(s.criteria) == 0 {
		return ""
	}
	o := s.o.Orchestrator
	total := cmp.Or(o.MaxNewAnswersPerAgent, coord.DefaultAnswerBudget)
	g := coord.GateFor(threshold(o), total, total, len(s.criteria))
	c := o.Checklist
	section := prompt.ChecklistSection(sensitivity, s.criteria,
		prompt.ChecklistRule{Threshold: threshold(o), Required: g.Required, Cutoff: g.Cutoff},
		c.RequireGapReport && c.GapReportMode != "none")
	if sensitivity == prompt.SensitivityChecklistGated && c.CriteriaMode == config.CriteriaBootstrapInline {
		section += "\n" + prompt.ProposeRule(maxProposals(c))
	}
	return section
}

// checklistTools is the submit_checklist tool for the agent of c, on the answers and the
// criteria it has read, when votes are gated.
func (s *session) checklistTools(c *conversation) []provider.ToolSpec {
	if !s.m.Gated() {
		return nil
	}
	items := c.criteria
	if items == nil {
		items = s.criteria
	}
	spec := prompt.ChecklistTool(items, c.labels)
	if cl := s.o.Orchestrator.Checklist; cl.CriteriaMode == config.CriteriaBootstrapInline {
		spec = prompt.WithProposals(spec, maxProposals(cl))
	}
	return []provider.ToolSpec{spec}
}

// runChecklist runs one submit_checklist call of agent i and appends its result.
func (s *session) runChecklist(ctx context.Context, i int, c *conversation, tc provider.ToolCall) {
	a := s.agents[i]
	start := s.o.Now()
	args, err := coord.ParseChecklistArgs(tc.Arguments)
	var report string
	if err == nil {
		report, err = s.gapReport(ctx, a, c, args)
	}
	var out coord.ChecklistOutcome
	if err != nil {
		out.Error = err.Error()
	} else {
		s.mu.Lock()
		var visible []int
		for k, n := range c.shown {
			if n > 0 {
				visible = append(visible, k)
			}
		}
		out = s.m.SubmitChecklist(i, args, visible, c.seen, report)
		if out.Error == "" {
			s.recordChecklistLocked(out)
		}
		s.mu.Unlock()
	}
	d := s.o.Now().Sub(start)
	if out.Error != "" {
		s.publish(event.ToolRejected{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, Error: out.Error})
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: "Error: " + out.Error, IsError: true})
		return
	}
	ck := out.Checklist
	body, _ := json.Marshal(checklistResult{Status: "accepted", Checklist: ck})
	s.publish(checklistEvent(a.ID, tc.ID, ck))
	if len(out.Added) > 0 || len(out.Evicted) > 0 {
		s.mu.Lock()
		s.publish(s.criteriaEventLocked(a.ID, event.CriteriaInline, out.Added, out.Evicted))
		s.mu.Unlock()
	}
	ev := event.ToolResult{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, DurationMS: float64(d.Microseconds()) / 1000}
	ev.SetContent(string(body))
	s.publish(ev)
	c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: string(body)})
}

// checklistResult is what the agent reads back: MassGen's accepted payload, in our fields.
type checklistResult struct {
	Status string `json:"status"`
	coord.Checklist
}

func checklistEvent(agent, callID string, ck coord.Checklist) event.ChecklistSubmitted {
	ev := event.ChecklistSubmitted{Agent: agent, CallID: callID, Version: ck.Version, Verdict: ck.Verdict, Best: ck.BestLabel,
		Forced: ck.Forced, Required: ck.Gate.Required, Cutoff: ck.Gate.Cutoff, EffectiveThreshold: ck.Gate.Effective}
	for _, sc := range ck.Scores {
		as := event.ChecklistScores{Label: sc.Label, TrueCount: sc.TrueCount, Total: sc.Total, Primary: sc.Primary}
		for _, it := range sc.Items {
			as.Items = append(as.Items, event.ChecklistItem{ID: it.ID, Score: it.Score, Passed: it.Passed, Reasoning: it.Reasoning})
		}
		ev.Scores = append(ev.Scores, as)
	}
	return ev
}

// checklistOf is the inverse of checklistEvent: the checklist a log recorded, for resume.
func checklistOf(ev event.ChecklistSubmitted) coord.Checklist {
	c := coord.Checklist{Version: ev.Version, Verdict: ev.Verdict, Forced: ev.Forced,
		Gate: coord.Gate{Required: ev.Required, Cutoff: ev.Cutoff, Effective: ev.EffectiveThreshold}}
	for _, sc := range ev.Scores {
		as := coord.AnswerScores{Label: sc.Label, TrueCount: sc.TrueCount, Total: sc.Total, Primary: sc.Primary}
		for _, it := range sc.Items {
			as.Items = append(as.Items, coord.ItemScore{ID: it.ID, Score: it.Score, Passed: it.Passed, Reasoning: it.Reasoning})
		}
		c.Scores = append(c.Scores, as)
	}
	return c
}

// gapReport returns the gap report of a checklist: the inline text, or the file at report_path
// read with the agent's own read_file tool, so that the workspace's confinement applies.
func (s *session) gapReport(ctx context.Context, a Agent, c *conversation, args coord.ChecklistArgs) (string, error) {
	if args.ReportPath == "" {
		return args.Report, nil
	}
	if _, ok := a.Tools.Find("read_file"); !ok {
		return "", fmt.Errorf(`report_path %q cannot be read: you have no workspace; pass the gap report's text as "report" instead`, clipText(args.ReportPath))
	}
	path, _ := json.Marshal(map[string]string{"path": args.ReportPath})
	res, _ := s.runTool(ctx, a, provider.ToolCall{Name: "read_file", Arguments: string(path)}, c.round.cut)
	if res.IsError {
		return "", fmt.Errorf("report_path %q cannot be read: %s", clipText(args.ReportPath), clipText(res.Content))
	}
	report, _ := cut(res.Content, maxReportChars)
	return report, nil
}

func clipText(s string) string {
	out, cutOff := cut(s, 200)
	if cutOff {
		out += "…"
	}
	return out
}
