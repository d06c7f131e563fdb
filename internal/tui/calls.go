package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"massgen/internal/event"
)

const (
	// maxCalls is how many tool calls a pane remembers: the agent screen lists them all, a
	// column its last columnCalls.
	maxCalls    = 12
	columnCalls = 3
	// argsPeek is how much of a call's arguments is read for its summary: a file write's
	// arguments can be megabytes, and one line shows a few dozen cells of them.
	argsPeek = 4096
)

// callState is where a tool call stands.
type callState int

const (
	callRunning callState = iota
	callOK
	callFailed
	callRefused
	callCut  // the end of coordination or of the session cut it off
	callLost // the agent's turn went on without its result
)

// toolCall is one non-workflow tool call as a pane shows it.
type toolCall struct {
	id, name string
	args     string // a one-line summary of the arguments (shortArgs), already bounded
	state    callState
	ms       float64
}

// workflowCall reports whether name is new_answer or vote, which the pane shows as its
// answers and votes, not as tool calls.
func workflowCall(name string) bool { return name == "new_answer" || name == "vote" }

// callEvent folds e into the panes' tool calls.
func (m *Model) callEvent(e event.Event) {
	switch p := e.Payload.(type) {
	case event.ToolCalled:
		if pn := m.pane(p.Agent); pn != nil && !workflowCall(p.Call.Name) {
			pn.addCall(toolCall{id: p.Call.ID, name: oneLine(p.Call.Name, 80), args: shortArgs(p.Call.Arguments, 120)})
		}
	case event.ToolResult:
		pn := m.pane(p.Agent)
		if pn == nil {
			return
		}
		c := pn.call(p.CallID)
		if c == nil { // a result without its call (a hosted tool's, or a cut log)
			name := oneLine(p.Tool, 80)
			if p.FromCode {
				name += " (from code)"
			}
			pn.addCall(toolCall{id: p.CallID, name: name})
			c = &pn.calls[len(pn.calls)-1]
		}
		c.state, c.ms = callOK, p.DurationMS
		if p.IsError {
			c.state = callFailed
		}
		pn.ver++
	case event.ToolRejected:
		if pn := m.pane(p.Agent); pn != nil {
			if c := pn.call(p.CallID); c != nil && c.state == callRunning {
				c.state = callRefused
				pn.ver++
			}
		}
	case event.TurnStarted:
		m.endCalls(p.Agent, callLost)
	case event.ModelCalled:
		m.endCalls(p.Agent, callLost)
	case event.AgentError:
		m.endCalls(p.Agent, callLost)
	case event.AgentDead:
		m.endCalls(p.Agent, callLost)
	case event.CoordinationEnded, event.SessionEnded:
		for _, pn := range m.panes {
			m.endCalls(pn.a.ID, callCut)
			m.cutWriting(pn)
		}
	}
}

// endCalls gives agent id's running calls state st: a new model call starts after the last
// response's tools have all run, and the end of the session cuts off what still runs
// (readmodel's CutOff says the same).
func (m *Model) endCalls(id string, st callState) {
	pn := m.pane(id)
	if pn == nil {
		return
	}
	for i := range pn.calls {
		if pn.calls[i].state == callRunning {
			pn.calls[i].state = st
			pn.ver++
		}
	}
}

// cutWriting replaces "writing new_answer… (16 B)" with what became of it, once the end has
// cut the call off.
func (m *Model) cutWriting(pn *pane) {
	for _, c := range pn.a.CutOff[pn.cutSeen:] {
		if c.Writing {
			tool := oneLine(c.Tool, 60)
			pn.activity, pn.short, pn.bad = "cut off while writing "+tool, tool+" cut off", true
			pn.ver++
		}
	}
	pn.cutSeen = len(pn.a.CutOff)
}

func (pn *pane) addCall(c toolCall) {
	if len(pn.calls) == maxCalls {
		pn.calls = append(pn.calls[:0], pn.calls[1:]...)
	}
	pn.calls = append(pn.calls, c)
	pn.ver++
}

// call returns pn's call id, or nil.
func (pn *pane) call(id string) *toolCall {
	for i := len(pn.calls) - 1; i >= 0; i-- {
		if pn.calls[i].id == id && id != "" {
			return &pn.calls[i]
		}
	}
	return nil
}

// line draws c in at most w cells: a glyph, the tool, its arguments in parentheses (cut
// first), and how it went: "✓ echo(text: "hi") 12ms", "✗ read(path: "x") error 3ms".
func (c toolCall) line(w int) string {
	glyph, st := "✓", lipgloss.NewStyle().Foreground(colorGood)
	outcome := callDuration(c.ms)
	switch c.state {
	case callRunning:
		glyph, st, outcome = "…", styleDim, "running"
	case callFailed:
		glyph, st, outcome = "✗", styleBad, "error "+outcome
	case callRefused:
		glyph, st, outcome = "✗", styleBad, "refused"
	case callCut:
		glyph, st, outcome = "⨯", styleWarn, "cut off"
	case callLost:
		glyph, st, outcome = "⨯", styleWarn, "no result"
	}
	name := c.name
	fixed := func() int { return ansi.StringWidth(glyph + " " + name + " " + outcome) }
	if fixed() > w {
		name = shortToolName(name)
	}
	args := ""
	if room := w - fixed() - 2; room >= 4 && c.args != "" {
		args = "(" + clip(c.args, room) + ")"
	}
	return st.Render(glyph) + " " + clip(name+args+" "+outcome, w-2)
}

// callDuration formats a tool's duration: 12ms, 1.2s, 2m05s.
func callDuration(ms float64) string {
	if ms < 1000 {
		return fmt.Sprintf("%.0fms", ms)
	}
	return elapsed(time.Duration(ms * float64(time.Millisecond)))
}

// shortToolName drops an MCP tool's mcp__<server>__ prefix: "echo" for
// mcp__everything__echo.
func shortToolName(name string) string {
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if _, tool, ok := strings.Cut(rest, "__"); ok && tool != "" {
			return tool
		}
	}
	return name
}

// shortArgs summarises a call's JSON arguments on one line of at most max cells: the top
// level's keys and scalar values in order (text: "hi", n: 3), nested values as {…} and […].
// Arguments that are not a JSON object are shown as they are.
func shortArgs(args string, max int) string {
	peek := args[:min(len(args), argsPeek)]
	dec := json.NewDecoder(strings.NewReader(peek))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return oneLine(peek, max)
	}
	var parts []string
	width := 0
	for dec.More() && width < max {
		k, err := dec.Token()
		if err != nil {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			parts = append(parts, fmt.Sprint(k)+": …")
			break
		}
		part := fmt.Sprint(k) + ": " + scalar(v)
		parts = append(parts, part)
		width += len(part) + 2
	}
	return oneLine(strings.Join(parts, ", "), max)
}

// scalar is a JSON value as one short token: strings quoted and cut, objects and arrays
// elided.
func scalar(v json.RawMessage) string {
	switch {
	case len(v) == 0:
		return ""
	case v[0] == '{':
		return "{…}"
	case v[0] == '[':
		return "[…]"
	case v[0] == '"':
		var s string
		if json.Unmarshal(v, &s) == nil {
			return `"` + oneLine(s, 40) + `"`
		}
	}
	return oneLine(string(v), 40)
}

// callRows is how many of pn's calls a column of rows rows shows: its last columnCalls, fewer
// when the column is short, so at least three lines of text stay.
func callRows(pn *pane, free int) int {
	return max(0, min(len(pn.calls), columnCalls, free-3))
}
