package runlog

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"massgen/internal/event"
	"massgen/internal/readmodel"
)

// Table layout, in runes.
const (
	cellWidth     = 28  // content width of an agent column
	cellPreview   = 120 // answers, reasons and errors are cut to this before wrapping
	questionLimit = 600
)

// Table builds coordination_table.txt from the event stream, in the spirit of MassGen's
// (protocol.md 9.2): a USER row with the question, one column per agent, one row group per
// significant event, a legend and a per-agent summary. It depends on the events alone, so a
// replayed log gives the same table. A Table is an event.Sink; it is not safe for concurrent
// use.
type Table struct {
	state *readmodel.State
	rows  []tableRow
}

// tableRow is one row group: cells by agent index, or one text spanning every agent column.
type tableRow struct {
	cells map[int]string
	span  string
}

// NewTable returns an empty table with a state of its own.
func NewTable() *Table { return NewTableOn(readmodel.NewState()) }

// NewTableOn returns a table that keeps s: Handle applies every event to s, deltas included,
// so a caller that needs the state too folds each event once, through the table.
func NewTableOn(s *readmodel.State) *Table { return &Table{state: s} }

// FormatTable returns the coordination table of a whole event stream.
func FormatTable(events []event.Event) string {
	t := NewTable()
	for _, e := range events {
		t.Handle(e)
	}
	return t.String()
}

// Handle applies e to the table's state and adds the row group e calls for, if any (deltas
// add none).
func (t *Table) Handle(e event.Event) {
	s := t.state
	switch e.Payload.(type) {
	case event.TextDelta, event.ReasoningDelta, event.ToolCallStreaming:
		s.Apply(e)
		return
	}
	// Rows that need the state before e (labels, the vote a new answer invalidates).
	var row tableRow
	switch p := e.Payload.(type) {
	case event.AnswerSubmitted:
		row = t.cells(p.Agent, fmt.Sprintf("answer %s (v%d): %s", p.Label, p.Version, preview(flatten(p.Content), cellPreview)))
		for _, a := range s.Agents {
			if a.Vote != nil && a.ID != p.Agent && (a.Vote.Version < p.Version || slices.Contains(p.Invalidated, a.ID)) {
				t.add(row.cells, a.ID, "restart: vote for "+a.Vote.AnswerLabel+" invalidated by "+p.Label)
			}
		}
	}
	s.Apply(e)
	switch p := e.Payload.(type) {
	case event.TurnStarted:
		seen := "no answers yet"
		if len(p.Available) > 0 {
			seen = "can vote for " + strings.Join(p.Available, ", ")
		}
		how := "context"
		if !p.Fresh {
			how = "context (continued)"
		}
		row = t.cells(p.Agent, fmt.Sprintf("%s v%d: %s", how, p.Version, seen))
	case event.VoteCast:
		row = t.cells(p.Agent, fmt.Sprintf("vote %s (v%d): %s", p.AnswerLabel, p.Version, preview(flatten(p.Reason), cellPreview)))
	case event.VoteIgnored:
		row = t.cells(p.Agent, fmt.Sprintf("vote for %s ignored: saw v%d, now v%d; continues", p.TargetLabel, p.SeenVersion, p.CurrentVersion))
	case event.ToolRejected:
		row = t.cells(p.Agent, fmt.Sprintf("rejected %s: %s", p.Tool, preview(flatten(p.Error), cellPreview)))
	case event.EnforcementSent:
		row = t.cells(p.Agent, "told to use new_answer or vote")
	case event.AgentError:
		kind := "error"
		if p.Timeout {
			kind = "timeout"
		}
		text := fmt.Sprintf("%s (%d/%d): %s", kind, p.Consecutive, p.Budget, preview(flatten(p.Message), cellPreview))
		if p.Fatal {
			text = "fatal error: " + preview(flatten(p.Message), cellPreview)
		}
		row = t.cells(p.Agent, text)
	case event.AgentDead:
		row = t.cells(p.Agent, "DEAD: "+preview(flatten(p.Reason), cellPreview))
	case event.CoordinationEnded:
		row = tableRow{span: t.ended(p)}
	case event.FinalStarted:
		row = t.cells(p.Agent, "final presentation ("+p.Mode+")")
	case event.FinalAnswer:
		text := fmt.Sprintf("final answer %s: %s", p.Label, preview(flatten(p.Content), cellPreview))
		if p.Fallback {
			text += " (fallback: stored answer)"
		}
		row = t.cells(p.Agent, text)
	case event.SessionEnded:
		text := fmt.Sprintf("session %s, exit code %d, %.1f s", p.Status, p.ExitCode, p.DurationSeconds)
		if p.Error != "" {
			text += ": " + preview(flatten(p.Error), cellPreview)
		}
		row = tableRow{span: text}
	}
	if row.span != "" || len(row.cells) > 0 {
		t.rows = append(t.rows, row)
	}
}

