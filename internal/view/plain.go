// Package view renders the event stream for people and scripts: plain streaming text and
// MassGen's automation lines. Views only consume events; replaying a log through the same view
// prints the same coordination again.
package view

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
	"massgen/internal/termtext"
	"massgen/internal/usage"
)

// Plain prints a session as readable lines: each agent's streamed text prefixed with its label,
// then every answer, vote, error and the final answer. It is an event.Sink; it is not safe for
// use outside the bus's ordering.
type Plain struct {
	w io.Writer
	// Timestamps prefixes every line with the event's time (for massgen.log).
	Timestamps bool
	// Reasoning includes reasoning deltas; Calls includes model-call details (for --debug).
	Reasoning bool
	Calls     bool

	// st is the session so far: labels, usage, cost, waits and the critical path come from
	// the one fold every view reads.
	st      *readmodel.State
	partial map[string]*strings.Builder
	final   bool // inside the final presentation stream
	wrote   bool // presentation text was streamed
	nl      bool // the last presentation text ended with a newline
	now     time.Time
	died    []string // MCP servers that died, with why, for the summary
}

// NewPlain returns a Plain view writing to w. Everything it writes is cleaned of terminal
// control first (termtext.Clean): models write what it prints, and w is a terminal or a log
// someone will cat.
func NewPlain(w io.Writer) *Plain {
	return &Plain{w: termtext.NewWriter(w), st: readmodel.NewState(), partial: map[string]*strings.Builder{}}
}

// EndpointWarnings says which agents send their requests, and their API key, to an endpoint
// other than their provider's default (base_url, --base-url, a *_BASE_URL variable), one line
// each: every view shows them with the session's start, before any request.
func EndpointWarnings(v event.SessionStarted) []string {
	var out []string
	for _, a := range v.Agents {
		if a.CustomEndpoint {
			out = append(out, fmt.Sprintf("%s (%s) sends its requests and API key to %s, not %s's default endpoint", a.Label, a.ID, a.BaseURL, a.Backend))
		}
	}
	return out
}

