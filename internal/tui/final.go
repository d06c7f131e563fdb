package tui

import (
	"fmt"
	"strings"

	xansi "github.com/charmbracelet/x/ansi"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
	"massgen/internal/usage"
	"massgen/internal/view"
)

// finalScreen is the content of the final screen at width w: the final answer as Markdown, who
// won and why, the vote tally with each voter's reason, usage and cost per agent, and the log
// directory.
func (m *Model) finalScreen(w int) string {
	s := m.st
	var b strings.Builder
	section := func(title string) { b.WriteString("\n" + styleAccent.Render(title) + "\n") }

	if f := s.Final; f != nil {
		title := fmt.Sprintf("Final answer · %s (%s) · %s", m.label(f.Agent), f.Agent, f.Label)
		if f.Truncated != "" {
			title += " · " + f.Truncated
		}
		b.WriteString(styleAccent.Render(title) + "\n")
		// How it was made, in words: "regenerate" and "verbatim" are jargon to a newcomer.
		how := view.FinalMethod(f.Mode, s.Winner == "" || f.Agent == s.Winner)
		if f.Fallback {
			how = "the stored answer as is"
		}
		if how != "" {
			for _, l := range wrapLines(how, w-2) {
				b.WriteString("  " + styleDim.Render(l) + "\n")
			}
		}
		b.WriteString(m.markdown(f.Content, w))
	} else {
		b.WriteString(styleAccent.Render("No final answer") + "\n")
	}
	if s.SessionError != "" {
		for _, l := range wrapLines("error: "+s.SessionError, w-2) {
			b.WriteString("  " + styleBad.Render(l) + "\n")
		}
	}

	section("Winner")
	for _, l := range wrapLines(m.why(), w-2) {
		b.WriteString("  " + l + "\n")
	}

	section("Votes")
	m.writeTally(&b, w)

	section("Usage")
	m.writeUsage(&b, w)

	section("Session")
	fmt.Fprintf(&b, "  %s, exit code %d, %s\n", s.SessionStatus, s.ExitCode, elapsed(s.EndTime.Sub(s.StartTime)))
	if cp := s.CriticalPath(s.EndTime); len(cp.Steps) > 0 {
		b.WriteString("  latency: " + cp.Summary() + "\n")
	}
	if s.LogDir != "" {
		b.WriteString("  log: " + s.LogDir + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// Leftover is what Options.Leave writes to the terminal once the program has quit: the
// header, its notices and the whole final screen (not only the part the window showed).
func (m *Model) Leftover() string {
	w := max(m.width, 20)
	return strings.Join(m.header(w), "\n") + "\n" + m.finalScreen(w)
}

// why explains who won and why, in words: the rule that picked the winner, why coordination
// ended, and whether the final answer is a fallback.
func (m *Model) why() string {
	s := m.st
	var sb strings.Builder
	if s.Winner == "" {
		sb.WriteString("No agent produced an answer, so there is no winner.")
	} else {
		who := fmt.Sprintf("%s (%s)", m.label(s.Winner), s.Winner)
		if s.WinnerAnswer != "" {
			who += " with " + s.WinnerAnswer
		}
		tally := s.Tally()
		best, total := 0, 0
		for _, c := range tally {
			best, total = max(best, c.Votes), total+c.Votes
		}
		switch {
		case s.EndReason == event.EndAllAnswered:
			fmt.Fprintf(&sb, "No vote (orchestrator.skip_voting): %s, so %s, the first answer in agent order, won.", m.allAnswered(), who)
		case len(tally) == 0:
			fmt.Fprintf(&sb, "%s won: no vote counted, so the first agent with an answer wins.", who)
		case s.Tie:
			fmt.Fprintf(&sb, "%s won: a tie at %s, broken by agent order.", who, plural(best, "vote"))
		case s.Decision() != nil && s.Decision().Weighting != coord.WeightPlain:
			// Weighed votes: the count alone does not say why.
			fmt.Fprintf(&sb, "%s won: %s.", who, s.Decision().Rule)
		default:
			fmt.Fprintf(&sb, "%s won: the most votes (%d of %d counted).", who, best, total)
		}
	}
	switch s.EndReason {
	case event.EndConsensus:
		sb.WriteString(" Coordination ended when every live agent had voted.")
	case event.EndDecided:
		sb.WriteString(" Coordination ended once the remaining votes could no longer change the winner (orchestrator.end_when_decided).")
	case event.EndTimeout:
		sb.WriteString(" The session timed out, so the votes so far decided.")
	case event.EndInterrupted:
		sb.WriteString(" The session was interrupted, so the votes so far decided.")
	case event.EndAllDead:
		sb.WriteString(" Every agent failed too often and was left out; what was gathered so far was used.")
	case event.EndBudget:
		fmt.Fprintf(&sb, " The cost budget (%s) was spent, so coordination stopped with the votes so far.", usage.Dollars(s.Settings.MaxCostUSD))
	case event.EndSkipped:
		sb.WriteString(" Coordination was skipped.")
	}
	if f := s.Final; f != nil && s.Winner != "" && f.Agent != s.Winner {
		fmt.Fprintf(&sb, " %s (%s) presented it, as orchestrator.presenter_agent asks.", m.label(f.Agent), f.Agent)
	}
	if m.presenterNote != "" {
		sb.WriteString(" Note: " + m.presenterNote + ".")
	}
	if f := s.Final; f != nil && f.Fallback {
		sb.WriteString(" The final presentation failed or produced nothing, so the stored answer was used.")
	}
	return sb.String()
}

// allAnswered says why a session without a vote round stopped taking answers: every live
// agent answered once, or max_new_answers_global allowed no more (the engine's Converged
// under skip_voting).
func (m *Model) allAnswered() string {
	s := m.st
	if g := s.Settings.MaxNewAnswersGlobal; g > 0 && s.Totals.Answers >= g {
		for _, a := range s.Agents {
			if !a.Dead && len(a.Answers) == 0 {
				return fmt.Sprintf("max_new_answers_global (%d) allowed no more answers", g)
			}
		}
	}
	return "every live agent answered once"
}

// writeTally lists the votes that count, by answer, with each voter's reason, then the agents
// whose vote did not count.
func (m *Model) writeTally(b *strings.Builder, w int) {
	s := m.st
	tally := s.Tally()
	if len(tally) == 0 {
		b.WriteString("  no votes counted\n")
	}
	// The decision record adds what each vote weighs, the strongest dissent and the
	// verifiers' verdicts (the same record plain output's "why" block explains).
	d := s.Decision()
	weighed := d != nil && d.Weighting != coord.WeightPlain
	counts := map[string]readmodel.DecisionCount{}
	if d != nil {
		for _, c := range d.Tally {
			counts[c.AnswerLabel] = c
		}
	}
	counted := map[string]bool{}
	for _, c := range tally {
		head := plural(c.Votes, "vote")
		if dc, ok := counts[c.AnswerLabel]; ok && weighed {
			head += ", score " + view.Num(dc.Score)
		}
		if dc, ok := counts[c.AnswerLabel]; ok && dc.Confidence != nil {
			head += ", its author's confidence " + view.Num(*dc.Confidence)
		}
		fmt.Fprintf(b, "  %s  %s\n", styleBold.Render(c.AnswerLabel), head)
		for _, id := range c.Voters {
			counted[id] = true
			reason := ""
			if a := s.Agent(id); a != nil && a.Vote != nil {
				reason = a.Vote.Reason
			}
			who := fmt.Sprintf("%s (%s)", m.label(id), id)
			for _, bl := range counts[c.AnswerLabel].Ballots {
				if vw := view.VoteWorth(bl, weighed); bl.Voter == id && vw != "" {
					who += " " + vw
				}
			}
			writeReason(b, who, reason, w)
		}
	}
	for _, a := range s.Agents {
		if counted[a.ID] {
			continue
		}
		switch {
		case a.Dead:
			fmt.Fprintf(b, "  %s (%s): dead, no vote\n", a.Label, a.ID)
		case a.VotesCast+a.VotesIgnored > 0:
			fmt.Fprintf(b, "  %s (%s): no vote that counts (%d invalidated by newer answers, %d cast on an old answer set)\n",
				a.Label, a.ID, a.VotesCast, a.VotesIgnored)
		default:
			fmt.Fprintf(b, "  %s (%s): did not vote\n", a.Label, a.ID)
		}
	}
	if d == nil || d.NoVote || len(d.Tally) == 0 {
		return
	}
	for _, l := range append([]string{view.DissentLine(d)}, view.VerifierLines(d)...) {
		for i, x := range wrapLines(l, max(w-4, 10)) {
			if i > 0 {
				x = "  " + styleDim.Render(x)
			}
			b.WriteString("  " + x + "\n")
		}
	}
}

func writeReason(b *strings.Builder, who, reason string, w int) {
	lines := wrapLines(who+": "+reason, max(w-6, 10))
	for i, l := range lines {
		if i == 0 {
			b.WriteString("    " + l + "\n")
			continue
		}
		b.WriteString("      " + styleDim.Render(l) + "\n")
	}
}

// writeUsage writes a table of tokens and cost per agent, and the total, fitted to w cells:
// columns that hold only zeros go, then, while it is too wide, the model names are cut and
// the cached, reasoning and id columns dropped, so the cost column always shows.
func (m *Model) writeUsage(b *strings.Builder, w int) {
	s := m.st
	rows := [][]string{{"agent", "id", "model", "calls", "input", "cached", "output", "reasoning", "cost"}}
	// ≈ marks usage the engine estimated for calls it cut off before the provider reported it.
	approx := func(u provider.Usage, v string) string {
		if u.Estimated {
			return "≈" + v
		}
		return v
	}
	for _, a := range s.Agents {
		u := a.Usage
		rows = append(rows, []string{a.Label, a.ID, a.Model, fmt.Sprint(a.Calls), approx(u, tokens(u.InputTokens)), tokens(u.CachedInputTokens),
			approx(u, tokens(u.OutputTokens)), tokens(u.ReasoningTokens), a.Cost().Short()})
	}
	u := s.Totals.Usage
	calls := 0
	for _, a := range s.Agents {
		calls += a.Calls
	}
	rows = append(rows, []string{"total", "", "", fmt.Sprint(calls), approx(u, tokens(u.InputTokens)), tokens(u.CachedInputTokens),
		approx(u, tokens(u.OutputTokens)), tokens(u.ReasoningTokens), s.Cost().Short()})
	if rs := s.Totals.Rounds; len(rs) > 1 {
		// The same total by round: what each round of the protocol cost.
		for _, r := range rs {
			ru := r.Usage
			rows = append(rows, []string{roundName(r), "", "", "", approx(ru, tokens(ru.InputTokens)), tokens(ru.CachedInputTokens),
				approx(ru, tokens(ru.OutputTokens)), tokens(ru.ReasoningTokens), usage.AmountOf(r.CostUSD, ru, s.CostKnown()).Short()})
		}
	}
	const colID, colModel, colCached, colReasoning = 1, 2, 5, 7
	keep := make([]bool, len(rows[0]))
	for i := range keep {
		keep[i] = true
	}
	if u.CachedInputTokens == 0 {
		keep[colCached] = false
	}
	if u.ReasoningTokens == 0 {
		keep[colReasoning] = false
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], width(c))
		}
	}
	total := func() int {
		n := 1
		for i, k := range keep {
			if k {
				n += 1 + widths[i]
			}
		}
		return n
	}
	// Narrow the model names to 12 cells first, then drop columns, then narrow them to 6.
	shrinkModel := func(min int) {
		if over := total() - w; over > 0 && widths[colModel] > min {
			widths[colModel] = max(widths[colModel]-over, min, len("model"))
		}
	}
	shrinkModel(12)
	for _, col := range []int{colCached, colReasoning, colID} {
		if total() > w {
			keep[col] = false
		}
	}
	shrinkModel(6)
	for k, r := range rows {
		var line strings.Builder
		line.WriteString(" ")
		for i, c := range r {
			if !keep[i] {
				continue
			}
			c = truncate(c, widths[i])
			pad := strings.Repeat(" ", widths[i]-width(c))
			if i >= 3 { // numbers align right
				line.WriteString(" " + pad + c)
			} else {
				line.WriteString(" " + c + pad)
			}
		}
		text := strings.TrimRight(line.String(), " ")
		if k == 0 {
			text = styleDim.Render(text)
		}
		b.WriteString(text + "\n")
	}
	if models := s.UnpricedModels(); len(models) > 0 {
		for _, l := range wrapLines("no price is known for "+strings.Join(models, ", ")+": their tokens are counted, their cost is not", w-2) {
			b.WriteString("  " + styleDim.Render(l) + "\n")
		}
	}
}

// truncate cuts plain s to w cells with an ellipsis.
func truncate(s string, w int) string {
	if width(s) <= w {
		return s
	}
	return xansi.Truncate(s, w, "…")
}

// markdown renders the final answer at width w (renderMarkdown), falling back to wrapped plain
// text if rendering fails. The result is cached for the width.
func (m *Model) markdown(md string, w int) string {
	key := fmt.Sprintf("%d\x00%s", w, md)
	if key == m.finalMDKey {
		return m.finalMD
	}
	out, err := m.renderMD(md, w)
	if err != nil {
		out = strings.Join(wrapLines(md, w-2), "\n") + "\n"
	}
	m.finalMD, m.finalMDKey = out, key
	return out
}

// label returns the anonymous label of agent id, or id.
func (m *Model) label(id string) string {
	if a := m.st.Agent(id); a != nil {
		return a.Label
	}
	return id
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// roundName names a round of the usage table: "round 2", "setup", "final".
func roundName(r readmodel.RoundUsage) string {
	switch r.Stage {
	case readmodel.StageSetup:
		return "setup"
	case readmodel.StagePresentation:
		return "final"
	}
	return fmt.Sprintf("round %d", r.Round)
}
