package coord

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"massgen/internal/criteria"
)

// Checklist-gated voting (MassGen's voting_sensitivity: checklist_gated): before an agent may
// vote it scores every answer it has read against explicit criteria with the submit_checklist
// tool. The tool returns a verdict, vote or new_answer, from a gate the agent does not see
// (MassGen's ChecklistGate: voting_threshold adjusted by the agent's remaining answer budget).
// Where MassGen only tells the agent the verdict, this machine enforces it: a vote without a
// current checklist, against its verdict, or for an answer the checklist did not rank best is
// rejected like any other invalid call. Answers are ranked correctness first: by the score of
// the primary criterion, then by the total.

// ToolSubmitChecklist is the checklist tool's name, as in MassGen.
const ToolSubmitChecklist = "submit_checklist"

// Verdicts of a checklist: MassGen's terminate and iterate actions in voting mode.
const (
	VerdictVote      = ToolVote
	VerdictNewAnswer = ToolNewAnswer
)

// DefaultAnswerBudget is the answer budget the gate assumes when max_new_answers_per_agent is
// unlimited, as MassGen does.
const DefaultAnswerBudget = 5

// MinReportChars is the shortest gap report accepted when one is required (MassGen's
// _DIAGNOSTIC_REPORT_MIN_LENGTH).
const MinReportChars = 100

// maxReasoningChars caps the reasoning kept per score: it goes into events and logs.
const maxReasoningChars = 2000

// ChecklistSettings turn checklist-gated voting on.
type ChecklistSettings struct {
	Criteria []criteria.Criterion
	// Threshold is voting_threshold on MassGen's 0-10 strictness scale.
	Threshold int
	// MaxCallsPerRound is max_checklist_calls_per_round (at least 1): accepted checklists per
	// turn, one more being allowed when the answers change after the last one.
	MaxCallsPerRound int
	// FirstAnswer (checklist_first_answer) allows a checklist before the agent's first answer.
	FirstAnswer bool
	// RequireReport (checklist_require_gap_report with a gap_report_mode other than none)
	// requires a gap report of at least MinReportChars with every checklist on answers.
	RequireReport bool
	// Propose (criteria_mode: bootstrap_inline) lets an agent propose criteria with its
	// checklist, at most MaxProposals per round (bootstrap_max_per_agent_per_round; 0:
	// criteria.MaxProposals). Criteria added during the run, by proposal or AddCriteria, are
	// kept up to MaxEmerged (bootstrap_max_total; 0: criteria.MaxEmerged), oldest out first.
	Propose      bool
	MaxProposals int
	MaxEmerged   int
}

// Gate is MassGen's ChecklistGate: all three knobs come from one 0-10 scale.
type Gate struct {
	// Effective is the threshold adjusted for the remaining answer budget.
	Effective int `json:"effective_threshold"`
	// Required is how many criteria must pass for a vote.
	Required int `json:"required"`
	// Cutoff is the lowest score (0-10) that passes a criterion.
	Cutoff int `json:"cutoff"`
}

// GateFor derives the gate from voting_threshold, the agent's remaining and total answer
// budget and the number of criteria, with MassGen's formulas: an ample budget lowers the
// effective threshold by one (stricter: keep improving), a tight one raises it (converge).
func GateFor(threshold, remaining, total, items int) Gate {
	et := threshold
	if total > 0 {
		ratio := float64(remaining) / float64(total)
		switch {
		case remaining <= 2:
			et += 2
		case ratio <= 0.4:
			et++
		}
		if ratio >= 0.7 {
			et--
		}
	}
	et = min(max(et, 0), 10)
	floor := max(1, (items+1)/2)
	span := items - floor
	return Gate{Effective: et, Required: max(floor, items-roundHalfEven(span*et, 10)), Cutoff: max(4, (20-et)/2)}
}

// roundHalfEven is n/d rounded to the nearest integer, halves to even, as Python's round
// (MassGen's gate uses it); n and d are not negative.
func roundHalfEven(n, d int) int {
	q, r := n/d, n%d
	if 2*r > d || (2*r == d && q%2 == 1) {
		q++
	}
	return q
}

// ItemScore is one criterion's score for one answer.
type ItemScore struct {
	ID        string `json:"id"`
	Score     int    `json:"score"`
	Passed    bool   `json:"passed"`
	Reasoning string `json:"reasoning,omitempty"`
}

// AnswerScores are one answer's scores.
type AnswerScores struct {
	Agent     int         `json:"-"`
	Label     string      `json:"label"` // agent<j>
	Items     []ItemScore `json:"items"`
	TrueCount int         `json:"true_count"`
	Total     int         `json:"total"`
	// Primary is the primary criterion's score (0 when the list has none).
	Primary int `json:"primary"`
}

