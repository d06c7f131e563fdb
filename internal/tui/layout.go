package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"massgen/internal/readmodel"
)

// minColumn is the narrowest agent column; below it the agents become tabs.
const minColumn = 26

// frame writes the lines of one frame into a builder, at most max of them.
type frame struct {
	b      strings.Builder
	n, max int
}

// line writes one line made of parts.
func (f *frame) line(parts ...string) {
	if f.n >= f.max {
		return
	}
	if f.n > 0 {
		f.b.WriteByte('\n')
	}
	for _, p := range parts {
		f.b.WriteString(p)
	}
	f.n++
}

func (f *frame) lines(ls []string) {
	for _, l := range ls {
		f.line(l)
	}
}

// render draws the whole window: header, body and footer, exactly height lines of at most
// width cells, written once into one buffer.
func (m *Model) render() string {
	w := m.width
	f := &frame{max: m.height}
	f.b.Grow(len(m.frameCache) + 256)
	f.lines(m.header(w))
	h := m.bodyHeight()
	end := min(f.n+h, f.max)
	m.body(f, w, h)
	for f.n < end {
		f.line()
	}
	f.lines(m.footer(w))
	return f.b.String()
}

// phase names what the session is doing.
func (m *Model) phase() string {
	s := m.st
	switch {
	case s.Ended:
		return "done"
	case s.Evaluation.Running():
		return "evaluating the final answer"
	case s.FinalPresentation, s.CoordinationEnded:
		return "presenting"
	case s.Phase == readmodel.PhaseEnforcement:
		return "voting"
	}
	return "answering"
}

func (m *Model) header(w int) []string {
	s := m.st
	q := "massgen"
	if m.replay {
		q += " replay " + speedText(m.replaySpeed)
	}
	if s.Question != "" {
		q += ": " + oneLine(s.Question, w)
	}
	var info strings.Builder
	info.WriteString(styleAccent.Render(m.phase()))
	switch {
	case s.Ended && s.Winner != "":
		fmt.Fprintf(&info, " · winner %s (%s)", m.label(s.Winner), s.Winner)
		if s.WinnerAnswer != "" {
			info.WriteString(" with " + s.WinnerAnswer)
		}
		fmt.Fprintf(&info, " · %s (exit %d)", s.SessionStatus, s.ExitCode)
	case s.Ended:
		fmt.Fprintf(&info, " · no winner · %s (exit %d)", s.SessionStatus, s.ExitCode)
	default:
		fmt.Fprintf(&info, " · answers v%d · %s", s.Version, m.census())
	}
	if s.MaxAttempts > 0 {
		fmt.Fprintf(&info, " · attempt %d/%d", s.Attempt, s.MaxAttempts)
	}
	lines := []string{fit(styleBold.Render(fit(q, w)), w), fit(info.String(), w)}
	for i, n := range m.notices {
		if i == maxNotices-1 && len(m.notices) > maxNotices {
			lines = append(lines, fit(styleWarn.Render(fmt.Sprintf("! %d more warnings: see massgen.log in the log folder", len(m.notices)-i)), w))
			break
		}
		lines = append(lines, fit(styleWarn.Render("! "+oneLine(n, 4*w)), w))
	}
	return lines
}

// speedText says how fast a replay plays: "at 4× speed", "as fast as possible".
func speedText(speed float64) string {
	if speed <= 0 {
		return "(as fast as possible)"
	}
	return fmt.Sprintf("(%s× speed)", strconv.FormatFloat(speed, 'f', -1, 64))
}

// census counts the agents by badge: "3 agents: 1 thinking, 1 answered, 1 dead".
func (m *Model) census() string {
	n := len(m.panes)
	if n == 0 {
		return "no agents yet"
	}
	var order []string
	count := map[string]int{}
	for _, pn := range m.panes {
		k := m.badge(pn).text
		if i := strings.IndexAny(k, " ("); i > 0 && !strings.HasPrefix(k, "vote not") {
			k = k[:i]
		}
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = fmt.Sprintf("%d %s", count[k], k)
	}
	noun := "agents"
	if n == 1 {
		noun = "agent"
	}
	return fmt.Sprintf("%d %s: %s", n, noun, strings.Join(parts, ", "))
}

