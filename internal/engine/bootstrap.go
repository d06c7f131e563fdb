package engine

import (
	"context"
	"fmt"
	"strings"

	"massgen/internal/config"
	"massgen/internal/criteria"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// Criteria that emerge during the run (criteria_mode: bootstrap_inline and
// bootstrap_subagent) and the orchestrator-managed round evaluator. Both add to what an agent
// reads at the start of a round: new criteria to score, or the evaluator's critique. The
// critic and the evaluator are subagents the orchestrator launches through Options.Subagent.

// SubagentCall is one subagent the orchestrator launches itself.
type SubagentCall struct {
	Agent    string // the agent it is billed to
	Kind     string // KindRoundEvaluator or KindCriteriaCritic
	ID       string // the id it should have (made unique)
	Question string
	Refine   bool // its team iterates and votes, rather than answering once each
}

// SubagentReply is how it ended: Answer, or Error when it gave none, and what it spent.
type SubagentReply struct {
	ID, Answer, Error string
	Spent             provider.Usage
}

// The kinds of SubagentCall (the subagent package's names).
const (
	KindRoundEvaluator = "round_evaluator"
	KindCriteriaCritic = "criteria_critic"
)

// Bounds on what the orchestrator launches in one session, whatever the models do: each
// critique or evaluation is a whole nested session.
const (
	maxCriticRuns      = 8
	maxEvaluatorRuns   = 8
	maxEvalReportChars = 20000 // the evaluator's report as the agent reads it
	criticProposalCap  = 5     // criteria asked of the critic per run
)

// deliverCriteriaLocked tells agent i which criteria joined (or left) the checklist since
// it last read the list: the base list is in its system prompt; emerged ones reach it here,
// at the start of a round. s.mu must be held.
func (s *session) deliverCriteriaLocked(i int, c *conversation) {
	now := s.m.CriteriaOf(i)
	known := c.criteria
	if known == nil {
		known = s.criteria
	}
	c.criteria = now
	if !s.m.Gated() {
		return
	}
	had := map[string]bool{}
	for _, k := range known {
		had[k.ID] = true
	}
	var added []criteria.Criterion
	for _, n := range now {
		if !had[n.ID] {
			added = append(added, n)
		}
		delete(had, n.ID)
	}
	var gone []string
	for _, k := range known {
		if had[k.ID] {
			gone = append(gone, k.ID)
		}
	}
	if len(added) == 0 && len(gone) == 0 {
		return
	}
	s.appendNoteLocked(c, prompt.NewCriteria(added, gone))
}

// appendNoteLocked adds text to what the agent reads next: to the last message not yet sent
// when it is the session's, else as a new user message.
func (s *session) appendNoteLocked(c *conversation, text string) {
	if n := len(c.msgs); n > c.sent && c.msgs[n-1].Role != provider.RoleAssistant {
		c.msgs[n-1].Content += "\n\n" + text
		return
	}
	c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: text})
}

// criteriaEvent is the CriteriaEmerged event of a change to the emerged criteria.
func (s *session) criteriaEventLocked(agent, source string, added []criteria.Criterion, evicted []string) event.CriteriaEmerged {
	return event.CriteriaEmerged{Agent: agent, Source: source, Added: eventCriteria(added), Evicted: evicted,
		Criteria: eventCriteria(s.m.Emerged())}
}

func eventCriteria(list []criteria.Criterion) []event.Criterion {
	out := make([]event.Criterion, len(list))
	for k, c := range list {
		out[k] = event.Criterion{ID: c.ID, Text: c.Text, Category: c.Category}
	}
	return out
}

func criteriaOf(list []event.Criterion) []criteria.Criterion {
	out := make([]criteria.Criterion, len(list))
	for k, c := range list {
		out[k] = criteria.Criterion{ID: c.ID, Text: c.Text, Category: c.Category}
	}
	return out
}

// criticOn reports whether criteria_mode: bootstrap_subagent's critic runs in this session.
func (s *session) criticOn() bool {
	return s.m.Gated() && s.o.Orchestrator.Checklist.CriteriaMode == config.CriteriaBootstrapSubagent
}