// Handle implements event.Sink.
func (p *Plain) Handle(e event.Event) {
	repeated := false // the agent was told it waits for this already
	if v, ok := e.Payload.(event.AgentWaiting); ok {
		a := p.st.Agent(v.Agent)
		repeated = a != nil && a.Waiting == v.Reason
	}
	p.st.Apply(e)
	p.now = e.Time
	if p.decomposition(e.Payload) || p.taskPlan(e.Payload) { // plain_decompose.go, plain_taskplan.go
		return
	}
	switch v := e.Payload.(type) {
	case event.SessionStarted:
		p.line("massgen: %s on: %s", agentCount(len(v.Agents)), oneLine(v.Question, 200))
		for _, a := range v.Agents {
			at := ""
			if a.BaseURL != "" { // where the requests, and the key, go: said before any is sent
				at = " at " + a.BaseURL
			}
			if a.CustomEndpoint {
				at += ", NOT the provider's default endpoint"
			}
			name := a.Label + " = " + a.ID
			if a.ID == a.Label {
				name = a.Label // an agent named as its label
			}
			p.line("  %s (%s %s%s)", name, a.Backend, a.Model, at)
		}
		if w := BudgetWarning(v); w != "" {
			p.line("warning: %s", w)
		}
		if n := v.Settings.MaxOrchestrationRestarts; n > 0 {
			p.line("post-evaluation: the presenter checks each final answer and may restart the turn, at most %d time(s)", n)
		}
	case event.TextDelta:
		if ev := p.st.Evaluation; v.Presentation && ev.Running() && ev.Agent == v.Agent {
			p.stream(v.Agent, v.Text) // the post-evaluation's text, not the final answer's
			return
		}
		if v.Presentation {
			p.finalText(v.Text)
			return
		}
		p.stream(v.Agent, v.Text)
	case event.ReasoningDelta:
		if p.Reasoning && !v.Presentation {
			p.stream(v.Agent, v.Text)
		}
	case event.ModelCalled:
		if p.Calls {
			p.flush(v.Agent)
			p.line("%s: model call %d (%s), %d new message(s)", p.who(v.Agent), v.Attempt, v.Stage, len(v.Messages))
		}
	case event.ToolResult:
		p.flush(v.Agent)
		outcome := "ok"
		if v.IsError {
			outcome = "error: " + oneLine(v.Content, 200)
		}
		from := ""
		if v.FromCode {
			from = " (from code)"
		}
		p.line("%s: %s%s -> %s (%.0f ms)", p.who(v.Agent), v.Tool, from, outcome, v.DurationMS)
	case event.SubagentStarted:
		p.flush(v.Agent)
		p.line("%s: subagent %s started: %s%s", p.who(v.Agent), v.ID, oneLine(v.Task, 120), logNote(v.LogDir))
	case event.SubagentFinished:
		p.flush(v.Agent)
		why := ""
		if v.Error != "" {
			why = ": " + oneLine(v.Error, 200)
		}
		p.line("%s: subagent %s %s%s%s", p.who(v.Agent), v.ID, v.Status, why, logNote(v.LogDir))
	case event.ToolServerStatus:
		what := "mcp server " + v.Server
		if event.OwnServer(v.Server) {
			what = v.Server
		}
		if v.Status == "died" && !event.OwnServer(v.Server) {
			p.died = append(p.died, fmt.Sprintf("mcp server %s died during the session: %s", v.Server, oneLine(v.Detail, 300)))
		}
		if v.Detail == "" {
			p.line("%s: %s", what, v.Status)
			break
		}
		p.line("%s: %s: %s", what, v.Status, oneLine(v.Detail, 300))
	case event.MemoryRetrieved:
		p.line("%s: memory: %d facts retrieved", p.who(v.Agent), v.Count)
	case event.MemoryStored:
		p.line("%s: memory: %d facts stored", p.who(v.Agent), v.Count)
	case event.ContextCompressed:
		p.line("%s: context compressed: ~%d -> ~%d tokens of %d (%d messages summarised)", p.who(v.Agent), v.TokensBefore, v.TokensAfter, v.Window, v.Messages)
	case event.MemoryTrouble:
		who := "memory"
		if v.Agent != "" {
			who = p.who(v.Agent) + ": memory"
		}
		p.line("%s: %s: %s", who, v.Stage, oneLine(v.Message, 300))
	case event.PlanningDecided:
		p.line("planning mode: %s", PlanningSummary(v))
	case event.CriteriaEmerged:
		for _, l := range CriteriaLines(v) {
			p.line("%s", l)
		}
	case event.RoundEvaluated:
		p.flush(v.Agent)
		if v.Warning != "" {
			p.line("%s: round evaluator: warning: %s", p.who(v.Agent), oneLine(v.Warning, 300))
			break
		}
		p.line("%s: round evaluator (%s) reviewed version %d: %s", p.who(v.Agent), v.SubagentID, v.Version, oneLine(v.Report, 160))
	case event.PersonasGenerated:
		// The warning first: it says why the personas below are built-in ones.
		if v.Warning != "" {
			p.line("personas: warning: %s", oneLine(v.Warning, 300))
		}
		for _, ps := range v.Personas {
			builtin := ""
			if ps.Fallback {
				builtin = " (built-in)"
			}
			if v.FromTurn > 0 {
				builtin += fmt.Sprintf(" (kept from turn %d)", v.FromTurn)
			}
			p.line("personas (%s): %s%s: %s", v.Mode, p.who(ps.Agent), builtin, oneLine(ps.Text, 120))
		}
	case event.QuestionParaphrased:
		if v.Warning != "" {
			p.line("paraphrases: warning: %s", oneLine(v.Warning, 300))
		}
		for _, pv := range v.Variants {
			p.line("paraphrases: %s", ParaphraseText(pv, v.Cached))
		}
	case event.RoundTimeout:
		p.flush(v.Agent)
		p.line("%s: %s", p.who(v.Agent), RoundTimeoutText(v))
	case event.VoteDeferred:
		p.flush(v.Agent)
		p.line("%s: %s", p.who(v.Agent), DeferredVote(v))
	case event.AgentWaiting:
		if repeated {
			break
		}
		p.flush(v.Agent)
		p.line("%s: waiting: %s", p.who(v.Agent), oneLine(v.Reason, 300))
	case event.ToolRejected:
		p.flush(v.Agent)
		p.line("%s: %s rejected: %s", p.who(v.Agent), v.Tool, v.Error)
	case event.EnforcementSent:
		if a := p.st.Agent(v.Agent); a != nil && !a.Reminded { // the round's time-up note, told above
			break
		}
		p.flush(v.Agent)
		p.line("%s: no workflow tool call; reminded to vote or answer", p.who(v.Agent))
	case event.AnswerSubmitted:
		p.flush(v.Agent)
		p.line("%s: new answer %s", p.who(v.Agent), v.Label)
		if len(v.Invalidated) > 0 {
			p.line("  votes of %s no longer count", p.labelList(v.Invalidated))
		}
	case event.VoteCast:
		p.flush(v.Agent)
		p.line("%s: votes for %s (%s): %s", p.who(v.Agent), v.TargetLabel, v.AnswerLabel, oneLine(v.Reason, 160))
	case event.VoteIgnored:
		p.flush(v.Agent)
		p.line("%s: vote for %s not counted (cast on answers v%d, now v%d); continuing with the new answers",
			p.who(v.Agent), v.TargetLabel, v.SeenVersion, v.CurrentVersion)
	case event.AgentError:
		p.flush(v.Agent)
		p.line("%s: error (%d/%d): %s", p.who(v.Agent), v.Consecutive, v.Budget, oneLine(v.Message, 300))
	case event.AgentSession:
		p.flush(v.Agent)
		p.line("%s: CLI session %s", p.who(v.Agent), v.SessionID)
	case event.AgentDead:
		p.flush(v.Agent)
		p.line("%s: dead, left out of the session: %s", p.who(v.Agent), oneLine(v.Reason, 300))
	case event.BroadcastAsked, event.BroadcastAnswered, event.BroadcastDone:
		p.broadcastLine(v)
	case event.PostEvaluationStarted, event.AnswerSubmittedFinal, event.OrchestrationRestarted:
		p.restartLine(v) // plain_restart.go
	case event.AnswerVerified:
		p.flush(v.Agent)
		line := fmt.Sprintf("%s: verifier %d (%s) on %s: %s", p.who(v.Agent), v.Verifier, v.Aspect, v.AnswerLabel, v.Verdict)
		if r := oneLine(v.Reason, 200); r != "" {
			line += ": " + r
		}
		p.line("%s", line)
	case event.CoordinationEnded:
		p.flushAll()
		p.coordinationEnded(v)
	case event.FinalStarted:
		by := p.who(v.Agent)
		if v.Winner != "" && v.Winner != v.Agent {
			by += " for the winner " + p.who(v.Winner)
		}
		how := FinalMethod(v.Mode, v.Winner == "" || v.Winner == v.Agent)
		if v.Note != "" {
			how += "; " + oneLine(v.Note, 300)
		}
		if st := p.st; st.MaxAttempts > 0 {
			how += fmt.Sprintf("; attempt %d/%d", st.Attempt, st.MaxAttempts)
		}
		p.line("final answer by %s (%s):", by, how)
		p.line("%s", strings.Repeat("-", 60))
		p.final = true
	case event.FinalAnswer:
		if !p.final {
			p.line("final answer by %s:", p.who(v.Agent))
			p.line("%s", strings.Repeat("-", 60))
		}
		if v.Fallback || !p.wrote {
			if p.wrote {
				p.line("")
			}
			p.finalText(v.Content)
		}
		p.endFinal()
		if note := v.TruncationNote(); note != "" {
			p.line("%s", note)
		}
		switch {
		case v.Fallback && p.st.Settings.CoordinationMode == "decomposition":
			p.line("(the parts as they are were used as the final answer)")
		case v.Fallback:
			p.line("(the stored answer %s was used as the final answer)", p.label(v.Agent))
		}
		for _, l := range WhyLines(p.st.Decision()) {
			p.line("%s", l)
		}
	case event.SessionEnded:
		p.flushAll()
		p.endFinal()
		line := fmt.Sprintf("session %s (exit %d) in %.1fs", v.Status, v.ExitCode, v.DurationSeconds)
		if v.Error != "" {
			line += ": " + v.Error
		}
		p.line("%s", line)
		for _, d := range p.died {
			p.line("%s", d)
		}
		p.planSummary()
		if t := p.st.Totals; t.Usage != (provider.Usage{}) {
			p.line("%s", UsageLine(t.Usage, t.CostUSD, p.st.UnpricedModels()...))
			if t.RetriedCalls > 0 {
				p.line("retried: %d model calls of turns whose worker was lost were paid for and made again (%s, within the cost above)",
					t.RetriedCalls, usage.AmountOf(t.RetriedCostUSD, provider.Usage{}, true))
			}
			for _, l := range breakdown(p.st) {
				p.line("%s", l)
			}
		}
		if cp := p.st.CriticalPath(e.Time); len(cp.Steps) > 0 {
			p.line("latency: %s", cp.Summary())
		}
	}
}