// Checklist is an accepted checklist.
type Checklist struct {
	// Version is the answer-set version the agent scored; it gates votes on that set only.
	Version int            `json:"version"`
	Verdict string         `json:"verdict"`
	Gate    Gate           `json:"gate"`
	Scores  []AnswerScores `json:"scores,omitempty"`
	// Best are the agents ranked best, tied ones all; BestLabel the first of them.
	Best      []int  `json:"-"`
	BestLabel string `json:"best_agent,omitempty"`
	// Forced is true when the verdict is vote only because the agent cannot answer again.
	Forced bool `json:"forced,omitempty"`
	// Explanation is what the agent is told about the verdict.
	Explanation string `json:"explanation"`
	// Proposed are the ids its proposed criteria got (bootstrap_inline); ProposalNote says
	// what of its proposals was not taken, and why.
	Proposed     []string `json:"proposed_criteria_accepted,omitempty"`
	ProposalNote string   `json:"proposed_criteria_note,omitempty"`
}

// ChecklistArgs are submit_checklist's arguments.
type ChecklistArgs struct {
	Scores     json.RawMessage `json:"scores"`
	ReportPath string          `json:"report_path"`
	// Report is the gap report inline, for agents without a workspace to write it in.
	Report string `json:"report"`
	// Proposed is proposed_criteria (bootstrap_inline).
	Proposed json.RawMessage `json:"proposed_criteria"`
}

// ParseChecklistArgs reads submit_checklist's arguments. Scores sent as a JSON string (as
// some CLI agents do) are unwrapped, as MassGen does.
func ParseChecklistArgs(args string) (ChecklistArgs, error) {
	var a ChecklistArgs
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return a, fmt.Errorf(`arguments are not valid JSON (%v): call submit_checklist with {"scores": {...}}`, err)
	}
	var s string
	if json.Unmarshal(a.Scores, &s) == nil {
		a.Scores = json.RawMessage(s)
	}
	return a, nil
}

// ChecklistOutcome is the result of one submit_checklist call: Error (a validation error the
// agent must fix and resubmit; nothing is recorded) or an accepted Checklist.
type ChecklistOutcome struct {
	Error     string
	Checklist Checklist
	// Added are the criteria its proposals added (bootstrap_inline); Evicted the ids that
	// left to make room.
	Added   []criteria.Criterion
	Evicted []string
}

// Gated reports whether votes need a checklist.
func (m *Machine) Gated() bool { return m.s.Checklist != nil }

// Criteria are the checklist's criteria now, emerged ones included (nil when votes are not
// gated).
func (m *Machine) Criteria() []criteria.Criterion {
	if m.acc == nil {
		return nil
	}
	return m.acc.All()
}

// CriteriaOf are the criteria agent i scores this round: those of when its round began.
// Criteria that emerge during a round reach it at its next one, as in MassGen.
func (m *Machine) CriteriaOf(i int) []criteria.Criterion {
	if c := m.agents[i].criteria; c != nil {
		return c
	}
	return m.Criteria()
}

// Emerged are the criteria added during the run and kept now.
func (m *Machine) Emerged() []criteria.Criterion {
	if m.acc == nil {
		return nil
	}
	return m.acc.Emerged()
}

// AddCriteria adds proposed criteria (a critic's, or an agent's with its checklist): the
// ones new by text are appended, numbered on. It returns those and the ids evicted to stay
// within MaxEmerged. Without gated votes it adds nothing.
func (m *Machine) AddCriteria(props []criteria.Proposal) (added []criteria.Criterion, evicted []string) {
	if m.acc == nil {
		return nil, nil
	}
	return m.acc.Merge(props)
}

// RestoreEmerged puts back the emerged criteria a log recorded, before any round begins.
func (m *Machine) RestoreEmerged(list []criteria.Criterion) {
	if m.acc != nil {
		m.acc.Restore(list)
	}
}

// BeginRound starts a new turn of agent i: its checklist calls and proposals are counted
// afresh, and it scores the criteria as they are now.
func (m *Machine) BeginRound(i int) {
	st := &m.agents[i]
	st.checklistCalls, st.proposed = 0, 0
	st.criteria = m.Criteria()
}

// LastChecklist returns agent i's latest accepted checklist.
func (m *Machine) LastChecklist(i int) (Checklist, bool) {
	c := m.agents[i].checklist
	if c == nil {
		return Checklist{}, false
	}
	return *c, true
}