// awaitCritic is bootstrap_subagent's critic, run at the start of an agent's round as in
// MassGen: once per answer set, a critic subagent reads the task and the current answers and
// proposes criteria, which the round about to begin already scores. One agent runs it; the
// others starting a round meanwhile wait for it rather than paying for another.
func (s *session) awaitCritic(ctx context.Context) {
	for {
		s.mu.Lock()
		v, answers := s.m.Version(), s.m.CurrentAnswers()
		if s.m.Ended() || ctx.Err() != nil || len(answers) == 0 || s.critiqued[v] || s.criticRuns >= maxCriticRuns {
			s.mu.Unlock()
			return
		}
		if busy := s.criticBusy; busy != nil {
			s.mu.Unlock()
			select {
			case <-busy:
			case <-ctx.Done():
				return
			}
			continue
		}
		busy := make(chan struct{})
		s.criticBusy = busy
		s.criticRuns++
		question := prompt.CriteriaCriticQuestion(s.o.Question, s.m.Criteria(), s.visible(inAgentOrder(answers)), criticProposalCap)
		s.mu.Unlock()
		s.critique(ctx, v, question)
		s.mu.Lock()
		s.criticBusy = nil
		close(busy)
		s.mu.Unlock()
		return
	}
}

// critique runs the critic on answer-set version v and merges what it proposes. A critic
// that fails or whose reply holds no usable criteria adds none: the event says so, and the
// checklist goes on with the criteria it has.
func (s *session) critique(ctx context.Context, v int, question string) {
	if s.o.Subagent == nil {
		s.mu.Lock()
		s.critiqued[v] = true
		s.noteOpLocked(Op{Kind: OpCritique, Seen: v})
		s.publish(event.CriteriaEmerged{Source: event.CriteriaSubagent, Version: v, Criteria: eventCriteria(s.m.Emerged()),
			Warning: "no critic subagent can run in this session: the checklist keeps " + s.baseCriteriaName()})
		s.mu.Unlock()
		return
	}
	payer := s.agents[0].ID
	rep := s.o.Subagent(ctx, SubagentCall{Agent: payer, Kind: KindCriteriaCritic, ID: fmt.Sprintf("criteria_critic_v%d", v), Question: question})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accountSpentLocked(0, rep.Spent)
	if ctx.Err() != nil || s.m.Ended() {
		return // coordination ended under it; a resumed session asks again
	}
	s.critiqued[v] = true
	var warn string
	var props []criteria.Proposal
	if rep.Error != "" {
		warn = "the critic subagent gave no criteria (" + clipText(rep.Error) + ")"
	} else {
		list, dropped, err := criteria.FromReply(rep.Answer)
		switch {
		case err != nil:
			reply, _ := cut(strings.Join(strings.Fields(rep.Answer), " "), 200)
			warn = fmt.Sprintf("the critic's reply could not be read (%v): %q", err, reply)
		case dropped != "":
			warn = "some of the critic's criteria were dropped: " + dropped
		}
		if len(list) > criticProposalCap {
			list = list[:criticProposalCap]
		}
		props = list
	}
	added, evicted := s.m.AddCriteria(props)
	s.noteOpLocked(Op{Kind: OpCritique, Seen: v, Proposals: props})
	ev := s.criteriaEventLocked(payer, event.CriteriaSubagent, added, evicted)
	ev.Version, ev.SubagentID = v, rep.ID
	if warn != "" && len(added) == 0 {
		warn += ": the checklist keeps " + s.baseCriteriaName()
	}
	ev.Warning = warn
	s.publish(ev)
}

// baseCriteriaName names the criteria a session falls back on when none emerge.
func (s *session) baseCriteriaName() string {
	c := s.o.Orchestrator.Checklist
	switch {
	case len(c.CriteriaInline) > 0:
		return "its inline criteria (checklist_criteria_inline)"
	case c.CriteriaPreset != "":
		return "the " + c.CriteriaPreset + " preset's criteria"
	}
	return "the default criteria"
}