func (t *Table) ended(p event.CoordinationEnded) string {
	text := "coordination ended (" + p.Reason + "): "
	if p.Winner == "" {
		text += "no answer, no winner"
	} else {
		text += fmt.Sprintf("winner %s (%s) with %s", p.WinnerLabel, p.Winner, p.AnswerLabel)
		if p.Tie {
			text += ", tie broken by config order"
		}
	}
	var votes []string
	for _, c := range p.Tally {
		votes = append(votes, fmt.Sprintf("%s: %d", c.Label, c.Votes))
	}
	if len(votes) > 0 {
		text += "; votes: " + strings.Join(votes, ", ")
	}
	return text
}

// cells starts a row group with text in agent id's column; unknown agents give no row.
func (t *Table) cells(id, text string) tableRow {
	row := tableRow{cells: map[int]string{}}
	t.add(row.cells, id, text)
	return row
}

func (t *Table) add(cells map[int]string, id, text string) {
	for i, a := range t.state.Agents {
		if a.ID == id {
			cells[i] = text
		}
	}
}

// maxGridAgents is the widest team drawn as a grid; larger teams get one line per cell, since
// a grid of dozens of columns can be neither read nor cheaply built.
const maxGridAgents = 6

// String renders the table. Before SessionStarted it is empty.
func (t *Table) String() string {
	s := t.state
	if len(s.Agents) == 0 {
		return ""
	}
	if len(s.Agents) > maxGridAgents {
		return t.list()
	}
	g := &grid{idW: max(len("Restarts"), len(fmt.Sprint("E", len(t.rows)))), n: len(s.Agents)}
	headers := make([]string, len(s.Agents))
	for i, a := range s.Agents {
		headers[i] = fmt.Sprintf("%s (%s)", a.Label, a.ID)
	}
	full := g.idW + 3 + g.spanWidth()
	g.b.WriteString("+" + strings.Repeat("-", full+2) + "+\n")
	for _, l := range wrap("USER: "+preview(flatten(s.Question), questionLimit), full) {
		g.b.WriteString("| " + pad(l, full) + " |\n")
	}
	g.line('-')
	g.row("Event", headers)
	g.line('=')
	for k, r := range t.rows {
		id := fmt.Sprint("E", k+1)
		if r.span != "" {
			g.span(id, r.span)
		} else {
			cols := make([]string, g.n)
			for i, c := range r.cells {
				cols[i] = c
			}
			g.row(id, cols)
		}
		g.line('-')
	}
	g.b.WriteString("\n" + legend + "\n\nSummary:\n")
	g.line('-')
	g.row("", headers)
	g.line('=')
	for _, r := range []struct {
		name string
		f    func(*readmodel.Agent) string
	}{
		{"Answers", func(a *readmodel.Agent) string { return fmt.Sprint(len(a.Answers)) }},
		{"Votes", func(a *readmodel.Agent) string { return fmt.Sprint(a.VotesCast) }},
		{"Ignored", func(a *readmodel.Agent) string { return fmt.Sprint(a.VotesIgnored) }},
		{"Restarts", func(a *readmodel.Agent) string { return fmt.Sprint(a.Restarts) }},
		{"Errors", func(a *readmodel.Agent) string { return fmt.Sprint(a.Errors) }},
		{"Status", func(a *readmodel.Agent) string { return string(a.Status) }},
	} {
		cols := make([]string, g.n)
		for i, a := range s.Agents {
			cols[i] = r.f(a)
		}
		g.row(r.name, cols)
	}
	g.line('-')
	g.b.WriteString(t.totals() + "\n")
	return g.b.String()
}