// GateOf is agent i's gate now, from its remaining answer budget.
func (m *Machine) GateOf(i int) Gate {
	cs := m.s.Checklist
	total := cmp.Or(m.s.MaxNewAnswersPerAgent, DefaultAnswerBudget)
	remaining := max(total-len(m.agents[i].answers), 0)
	return GateFor(cs.Threshold, remaining, total, len(m.CriteriaOf(i)))
}

// SubmitChecklist scores the answers agent i has read (visible, in agent order) with a's
// scores, on answer-set version seen. report is the gap report's text ("" when none was given).
func (m *Machine) SubmitChecklist(i int, a ChecklistArgs, visible []int, seen int, report string) ChecklistOutcome {
	cs := m.s.Checklist
	switch {
	case cs == nil:
		return ChecklistOutcome{Error: "submit_checklist is only available with orchestrator.voting_sensitivity: checklist_gated"}
	case m.ended || m.agents[i].dead:
		return ChecklistOutcome{Error: "coordination is over; this call was not counted"}
	case !cs.FirstAnswer && len(m.agents[i].answers) == 0:
		return ChecklistOutcome{Error: "submit_checklist is not available before your first answer is submitted: " +
			"build your initial answer, verify it, then submit it with new_answer"}
	}
	st := &m.agents[i]
	stale := st.checklist != nil && st.checklist.Version != seen
	if st.checklistCalls >= max(cs.MaxCallsPerRound, 1) && !stale {
		return ChecklistOutcome{Error: fmt.Sprintf("submit_checklist already called %d time(s) this round (orchestrator.max_checklist_calls_per_round is %d): "+
			"act on its verdict (%s) instead of calling it again", st.checklistCalls, max(cs.MaxCallsPerRound, 1), st.checklist.Verdict)}
	}
	gate := m.GateOf(i)
	scores, errMsg := m.parseScores(m.CriteriaOf(i), a.Scores, visible, gate.Cutoff)
	if errMsg != "" {
		return ChecklistOutcome{Error: errMsg}
	}
	if cs.RequireReport && len(visible) > 0 {
		if n := utf8.RuneCountInString(strings.TrimSpace(report)); n < MinReportChars {
			what := "no gap report was given"
			if n > 0 {
				what = fmt.Sprintf("the gap report is %d characters long, too short to hold a diagnosis (at least %d)", n, MinReportChars)
			}
			return ChecklistOutcome{Error: what + ": write what each answer gets wrong or leaves out, criterion by criterion, " +
				`and pass it as "report_path" (a file in your workspace) or "report" (the text), then call submit_checklist again`}
		}
	}
	c := Checklist{Version: seen, Gate: gate, Scores: scores}
	m.rank(&c)
	m.verdict(i, &c)
	st.checklistCalls++
	st.checklist = &c
	out := ChecklistOutcome{}
	out.Added, out.Evicted = m.propose(i, a.Proposed, &c)
	out.Checklist = c
	return out
}

// propose takes agent i's proposed criteria with its accepted checklist c: they do not
// change c's verdict; they join the criteria of the rounds that begin from now on.
func (m *Machine) propose(i int, raw json.RawMessage, c *Checklist) ([]criteria.Criterion, []string) {
	cs := m.s.Checklist
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if !cs.Propose {
		c.ProposalNote = "proposed_criteria is ignored: criteria_mode is not bootstrap_inline"
		return nil, nil
	}
	props, dropped, err := criteria.ParseProposals(raw)
	if err != nil {
		c.ProposalNote = err.Error() + "; none was taken (your scores were)"
		return nil, nil
	}
	st := &m.agents[i]
	limit := cs.MaxProposals
	if limit <= 0 {
		limit = criteria.MaxProposals
	}
	var notes []string
	if dropped != "" {
		notes = append(notes, "dropped: "+dropped)
	}
	if room := max(limit-st.proposed, 0); len(props) > room {
		notes = append(notes, fmt.Sprintf("%d over the %d per round (bootstrap_max_per_agent_per_round)", len(props)-room, limit))
		props = props[:room]
	}
	st.proposed += len(props)
	added, evicted := m.acc.Merge(props)
	if dup := len(props) - len(added); dup > 0 {
		notes = append(notes, fmt.Sprintf("%d already among the criteria", dup))
	}
	for _, a := range added {
		c.Proposed = append(c.Proposed, a.ID)
	}
	c.ProposalNote = strings.Join(notes, "; ")
	return added, evicted
}