// UsageLine summarises tokens and cost: "tokens: 1234 input (200 cached), 56 output (10 reasoning); cost $0.0123",
// with "≈" when some of it is the engine's estimate for calls cut off before their usage was
// reported. unpriced are the models that used tokens without a price: the cost is then
// "unknown", or at least what was priced, never a $0.0000 that passes for free.
func UsageLine(u provider.Usage, cost float64, unpriced ...string) string {
	s := fmt.Sprintf("tokens: %d input", u.InputTokens)
	if u.Estimated {
		s = fmt.Sprintf("tokens ≈ %d input", u.InputTokens)
	}
	if u.CachedInputTokens > 0 {
		s += fmt.Sprintf(" (%d cached)", u.CachedInputTokens)
	}
	s += fmt.Sprintf(", %d output", u.OutputTokens)
	if u.ReasoningTokens > 0 {
		s += fmt.Sprintf(" (%d reasoning)", u.ReasoningTokens)
	}
	var notes []string
	if len(unpriced) > 0 {
		notes = append(notes, "price unknown for "+strings.Join(unpriced, ", "))
	}
	if u.Unknown {
		notes = append(notes, "a stopped CLI run did not tell its usage")
	}
	if u.Estimated {
		notes = append(notes, "partly estimated: calls cut off before their usage was reported")
	}
	c := "cost " + usage.AmountOf(cost, u, len(unpriced) == 0).String()
	if len(notes) > 0 {
		c += " (" + strings.Join(notes, "; ") + ")"
	}
	return s + "; " + c
}

