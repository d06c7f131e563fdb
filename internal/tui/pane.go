package tui

import (
	"fmt"
	"image/color"
	"strings"

	"charm.land/bubbles/v2/spinner"
	"charm.land/lipgloss/v2"

	"massgen/internal/readmodel"
	"massgen/internal/view"
)

// Colours are the terminal's basic ANSI colours, so they follow its dark or light theme.
var (
	colorDim    color.Color = lipgloss.BrightBlack
	colorBusy   color.Color = lipgloss.Cyan
	colorAnswer color.Color = lipgloss.Blue
	colorGood   color.Color = lipgloss.Green
	colorWarn   color.Color = lipgloss.Yellow
	colorBad    color.Color = lipgloss.Red
	colorWin    color.Color = lipgloss.Magenta

	styleBold   = lipgloss.NewStyle().Bold(true)
	styleFaint  = lipgloss.NewStyle().Faint(true)
	styleDim    = lipgloss.NewStyle().Foreground(colorDim)
	styleBad    = lipgloss.NewStyle().Foreground(colorBad)
	styleWarn   = lipgloss.NewStyle().Foreground(colorWarn)
	styleAccent = lipgloss.NewStyle().Foreground(colorWin).Bold(true)
)

var spinFrames = spinner.MiniDot.Frames

// badge is an agent's status as shown: a one-cell glyph, a short text and a colour.
type badge struct {
	glyph, text string
	color       color.Color
	spin        bool // the glyph is the spinner
}

// badge returns the status badge of pn's agent.
func (m *Model) badge(pn *pane) badge {
	a, s := pn.a, m.st
	switch a.Status {
	case readmodel.StatusStreaming:
		if a.Waiting != "" { // its turn ended in a wait (a deferred vote): not thinking
			return badge{"○", "waiting for others", colorDim, false}
		}
		text := "thinking"
		switch {
		case s.FinalPresentation && (a.ID == m.presenter || m.presenter == "" && a.ID == s.Winner):
			text = "presenting"
		case pn.failures > 0:
			text = fmt.Sprintf("retrying (%d/%d failed)", pn.failures, pn.budget)
		}
		return badge{spinFrames[m.spin%len(spinFrames)], text, colorBusy, true}
	case readmodel.StatusAnswered:
		return badge{"●", "answered " + a.LatestAnswerLabel(), colorAnswer, false}
	case readmodel.StatusVoted:
		if a.Vote != nil {
			return badge{"✓", "voted for " + a.Vote.TargetLabel, colorGood, false}
		}
		return badge{"✓", "voted", colorGood, false}
	case readmodel.StatusRestarting:
		if a.Part != nil {
			return badge{"↻", "new work to integrate", colorWarn, false}
		}
		return badge{"↻", "vote not counted", colorWarn, false}
	case readmodel.StatusStopped:
		return badge{"✓", "stopped (" + a.Part.Status + ")", colorGood, false}
	case readmodel.StatusError, readmodel.StatusTimeout:
		word := "error"
		if a.Status == readmodel.StatusTimeout {
			word = "timeout"
		}
		if !s.CoordinationEnded && !s.Ended {
			return badge{"!", fmt.Sprintf("retrying after %s (%d/%d)", word, pn.failures, pn.budget), colorWarn, false}
		}
		return badge{"✗", word, colorBad, false}
	case readmodel.StatusCompleted:
		if a.ID == s.Winner {
			return badge{"★", "winner", colorWin, false}
		}
		return badge{"✓", "done", colorDim, false}
	case readmodel.StatusDead:
		return badge{"✗", "dead", colorBad, false}
	}
	return badge{"○", "waiting", colorDim, false}
}

// chrome is the styled frame of a pane, which changes only with its width, colour and focus.
type chrome struct {
	w                int
	color            color.Color
	focused          bool
	top, bottom      string
	left, right      string
	label, model, hr string
	persona          string // "" without one
}