// beforeRoundLocked runs what comes before agent i's round: the criteria critic and the
// round evaluator, each a subagent run without s.mu held. It reports whether the round can
// begin: false when coordination ended meanwhile or the agent no longer needs a turn. s.mu
// is held on entry and on return.
func (s *session) beforeRoundLocked(ctx context.Context, i int, c *conversation) bool {
	if c.resumed.redo {
		return true // the call in flight when the log stopped is made again first
	}
	if s.criticOn() {
		s.mu.Unlock()
		s.awaitCritic(ctx)
		s.mu.Lock()
	}
	if s.evaluatorDueLocked(i, c) {
		s.mu.Unlock()
		s.evaluateRound(ctx, i)
		s.mu.Lock()
	}
	return !s.m.Ended() && ctx.Err() == nil && s.m.NeedsTurn(i)
}

// evaluatorDueLocked reports whether the round evaluator reviews the answers before agent
// i's next round: it is on, the agent has answered (round 2 and later), and the current
// answer set has not been reviewed. s.mu must be held.
func (s *session) evaluatorDueLocked(i int, c *conversation) bool {
	return s.o.Orchestrator.RoundEvaluator.Enabled && s.m.Gated() && !c.resumed.redo && s.m.AnswerCount(i) > 0 &&
		!s.evaluated[s.m.Version()] && s.evaluatorRuns < maxEvaluatorRuns
}

// evaluateRound runs the round evaluator on the current answers before agent i's round, and
// keeps its report for that round's opening. It blocks the agent, as in MassGen; a run that
// gives no report leaves the agent its own checklist, and the event says why.
func (s *session) evaluateRound(ctx context.Context, i int) {
	s.mu.Lock()
	v := s.m.Version()
	s.evaluatorRuns++
	question := prompt.RoundEvaluatorQuestion(s.o.Question, s.m.Criteria(), s.visible(inAgentOrder(s.m.CurrentAnswers())),
		s.o.Orchestrator.RoundEvaluator.Pressure)
	s.mu.Unlock()
	a := s.agents[i]
	ev := event.RoundEvaluated{Agent: a.ID, Version: v}
	var spent provider.Usage
	if s.o.Subagent == nil {
		ev.Warning = "no round evaluator can run in this session: the agent goes on with its own checklist"
	} else {
		rep := s.o.Subagent(ctx, SubagentCall{Agent: a.ID, Kind: KindRoundEvaluator, ID: fmt.Sprintf("round_evaluator_v%d", v),
			Question: question, Refine: s.o.Orchestrator.RoundEvaluator.Refine})
		ev.SubagentID, spent = rep.ID, rep.Spent
		report := strings.TrimSpace(rep.Answer)
		if rep.Error != "" || report == "" {
			ev.Warning = "the round evaluator gave no report (" + clipText(cmpOr(rep.Error, "an empty answer")) + "): the agent goes on with its own checklist"
		} else {
			ev.Report, _ = cut(report, maxEvalReportChars)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.accountSpentLocked(i, spent)
	if ctx.Err() != nil || s.m.Ended() {
		return
	}
	s.evaluated[v] = true
	s.reports[i] = ev.Report
	s.noteOpLocked(Op{Kind: OpEvaluate, Agent: i, Seen: v, Text: ev.Report})
	s.publish(ev)
}

// deliverReportLocked opens agent i's round with the round evaluator's report, if one is
// waiting. s.mu must be held.
func (s *session) deliverReportLocked(i int, c *conversation) {
	if r := s.reports[i]; r != "" {
		s.reports[i] = ""
		s.appendNoteLocked(c, prompt.EvaluationReport(r))
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// restoreBootstrap puts back, from a resumed log, the emerged criteria, the answer sets the
// critic and the evaluator already read (they are not paid for twice), and a report the
// agent had not started its round with yet.
func (s *session) restoreBootstrap(evs []event.Event) {
	var last *event.CriteriaEmerged
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.CriteriaEmerged:
			last = &p
			if p.Source == event.CriteriaSubagent {
				s.critiqued[p.Version] = true
				s.criticRuns++
			}
		case event.RoundEvaluated:
			s.evaluated[p.Version] = true
			s.evaluatorRuns++
			if i := s.index(p.Agent); i >= 0 {
				s.reports[i] = p.Report
			}
		case event.TurnStarted:
			if i := s.index(p.Agent); i >= 0 {
				s.reports[i] = "" // it read the report in that turn's opening
			}
		}
	}
	if last != nil {
		s.m.RestoreEmerged(criteriaOf(last.Criteria))
	}
}