func (p *Plain) coordinationEnded(v event.CoordinationEnded) {
	p.line("coordination ended: %s", v.Reason)
	if p.st.Settings.CoordinationMode == "decomposition" {
		if v.Winner != "" {
			p.line("presenter: %s integrates the parts", v.WinnerLabel)
		}
		return
	}
	if v.Reason == event.EndAllAnswered && v.Winner != "" {
		// No vote round: a tally of zeros would only be noise.
		p.line("winner: %s (%s), the first answer in agent order (no vote: orchestrator.skip_voting)", v.WinnerLabel, v.AnswerLabel)
		return
	}
	for _, t := range v.Tally {
		voters := ""
		if len(t.Voters) > 0 {
			voters = " from " + p.labelList(t.Voters)
		}
		score := ""
		if p.st.Settings.VoteWeighting != "" {
			score = ", score " + num(t.Score)
		}
		p.line("  %s: %d vote(s)%s%s", t.Label, t.Votes, voters, score)
	}
	switch {
	case v.Winner == "":
		p.line("no agent produced an answer")
	case v.Tie:
		p.line("winner: %s (%s), tie broken by agent order", v.WinnerLabel, v.AnswerLabel)
	default:
		p.line("winner: %s (%s)", v.WinnerLabel, v.AnswerLabel)
	}
}

func (p *Plain) who(id string) string {
	if a := p.st.Agent(id); a != nil && a.Label != id { // an agent named like its label is named once
		return a.Label + " " + id
	}
	return id
}

// label is agent id's label, "" for an unknown agent.
func (p *Plain) label(id string) string {
	if a := p.st.Agent(id); a != nil {
		return a.Label
	}
	return ""
}

func (p *Plain) labelList(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = cmp.Or(p.label(id), id)
	}
	return strings.Join(out, ", ")
}

// stream buffers an agent's text and prints whole lines, so agents streaming at once do not
// interleave mid-line.
func (p *Plain) stream(id, text string) {
	b := p.partial[id]
	if b == nil {
		b = &strings.Builder{}
		p.partial[id] = b
	}
	b.WriteString(text)
	s := b.String()
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		for _, l := range strings.Split(s[:i], "\n") {
			p.line("[%s] %s", p.label(id), l)
		}
		b.Reset()
		b.WriteString(s[i+1:])
	}
}

func (p *Plain) flush(id string) {
	if b := p.partial[id]; b != nil && b.Len() > 0 {
		p.line("[%s] %s", p.label(id), b.String())
		b.Reset()
	}
}

func (p *Plain) flushAll() {
	for _, a := range p.st.Agents {
		p.flush(a.ID)
	}
}

func (p *Plain) finalText(s string) {
	if s != "" {
		p.wrote, p.nl = true, strings.HasSuffix(s, "\n")
	}
	fmt.Fprint(p.w, s)
}

func (p *Plain) endFinal() {
	if p.final {
		if !p.nl {
			fmt.Fprintln(p.w)
		}
		p.line("%s", strings.Repeat("-", 60))
		p.final = false
	}
}