func (pn *pane) chrome(w int, c color.Color, focused bool) *chrome {
	ch := &pn.chr
	if ch.top != "" && ch.w == w && ch.color == c && ch.focused == focused {
		return ch
	}
	bs := lipgloss.NewStyle().Foreground(c)
	if focused {
		bs = bs.Bold(true)
	}
	inner := max(w-4, 1)
	line := strings.Repeat("─", max(w-2, 0))
	*ch = chrome{
		w: w, color: c, focused: focused,
		top: bs.Render("╭" + line + "╮"), bottom: bs.Render("╰" + line + "╯"),
		left: bs.Render("│") + " ", right: " " + bs.Render("│"),
		label: fit(styleBold.Render(pn.a.Label)+" "+pn.a.ID, inner),
		model: fit(styleDim.Render(paneModel(pn.a)), inner),
		hr:    styleDim.Render(strings.Repeat("─", inner)),
	}
	if pn.persona != "" {
		ch.persona = fit(styleFaint.Render("persona: "+pn.persona), inner)
	}
	return ch
}

// paneView is a rendered pane: its frame and the lines inside it, each exactly as wide as the
// inside. Rows are written straight into the frame, without joining strings per pane.
type paneView struct {
	ch *chrome
	in []string
}

// appendRow appends the parts of row r: the top border, a line inside, or the bottom border.
func (pv paneView) appendRow(parts []string, r int) []string {
	switch {
	case r == 0:
		return append(parts, pv.ch.top)
	case r > len(pv.in):
		return append(parts, pv.ch.bottom)
	}
	return append(parts, pv.ch.left, pv.in[r-1], pv.ch.right)
}

func (pv paneView) row(f *frame, r int) {
	var buf [3]string
	f.line(pv.appendRow(buf[:0], r)...)
}

// column renders pn's agent as a bordered pane of h lines of w cells: label, id and model,
// its persona (cut to one line), status badge, its newest streamed text, its last tool calls
// and its last tool activity.
func (m *Model) column(pn *pane, w, h int, focused bool) paneView {
	b := m.badge(pn)
	ch := pn.chrome(w, b.color, focused)
	inner := max(w-4, 1)
	rows := max(h-2, 0)
	full := rows >= 7 // room for the model line and the rule
	in := make([]string, 0, rows+4)
	in = append(in, ch.label)
	if full {
		in = append(in, ch.model)
	}
	if ch.persona != "" && rows >= 8 {
		in = append(in, ch.persona)
	}
	in = append(in, fit(lipgloss.NewStyle().Foreground(b.color).Render(b.glyph+" "+b.text), inner))
	if full {
		in = append(in, ch.hr)
	}
	if room := min(3, rows-len(in)-2); room > 0 {
		in = append(in, subagentRows(pn.a, inner, room)...)
	}
	if len(pn.a.Plan) > 0 && rows-len(in) > 3 {
		in = append(in, fit(styleDim.Render(clip("☰ plan "+view.PlanText(pn.a.Progress()), inner)), inner))
	}
	k := callRows(pn, rows-len(in)-1)
	if n := rows - len(in) - 1 - k; n > 0 {
		in = append(in, m.bodyLines(pn, inner, n)...)
	}
	blank := strings.Repeat(" ", inner)
	for len(in) < rows-1-k {
		in = append(in, blank)
	}
	for _, c := range pn.calls[len(pn.calls)-k:] {
		in = append(in, fit(c.line(inner), inner))
	}
	act := blank
	if pn.activity != "" {
		st := styleDim
		if pn.bad {
			st = styleWarn
		}
		text := "↳ " + pn.activity
		if pn.short != "" && width(text) > inner {
			text = "↳ " + pn.short
		}
		act = fit(st.Render(clip(text, inner)), inner)
	}
	return paneView{ch, append(in, act)[:rows]}
}