// parseScores validates the scores against the criteria and the visible answers: per-answer
// ({"agent1": {"E1": {"score": 8, "reasoning": "..."}}}) or, with one answer, flat.
func (m *Machine) parseScores(items []criteria.Criterion, raw json.RawMessage, visible []int, cutoff int) ([]AnswerScores, string) {
	var top map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &top) != nil {
		return nil, `"scores" must be a JSON object: {"agent1": {"E1": {"score": 0-10, "reasoning": "..."}, ...}, ...}`
	}
	labels := make([]string, len(visible))
	for k, v := range visible {
		labels[k] = Label(v)
	}
	if len(visible) == 0 {
		return nil, ""
	}
	flat := false
	for key := range top {
		if len(key) > 1 && key[0] == 'E' {
			flat = true
		}
	}
	if flat {
		if len(visible) > 1 {
			return nil, fmt.Sprintf("you scored the criteria once, but %d answers are on the table (%s): "+
				`score every one of them: {"%s": {"E1": {"score": N, "reasoning": "..."}, ...}, "%s": {...}}`,
				len(visible), strings.Join(labels, ", "), labels[0], labels[1])
		}
		top = map[string]json.RawMessage{labels[0]: raw}
	}
	byAgent := map[int]json.RawMessage{}
	for key, v := range top {
		agent := m.scoreLabel(key)
		if agent < 0 || !slices.Contains(visible, agent) {
			return nil, fmt.Sprintf("%q is not an answer you can score; score exactly these: %s", clipKey(key), strings.Join(labels, ", "))
		}
		if _, dup := byAgent[agent]; dup {
			return nil, fmt.Sprintf("%s is scored twice", Label(agent))
		}
		byAgent[agent] = v
	}
	var missing []string
	for k, v := range visible {
		if _, ok := byAgent[v]; !ok {
			missing = append(missing, labels[k])
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Sprintf("missing scores for %s: score every answer you have read (%s)", strings.Join(missing, ", "), strings.Join(labels, ", "))
	}
	out := make([]AnswerScores, 0, len(visible))
	for _, v := range visible {
		var entries map[string]json.RawMessage
		if json.Unmarshal(byAgent[v], &entries) != nil {
			return nil, fmt.Sprintf(`%s's scores must be an object of criteria: {"E1": {"score": N, "reasoning": "..."}, ...}`, Label(v))
		}
		as := AnswerScores{Agent: v, Label: Label(v)}
		var absent []string
		for _, it := range items {
			e, ok := entries[it.ID]
			if !ok {
				absent = append(absent, it.ID)
				continue
			}
			score, reasoning, ok := parseEntry(e)
			if !ok {
				return nil, fmt.Sprintf(`%s %s: a score is a number from 0 to 10, or {"score": N, "reasoning": "..."}`, Label(v), it.ID)
			}
			is := ItemScore{ID: it.ID, Score: score, Passed: score >= cutoff, Reasoning: reasoning}
			as.Items = append(as.Items, is)
			as.Total += score
			if is.Passed {
				as.TrueCount++
			}
			if it.Category == criteria.Primary {
				as.Primary = score
			}
		}
		if len(absent) > 0 {
			return nil, fmt.Sprintf("%s: missing scores for %s: score all %d criteria (%s) for every answer",
				Label(v), strings.Join(absent, ", "), len(items), idRange(items))
		}
		out = append(out, as)
	}
	return out, ""
}

// scoreLabel maps a scores key to an agent: agent<j>, or an answer label agent<j>.<k> of one
// of agent j's answers.
func (m *Machine) scoreLabel(key string) int {
	key = strings.TrimSpace(key)
	agent, ord, dotted := strings.Cut(key, ".")
	j := ParseLabel(agent, len(m.agents))
	if j < 0 || !dotted {
		return j
	}
	k, err := strconv.Atoi(ord)
	if err != nil || k < 1 || k > len(m.agents[j].answers) {
		return -1
	}
	return j
}

