package tui

import (
	"fmt"
	"reflect"
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/ansi"
	"charm.land/glamour/v2/styles"

	"massgen/internal/event"
	"massgen/internal/provider"
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
		if f.Mode != "" {
			title += " · " + f.Mode
		}
		if f.Truncated != "" {
			title += " · " + f.Truncated
		}
		b.WriteString(styleAccent.Render(title) + "\n")
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
	m.writeUsage(&b)

	section("Session")
	fmt.Fprintf(&b, "  %s, exit code %d, %s\n", s.SessionStatus, s.ExitCode, elapsed(s.EndTime.Sub(s.StartTime)))
	if s.LogDir != "" {
		b.WriteString("  log: " + s.LogDir + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
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
		case len(tally) == 0:
			fmt.Fprintf(&sb, "%s won: no vote counted, so the first agent with an answer wins.", who)
		case s.Tie:
			fmt.Fprintf(&sb, "%s won: a tie at %s, broken by agent order.", who, plural(best, "vote"))
		default:
			fmt.Fprintf(&sb, "%s won: the most votes (%d of %d counted).", who, best, total)
		}
	}
	switch s.EndReason {
	case event.EndConsensus:
		sb.WriteString(" Coordination ended when every live agent had voted.")
	case event.EndTimeout:
		sb.WriteString(" The session timed out, so the votes so far decided.")
	case event.EndInterrupted:
		sb.WriteString(" The session was interrupted, so the votes so far decided.")
	case event.EndAllDead:
		sb.WriteString(" Every agent failed too often and was left out; what was gathered so far was used.")
	case event.EndBudget:
		fmt.Fprintf(&sb, " The cost budget (%s) was spent, so coordination stopped with the votes so far.", cost(s.Settings.MaxCostUSD))
	case event.EndSkipped:
		sb.WriteString(" Coordination was skipped.")
	}
	if f := s.Final; f != nil && f.Fallback {
		sb.WriteString(" The final presentation failed or produced nothing, so the stored answer was used.")
	}
	return sb.String()
}

// writeTally lists the votes that count, by answer, with each voter's reason, then the agents
// whose vote did not count.
func (m *Model) writeTally(b *strings.Builder, w int) {
	s := m.st
	tally := s.Tally()
	if len(tally) == 0 {
		b.WriteString("  no votes counted\n")
	}
	counted := map[string]bool{}
	for _, c := range tally {
		fmt.Fprintf(b, "  %s  %s\n", styleBold.Render(c.AnswerLabel), plural(c.Votes, "vote"))
		for _, id := range c.Voters {
			counted[id] = true
			reason := ""
			if a := s.Agent(id); a != nil && a.Vote != nil {
				reason = a.Vote.Reason
			}
			writeReason(b, fmt.Sprintf("%s (%s)", m.label(id), id), reason, w)
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

// writeUsage writes a table of tokens and cost per agent, and the total.
func (m *Model) writeUsage(b *strings.Builder) {
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
			approx(u, tokens(u.OutputTokens)), tokens(u.ReasoningTokens), approx(u, cost(a.CostUSD))})
	}
	u := s.Totals.Usage
	calls := 0
	for _, a := range s.Agents {
		calls += a.Calls
	}
	rows = append(rows, []string{"total", "", "", fmt.Sprint(calls), approx(u, tokens(u.InputTokens)), tokens(u.CachedInputTokens),
		approx(u, tokens(u.OutputTokens)), tokens(u.ReasoningTokens), approx(u, cost(s.Totals.CostUSD))})
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for k, r := range rows {
		var line strings.Builder
		line.WriteString(" ")
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-len([]rune(c)))
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
}

// markdown renders the final answer at width w with glamour, falling back to wrapped plain
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

func renderMarkdown(md string, w int) (string, error) {
	r, err := glamour.NewTermRenderer(glamour.WithStyles(agnosticStyle()), glamour.WithWordWrap(max(w-4, 20)))
	if err != nil {
		return "", err
	}
	out, err := r.Render(sanitize(md))
	if err != nil {
		return "", err
	}
	return strings.Trim(out, "\n") + "\n", nil
}

// agnosticStyle is glamour's dark style without any colour: bold, italics, rules and bullets
// only, so the answer reads the same on dark and light terminals.
func agnosticStyle() ansi.StyleConfig {
	cfg := styles.DarkStyleConfig
	stripColors(reflect.ValueOf(&cfg).Elem())
	// Inline code loses its background, so mark it the Markdown way.
	cfg.Code.Prefix, cfg.Code.Suffix = "`", "`"
	return cfg
}

// stripColors clears every Color and BackgroundColor field and the Chroma theme of a style
// struct, recursing into nested structs but not through pointers, which may be shared.
func stripColors(v reflect.Value) {
	t := v.Type()
	for i := range v.NumField() {
		f := v.Field(i)
		switch name := t.Field(i).Name; {
		case name == "Color" || name == "BackgroundColor" || name == "Chroma":
			f.SetZero()
		case name == "Theme" && f.Kind() == reflect.String:
			f.SetString("")
		case f.Kind() == reflect.Struct:
			stripColors(f)
		}
	}
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
