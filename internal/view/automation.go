package view

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/readmodel"
	"massgen/internal/termtext"
)

// Automation prints MassGen's automation lines (reference/features.md 2.6): a few stable,
// parseable lines for scripts and other agents, no ANSI, no streamed text.
type Automation struct {
	w io.Writer
	// st is the session so far: the agents, the final answer and the usage.
	st *readmodel.State
}

// NewAutomation returns an Automation view writing to w. What it writes is cleaned of terminal
// control (termtext.Clean), and every model-written value is folded onto its line, so an answer
// cannot forge a WINNER: line either.
func NewAutomation(w io.Writer) *Automation {
	return &Automation{w: termtext.NewWriter(w), st: readmodel.NewState()}
}

// Handle implements event.Sink.
func (a *Automation) Handle(e event.Event) {
	a.st.Apply(e)
	switch v := e.Payload.(type) {
	case event.SessionStarted:
		if v.LogDir != "" {
			// MassGen's LOG_DIR is the session folder (log_<ts>), which holds every turn;
			// STATUS and ANSWER_FILE are in this turn's folder.
			fmt.Fprintf(a.w, "LOG_DIR: %s\n", filepath.Dir(v.LogDir))
			fmt.Fprintf(a.w, "STATUS: %s\n", filepath.Join(v.LogDir, "status.json"))
		}
		fmt.Fprintf(a.w, "QUESTION: %s\n", oneLine(v.Question, 500))
		if w := BudgetWarning(v); w != "" {
			fmt.Fprintf(a.w, "WARNING: %s\n", w)
		}
		for _, w := range EndpointWarnings(v) {
			fmt.Fprintf(a.w, "WARNING: %s\n", oneLine(w, 500))
		}
		fmt.Fprintln(a.w, "[Coordination in progress - monitor status.json for real-time updates]")
	case event.AgentDead:
		fmt.Fprintf(a.w, "AGENT_DEAD: %s: %s\n", v.Agent, oneLine(v.Reason, 200))
	case event.OrchestrationRestarted:
		// MassGen's line; REASON is ours, folded onto one line like every model-written value.
		fmt.Fprintf(a.w, "RESTART: Attempt %d/%d\n", v.Attempt, v.MaxAttempts)
		fmt.Fprintf(a.w, "RESTART_REASON: %s\n", oneLine(v.Reason, 500))
	case event.SessionEnded:
		// The winner line names the agent that wrote the final answer (the presenter).
		f := a.st.Final
		if f != nil && f.Agent == "" {
			f = nil
		}
		if f != nil {
			fmt.Fprintf(a.w, "WINNER: %s\n", f.Agent)
			if a.st.LogDir != "" {
				fmt.Fprintf(a.w, "ANSWER_FILE: %s\n", filepath.Join(a.st.LogDir, "final", f.Agent, "answer.txt"))
			}
		}
		fmt.Fprintf(a.w, "DURATION: %.1fs\n", v.DurationSeconds)
		if f != nil {
			fmt.Fprintf(a.w, "ANSWER_PREVIEW: %s\n", strings.TrimSpace(preview(f.Content, 200)+" "+f.Truncated))
		}
		if v.Status != event.StatusCompleted {
			fmt.Fprintln(a.w, ErrorLine(v.Status, v.ExitCode, v.Error))
		}
		if t := a.st.Totals; t.Usage != (provider.Usage{}) {
			fmt.Fprintf(a.w, "USAGE: %s\n", UsageLine(t.Usage, t.CostUSD, a.st.UnpricedModels()...))
		}
		fmt.Fprintf(a.w, "COMPLETED: %s, %.1fs total\n", agentCount(len(a.st.Agents)), v.DurationSeconds)
	}
}

// ErrorLine is the automation line of a run that ended in error, folded onto one line:
// "ERROR: failed (exit 2): every agent failed: ...". status is the session's status, or what
// stopped a run before its session started ("configuration error").
func ErrorLine(status string, exitCode int, msg string) string {
	return fmt.Sprintf("ERROR: %s (exit %d): %s", status, exitCode, oneLine(msg, 1000))
}

// preview folds whitespace onto one line and cuts to n runes, marking the cut with [...].
func preview(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > n {
		return string(r[:n]) + "[...]"
	}
	return string(r)
}

// agentCount is "1 agent" or "N agents".
func agentCount(n int) string {
	if n == 1 {
		return "1 agent"
	}
	return fmt.Sprintf("%d agents", n)
}