func (m *Model) footer(w int) []string {
	s := m.st
	current, counted := 0, 0
	for _, a := range s.Agents {
		if len(a.Answers) > 0 {
			current++
		}
		if s.Counts(a.Vote) {
			counted++
		}
	}
	// Every vote cast counts in the second number, stale ones included, so that it only grows.
	// Before the first of each there is nothing to count: "0/0" would read as a fraction.
	answers := fmt.Sprintf("answers %d/%d", current, s.Totals.Answers)
	votes := fmt.Sprintf("votes %d/%d", counted, s.Totals.Votes+s.Totals.IgnoredVotes)
	yet := " yet" // none so far; once coordination is over, none at all
	if s.CoordinationEnded || s.Ended {
		yet = ""
	}
	switch cast := s.Totals.Votes + s.Totals.IgnoredVotes; {
	case s.Totals.Answers == 0 && cast == 0:
		answers, votes = "no answers"+yet, ""
	case cast == 0:
		votes = "no votes" + yet
	}
	stats := elapsed(m.now().Sub(s.StartTime)) + " · " + answers
	if votes != "" {
		stats += " · " + votes
	}
	stats += fmt.Sprintf(" · tokens %s in / %s out · %s", tokens(s.Totals.Usage.InputTokens), tokens(s.Totals.Usage.OutputTokens), footerCost(s))
	if s.StartTime.IsZero() {
		stats = "waiting for the session to start"
	}
	q := "q cancel"
	switch {
	case m.replay && !m.ended():
		q = "q stop the replay"
	case m.ended():
		q = "q " + m.endKeyHelp()
	}
	var keys string
	switch {
	case m.cancelled && !m.ended():
		keys = styleWarn.Render("cancelling... waiting for the session to end · q again: quit now")
	case m.screen == screenAgent:
		keys = "tab next agent · ↑/↓ pgup/pgdn scroll · esc back · ? help · " + q
	case m.screen == screenTable:
		keys = "↑/↓ ←/→ scroll · t or esc back · ? help · " + q
	case m.ended():
		keys = "↑/↓ scroll · 1-9 agent · t table · ? help · " + q
	default:
		keys = "1-9 agent · tab focus · t table · ? help · " + q
	}
	if v := m.active(); !m.help && v.TotalLineCount() > v.Height() {
		keys = fmt.Sprintf("%3.f%% · %s", v.ScrollPercent()*100, keys)
	}
	if ask := m.askLine(); ask != "" {
		keys = ask
	} else if q := m.questionLine(); q != "" {
		keys = q
	}
	return []string{fit(stats, w), fit(styleDim.Render(keys), w)}
}

// endKeyHelp says what q does after the end.
func (m *Model) endKeyHelp() string {
	if m.endKey == "" {
		return "quit"
	}
	return m.endKey
}

// body draws the part between header and footer, at most h lines.
func (m *Model) body(f *frame, w, h int) {
	limit := f.max
	f.max = min(limit, f.n+h) // the body never eats the footer
	defer func() { f.max = limit }()
	switch {
	case m.help:
		f.lines(m.helpBox(w, h))
	case m.screen == screenAgent && m.focus < len(m.panes):
		f.lines(m.agentScreen(w))
	case m.screen == screenTable:
		f.line(styleBold.Render("Coordination table"), styleDim.Render(" · ←/→ ↑/↓ scroll · t or esc: back"))
		f.lines(strings.Split(m.tableV.View(), "\n"))
	case m.st.Ended:
		f.lines(strings.Split(m.finalV.View(), "\n"))
	case len(m.panes) == 0:
		f.lines([]string{"", "  waiting for the agents..."})
	case len(m.panes)*minColumn <= w:
		m.columns(f, w, h)
	default:
		m.focus = min(m.focus, len(m.panes)-1)
		f.line(m.tabBar(w))
		pv := m.column(m.panes[m.focus], w, h-1, true)
		for r := range h - 1 {
			pv.row(f, r)
		}
	}
}

// columns draws one pane per agent side by side, row by row.
func (m *Model) columns(f *frame, w, h int) {
	n := len(m.panes)
	pvs := make([]paneView, n)
	for i, pn := range m.panes {
		cw := w / n
		if i < w%n {
			cw++
		}
		pvs[i] = m.column(pn, cw, h, i == m.focus && n > 1)
	}
	parts := make([]string, 0, 3*n)
	for r := range h {
		parts = parts[:0]
		for _, pv := range pvs {
			parts = pv.appendRow(parts, r)
		}
		f.line(parts...)
	}
}

// agentScreen draws the focused agent full screen: a title, its activity and its whole text.
func (m *Model) agentScreen(w int) []string {
	pn := m.panes[m.focus]
	a, b := pn.a, m.badge(pn)
	where := strings.TrimSpace(a.Backend + " " + a.Model)
	if a.BaseURL != "" {
		where += " at " + a.BaseURL
	}
	if a.Session != "" {
		where += " · session " + a.Session // a CLI's: `claude --resume` and the like take it
	}
	title := fmt.Sprintf("%s %s · %s", styleBold.Render(a.Label), a.ID, styleDim.Render(where))
	title += " · " + lipgloss.NewStyle().Foreground(b.color).Render(b.glyph+" "+b.text)
	act := styleDim.Render("no tool activity yet")
	if pn.activity != "" {
		act = styleDim.Render(clip("↳ "+pn.activity, w))
	}
	return append([]string{fit(title, w), fit(act, w)}, strings.Split(m.agentV.View(), "\n")...)
}