// list renders the table as one line per event and agent, for teams too large for a grid.
func (t *Table) list() string {
	s := t.state
	var b strings.Builder
	b.WriteString("USER: " + preview(flatten(s.Question), questionLimit) + "\n\n")
	names := make([]string, len(s.Agents))
	w := 0
	for i, a := range s.Agents {
		names[i] = fmt.Sprintf("%s (%s)", a.Label, a.ID)
		w = max(w, len([]rune(names[i])))
	}
	idW := len(fmt.Sprint("E", len(t.rows)))
	for k, r := range t.rows {
		id := pad(fmt.Sprint("E", k+1), idW)
		if r.span != "" {
			fmt.Fprintf(&b, "%s  %s\n", id, flatten(r.span))
			continue
		}
		for i, name := range names {
			if c, ok := r.cells[i]; ok {
				fmt.Fprintf(&b, "%s  %s  %s\n", id, pad(name, w), flatten(c))
				id = pad("", idW)
			}
		}
	}
	b.WriteString("\n" + legend + "\n\nSummary:\n")
	for i, a := range s.Agents {
		fmt.Fprintf(&b, "  %s  answers %d, votes %d, ignored %d, restarts %d, errors %d, status %s\n",
			pad(names[i], w), len(a.Answers), a.VotesCast, a.VotesIgnored, a.Restarts, a.Errors, a.Status)
	}
	b.WriteString(t.totals() + "\n")
	return b.String()
}

const legend = `Legend:
  context    the agent starts a turn: vN is the answer-set version it sees, then what it may
             vote for; "continued" keeps its conversation and adds the new answers
  answer     an accepted answer: its label agent<i>.<k>, the version it starts, a preview
  restart    a new answer invalidated this agent's vote; it will evaluate again
  vote       an accepted vote for an answer, on the version the voter saw, with its reason
  ignored    a vote cast on an old answer set: it never counted and the agent continues
  rejected   an invalid workflow tool call, sent back to the model with the error
  error      a failed turn (n/budget consecutive failures); DEAD: left out for good
  final      the winner's final presentation and answer agent<i>.final`

func (t *Table) totals() string {
	s := t.state
	restarts := 0
	for _, a := range s.Agents {
		restarts += a.Restarts
	}
	text := fmt.Sprintf("Totals: %d answers, %d votes (%d invalidated, %d ignored), %d restarts, %d errors",
		s.Totals.Answers, s.Totals.Votes, s.Totals.Invalidations, s.Totals.IgnoredVotes, restarts, s.Totals.Errors)
	if s.Winner != "" {
		text += fmt.Sprintf("; winner %s (%s)", s.WinnerLabel, s.Winner)
	}
	if s.Final != nil {
		text += "; final answer " + s.Final.Label
	}
	return text
}

// grid writes fixed-width rows: an id column of idW runes, then n agent columns.
type grid struct {
	b   strings.Builder
	idW int
	n   int
}

// spanWidth is the width of a cell spanning every agent column.
func (g *grid) spanWidth() int { return g.n*cellWidth + 3*(g.n-1) }

func (g *grid) line(fill byte) {
	g.b.WriteString("+" + strings.Repeat(string(fill), g.idW+2))
	for range g.n {
		g.b.WriteString("+" + strings.Repeat(string(fill), cellWidth+2))
	}
	g.b.WriteString("+\n")
}

// row writes one row group, each column wrapped to its width.
func (g *grid) row(id string, cols []string) {
	wrapped := make([][]string, g.n)
	height := 1
	for i, c := range cols {
		wrapped[i] = wrap(c, cellWidth)
		height = max(height, len(wrapped[i]))
	}
	for l := range height {
		g.b.WriteString("| " + pad(pick([]string{id}, l), g.idW) + " ")
		for i := range g.n {
			g.b.WriteString("| " + pad(pick(wrapped[i], l), cellWidth) + " ")
		}
		g.b.WriteString("|\n")
	}
}

// span writes one row group whose text spans every agent column.
func (g *grid) span(id, text string) {
	w := g.spanWidth()
	for l, line := range wrap(text, w) {
		g.b.WriteString("| " + pad(pick([]string{id}, l), g.idW) + " | " + pad(line, w) + " |\n")
	}
}

func pick(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// pad right-pads s with spaces to w runes.
func pad(s string, w int) string {
	if n := len([]rune(s)); n < w {
		return s + strings.Repeat(" ", w-n)
	}
	return s
}

// flatten puts text on one line: control characters become spaces, runs of spaces one space.
func flatten(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
}

// wrap splits flattened text into lines of at most w runes, breaking at spaces and cutting
// words longer than a line. Empty text gives no lines.
func wrap(s string, w int) []string {
	var lines []string
	var cur []rune
	for _, word := range strings.Fields(flatten(s)) {
		r := []rune(word)
		if len(cur) > 0 && len(cur)+1+len(r) <= w {
			cur = append(append(cur, ' '), r...)
			continue
		}
		if len(cur) > 0 {
			lines = append(lines, string(cur))
			cur = nil
		}
		for len(r) > w {
			lines = append(lines, string(r[:w]))
			r = r[w:]
		}
		cur = r
	}
	if len(cur) > 0 {
		lines = append(lines, string(cur))
	}
	return lines
}