func (p *Plain) line(format string, args ...any) {
	if p.Timestamps {
		fmt.Fprint(p.w, p.now.Format("15:04:05.000 "))
	}
	fmt.Fprintf(p.w, format+"\n", args...)
}

// oneLine folds whitespace and cuts s to max runes with an ellipsis.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) > max {
		return string(r[:max]) + "..."
	}
	return s
}

// RoundTimeoutText says what a round timeout did: "round 2 time is up after 60s; told to
// submit", or, once the grace period is over too, "round 2 cut after 180s".
func RoundTimeoutText(v event.RoundTimeout) string {
	if v.Phase == event.RoundCut {
		return fmt.Sprintf("round %d cut after %s", v.Round, seconds(v.LimitSeconds+v.GraceSeconds))
	}
	return fmt.Sprintf("round %d time is up after %s; told to submit", v.Round, seconds(v.LimitSeconds))
}

// seconds formats a duration in seconds as "60s" or "2.5s".
func seconds(s float64) string {
	return strconv.FormatFloat(math.Round(s*10)/10, 'f', -1, 64) + "s"
}

// DeferredVote says what became of a vote cast before every agent had answered
// (defer_voting_until_all_answered): "vote for agent2 held back until agent3 answers".
func DeferredVote(v event.VoteDeferred) string {
	verb := "answer"
	if len(v.Waiting) == 1 {
		verb = "answers"
	}
	if len(v.Waiting) == 0 {
		return "vote for " + v.TargetLabel + " held back until every agent has answered"
	}
	return fmt.Sprintf("vote for %s held back until %s %s", v.TargetLabel, strings.Join(v.Waiting, ", "), verb)
}

// FinalMethod says in words how the final answer is made, for a mode of FinalStarted or
// FinalAnswer (the final_presentation words, which are jargon to a newcomer); byWinner is
// false when presenter_agent presents for the winner.
func FinalMethod(mode string, byWinner bool) string {
	switch mode {
	case "regenerate":
		if byWinner {
			return "written by the winner after reading all answers"
		}
		return "written by the presenter after reading all answers"
	case "verbatim":
		return "the winner's answer as is"
	case "synthesize":
		return "merged from all answers"
	}
	return mode
}

// ParaphraseText says how one agent reads the question (orchestrator.dspy), in one line.
func ParaphraseText(v event.Paraphrase, cached bool) string {
	who := v.Label
	if v.Agent != v.Label {
		who += " " + v.Agent
	}
	if v.Fallback {
		if v.Why == "" {
			return who + " reads the original question"
		}
		return who + " reads the original question (" + oneLine(v.Why, 160) + ")"
	}
	from := ""
	if cached {
		from = " (cached)"
	}
	return fmt.Sprintf("%s reads %q%s", who, oneLine(v.Text, 160), from)
}

// PlanningSummary says what planning mode decided, in one line.
func PlanningSummary(v event.PlanningDecided) string {
	switch {
	case !v.HoldBack:
		return "nothing held back (" + v.Reason + ")"
	case len(v.Held) == 0:
		return "every MCP tool held back until the final presentation (" + v.Reason + ")"
	}
	return strings.Join(v.Held, ", ") + " held back until the final presentation (" + v.Reason + ")"
}

// logNote names a subagent's log folder, where its whole session can be read.
func logNote(dir string) string {
	if dir == "" {
		return ""
	}
	return " (log " + dir + ")"
}

// broadcastLine tells an ask_others question, its answers and its end.
func (p *Plain) broadcastLine(v event.Payload) {
	switch v := v.(type) {
	case event.BroadcastAsked:
		p.flush(v.Agent)
		whom := "you"
		if !v.Human {
			whom = p.labelList(v.Targets)
		}
		p.line("%s: asks %s (%s): %s", p.who(v.Agent), whom, v.ID, oneLine(v.Question, 300))
	case event.BroadcastAnswered:
		who := "you"
		if v.Responder != event.ResponderHuman {
			who = p.who(v.Responder)
		}
		p.line("  %s answered %s: %s", who, v.ID, oneLine(v.Content, 300))
	case event.BroadcastDone:
		if v.Status == event.BroadcastComplete && v.Note == "" {
			break
		}
		note := ""
		if v.Note != "" {
			note = ": " + oneLine(v.Note, 200)
		}
		p.line("  question %s of %s: %s, %d answer(s)%s", v.ID, p.who(v.Agent), v.Status, v.Answers, note)
	}
}