// bodyLines returns the last n lines of pn's text wrapped and padded to w cells, styled:
// reasoning faint, answer text plain. Until the agent streams something in a turn, it shows
// its latest answer, so a column does not go blank while its agent thinks. The result is
// cached until the agent changes.
func (m *Model) bodyLines(pn *pane, w, n int) []string {
	c := &pn.body
	if c.ver == pn.ver && c.w == w && c.n == n && c.lines != nil {
		return c.lines
	}
	a := pn.a
	var lines []string
	switch {
	case a.Presentation != "":
		lines = padAll(tailLines(a.Presentation, w, n), w, nil)
	case a.Stream() != "" || a.Reasoning() != "":
		lines = padAll(tailLines(a.Stream(), w, n), w, nil)
		if k := n - len(lines); k > 0 && a.Reasoning() != "" {
			lines = append(padAll(tailLines(a.Reasoning(), w, k), w, &styleFaint), lines...)
		}
	case len(a.Answers) > 0:
		ans := a.LatestAnswer()
		title := ans.Label + ":"
		if a.Status == readmodel.StatusStreaming {
			title = ans.Label + " (latest):"
		}
		lines = append([]string{fit(styleDim.Render(title), w)}, padAll(tailLines(ans.Content, w, n-1), w, nil)...)
	}
	if lines == nil {
		lines = []string{}
	}
	*c = bodyCache{ver: pn.ver, w: w, n: n, lines: lines}
	return lines
}

// padAll pads wrapped lines to w cells, then styles them with st if not nil.
func padAll(lines []string, w int, st *lipgloss.Style) []string {
	for i, l := range lines {
		l = pad(l, w)
		if st != nil {
			l = st.Render(l)
		}
		lines[i] = l
	}
	return lines
}

// tabBar renders one line of agent tabs around the focused one, each with its badge glyph.
func (m *Model) tabBar(w int) string {
	n := len(m.panes)
	if n == 0 {
		return ""
	}
	widths := make([]int, n)
	for i, pn := range m.panes {
		widths[i] = len(pn.a.Label) + 4 // " g label "
	}
	lo, hi := m.focus, m.focus+1
	used, room := widths[m.focus], w-10 // room for the "‹12 " and " 34›" markers
	for {
		grew := false
		if hi < n && used+widths[hi] <= room {
			used += widths[hi]
			hi++
			grew = true
		}
		if lo > 0 && used+widths[lo-1] <= room {
			lo--
			used += widths[lo]
			grew = true
		}
		if !grew {
			break
		}
	}
	var sb strings.Builder
	if lo > 0 {
		sb.WriteString(styleDim.Render(fmt.Sprintf("‹%d ", lo)))
	}
	for i := lo; i < hi; i++ {
		b := m.badge(m.panes[i])
		st := lipgloss.NewStyle().Foreground(b.color)
		if i == m.focus {
			st = st.Reverse(true).Bold(true)
		}
		sb.WriteString(st.Render(" " + b.glyph + " " + m.panes[i].a.Label + " "))
	}
	if hi < n {
		sb.WriteString(styleDim.Render(fmt.Sprintf(" %d›", n-hi)))
	}
	return fit(sb.String(), w)
}

// paneModel is a pane's second line: the backend, the model and, on the first screen before
// any request, where the requests go.
func paneModel(a *readmodel.Agent) string {
	s := strings.TrimSpace(a.Backend + " " + a.Model)
	if a.BaseURL != "" {
		s += " → " + a.BaseURL
	}
	return s
}

// subagentRows are a column's lines for the last n subagents its agent started: id, status
// and the log folder that holds the subagent's whole session (massgen replay opens it).
func subagentRows(a *readmodel.Agent, w, n int) []string {
	subs := a.Subagents
	if len(subs) > n {
		subs = subs[len(subs)-n:]
	}
	out := make([]string, 0, len(subs))
	for _, s := range subs {
		st := styleDim
		switch s.Status {
		case readmodel.SubagentRunning, "completed", "completed_but_timeout":
		default:
			st = styleWarn
		}
		line := "⤷ subagent " + s.ID + ": " + s.Status
		if s.LogDir != "" {
			line += " · " + s.LogDir
		}
		out = append(out, fit(st.Render(clip(line, w)), w))
	}
	return out
}