func parseEntry(raw json.RawMessage) (score int, reasoning string, ok bool) {
	var n float64
	if json.Unmarshal(raw, &n) != nil {
		var e struct {
			Score     *float64 `json:"score"`
			Reasoning string   `json:"reasoning"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Score == nil {
			return 0, "", false
		}
		n, reasoning = *e.Score, strings.TrimSpace(e.Reasoning)
	}
	if n < 0 || n > 10 || n != n {
		return 0, "", false
	}
	if utf8.RuneCountInString(reasoning) > maxReasoningChars {
		reasoning = string([]rune(reasoning)[:maxReasoningChars]) + "…"
	}
	return int(n), reasoning, true
}

// rank orders the answers correctness first: primary score, then total; ties share the rank
// and the earlier agent is named (MassGen breaks total ties by label).
func (m *Machine) rank(c *Checklist) {
	if len(c.Scores) == 0 {
		return
	}
	better := func(a, b AnswerScores) int {
		return cmp.Or(cmp.Compare(b.Primary, a.Primary), cmp.Compare(b.Total, a.Total))
	}
	best := c.Scores[0]
	for _, s := range c.Scores[1:] {
		if better(s, best) < 0 {
			best = s
		}
	}
	for _, s := range c.Scores {
		if better(s, best) == 0 {
			c.Best = append(c.Best, s.Agent)
		}
	}
	c.BestLabel = Label(c.Best[0])
}

// verdict applies the gate to the best answer's scores.
func (m *Machine) verdict(i int, c *Checklist) {
	n := len(m.CriteriaOf(i))
	if len(c.Scores) == 0 {
		c.Verdict = VerdictNewAnswer
		c.Explanation = "There are no answers to evaluate yet. Verdict: new_answer."
		return
	}
	best := c.Scores[slices.IndexFunc(c.Scores, func(s AnswerScores) bool { return s.Agent == c.Best[0] })]
	head := fmt.Sprintf("Best answer: %s (ranked correctness first). %d of %d criteria passed (required: %d).",
		c.BestLabel, best.TrueCount, n, c.Gate.Required)
	switch {
	case best.TrueCount >= c.Gate.Required:
		c.Verdict = VerdictVote
		c.Explanation = fmt.Sprintf("%s Verdict: vote. Call vote for %s.", head, tieList(c.Best))
	case !m.canAnswer(i):
		c.Verdict, c.Forced = VerdictVote, true
		c.Explanation = fmt.Sprintf("%s You cannot submit another answer, so the verdict is vote regardless: call vote for %s.", head, tieList(c.Best))
	default:
		c.Verdict = VerdictNewAnswer
		var failed []string
		for _, it := range best.Items {
			if !it.Passed {
				failed = append(failed, it.ID)
			}
		}
		c.Explanation = fmt.Sprintf("%s Verdict: new_answer. Criteria that need improvement: %s. "+
			"Write a new answer that fixes them, drawing on the strongest parts of every answer, and submit it with new_answer; "+
			"do not vote and do not resubmit the same content.", head, strings.Join(failed, ", "))
	}
}

// canAnswer reports whether a new answer of agent i could be accepted now.
func (m *Machine) canAnswer(i int) bool {
	if m.GlobalCapReached() {
		return false
	}
	if limit := m.s.MaxNewAnswersPerAgent; limit > 0 && len(m.agents[i].answers) >= limit {
		return false
	}
	_, over := m.overLeadCap(i)
	return !over || len(m.agents[i].answers) == 0
}

// checklistBlocksVote says why agent i may not vote for target on version seen, or "".
func (m *Machine) checklistBlocksVote(i, target, seen int) string {
	c := m.agents[i].checklist
	switch {
	case c == nil:
		return "voting needs a checklist first: call submit_checklist to score every answer against the criteria " +
			"(" + idRange(m.CriteriaOf(i)) + "), then act on its verdict"
	case c.Version != seen:
		return "the answers changed since your last checklist: call submit_checklist again on the current answers before you vote"
	case c.Verdict != VerdictVote:
		return "your checklist's verdict is new_answer: the best answer does not pass enough criteria yet. " +
			"Write an improved answer and submit it with new_answer instead of voting"
	case !slices.Contains(c.Best, target):
		return fmt.Sprintf("your checklist ranked %s best (correctness first), not %s: vote for %s", tieList(c.Best), Label(target), tieList(c.Best))
	}
	return ""
}

// idRange names a criteria list's ids: E1-E4, or E1-E4, E7, E9 once some emerged.
func idRange(items []criteria.Criterion) string {
	if len(items) == 0 {
		return "none"
	}
	contiguous := true
	for k, it := range items {
		contiguous = contiguous && it.ID == "E"+strconv.Itoa(k+1)
	}
	if contiguous {
		return items[0].ID + "-" + items[len(items)-1].ID
	}
	ids := make([]string, len(items))
	for k, it := range items {
		ids[k] = it.ID
	}
	return strings.Join(ids, ", ")
}

func tieList(agents []int) string {
	if len(agents) == 1 {
		return Label(agents[0])
	}
	return labelList(agents[:len(agents)-1]) + " or " + Label(agents[len(agents)-1])
}

func clipKey(s string) string {
	if utf8.RuneCountInString(s) > 40 {
		return string([]rune(s)[:40]) + "…"
	}
	return s
}