// agentContent is the full text of agent pn: its answers, vote and last tool calls, then the
// current turn's reasoning (faint) and answer text, or the final presentation.
func (m *Model) agentContent(pn *pane, w int) []string {
	a := pn.a
	var lines []string
	add := func(s string) { lines = append(lines, wrapLines(s, w)...) }
	if pn.persona != "" {
		for _, l := range wrapLines("persona: "+pn.persona, w) {
			lines = append(lines, styleFaint.Render(l))
		}
	}
	for _, ans := range a.Answers {
		lines = append(lines, styleDim.Render(fmt.Sprintf("answer %s (v%d): %s", ans.Label, ans.Version, oneLine(ans.Content, w))))
	}
	if v := a.Vote; v != nil {
		add(fmt.Sprintf("vote for %s (%s, v%d): %s", v.TargetLabel, v.AnswerLabel, v.Version, v.Reason))
	}
	if e := a.LastError; e != nil {
		for _, l := range wrapLines(fmt.Sprintf("last %s: %s", e.Type, e.Message), w) {
			lines = append(lines, styleWarn.Render(l))
		}
	}
	if len(pn.calls) > 0 {
		head := "tool calls:"
		if len(pn.calls) == maxCalls {
			head = fmt.Sprintf("the last %d tool calls:", maxCalls)
		}
		lines = append(lines, styleDim.Render(head))
		for _, c := range pn.calls {
			lines = append(lines, c.line(w))
		}
	}
	if len(lines) > 0 {
		lines = append(lines, styleDim.Render(strings.Repeat("─", w)))
	}
	for _, l := range wrapLines(a.Reasoning(), w) {
		lines = append(lines, styleFaint.Render(l))
	}
	add(a.Stream())
	if a.Presentation != "" {
		lines = append(lines, styleAccent.Render("final presentation:"))
		add(a.Presentation)
	}
	return lines
}

// sync refills the visible viewport when what it shows has changed.
func (m *Model) sync() {
	switch {
	case m.screen == screenAgent && m.focus < len(m.panes):
		pn := m.panes[m.focus]
		k := contentKey{ver: pn.ver, width: int64(m.width), which: int64(m.focus)}
		if k != m.agentKey {
			bottom := m.agentV.AtBottom()
			m.agentV.SetContentLines(m.agentContent(pn, max(m.width, 1)))
			if bottom {
				m.agentV.GotoBottom()
			}
			m.agentKey = k
		}
	case m.screen == screenTable:
		k := contentKey{ver: m.tableVer, width: int64(m.width)}
		if k != m.tableKey {
			m.tableV.SetContent(m.table.String())
			m.tableKey = k
		}
	}
	if m.st.Ended {
		k := contentKey{seq: m.st.LastSeq, width: int64(m.width)}
		if k != m.finalKey {
			m.finalV.SetContent(m.finalScreen(max(m.width, 20)))
			m.finalKey = k
		}
	}
}

// helpBox draws the key help, centred in the body.
func (m *Model) helpBox(w, h int) []string {
	text := strings.Join([]string{
		styleBold.Render("Keys"),
		"  1-9           show agent N full screen (the same digit or esc: back)",
		"  tab, ←/→      focus the next or previous agent; enter: full screen",
		"  ↑/↓, j/k      scroll; pgup/pgdn, b/f: page; g/G: top/bottom",
		"  t             coordination table (←/→ scrolls it sideways)",
		"  ?             this help; esc: back",
		"  q, ctrl+c     cancel the session (again: quit now); after the end: " + m.endKeyHelp(),
		"",
		styleBold.Render("Status"),
		"  ○ waiting   " + spinFrames[0] + " thinking   ● answered   ✓ voted",
		"  ↻ vote not counted (a newer answer arrived)   ! retrying after an error",
		"  ✗ error or dead   ★ winner",
		"",
		styleBold.Render("Footer"),
		"  answers: agents with an answer / answers submitted",
		"  votes:   votes that count now / votes cast (stale and invalidated ones too)",
		"  cost:    price unknown, or ≥$x, when a model has no price",
	}, "\n")
	box := lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).Padding(0, 1).Render(text)
	return strings.Split(lipgloss.Place(w, h, lipgloss.Center, lipgloss.Center, box), "\n")
}
