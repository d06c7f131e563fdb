package tui

import (
	"fmt"

	"massgen/internal/event"
)

// The permission engine's asks (permissions:): the oldest waiting one takes the footer's key
// line until y or n answers it, or the session decides it otherwise (timeout,
// automation_default), which its PermissionDecided says.

// permissionEvent tracks the asks waiting for an answer.
func (m *Model) permissionEvent(e event.Event) {
	switch p := e.Payload.(type) {
	case event.PermissionAsked:
		m.asks = append(m.asks, p)
	case event.PermissionDecided:
		for i, a := range m.asks {
			if a.ID == p.ID {
				m.asks = append(m.asks[:i:i], m.asks[i+1:]...)
				break
			}
		}
	}
}

// answerKey answers the oldest waiting ask with y (allow) or n (deny); it reports whether the
// key was taken.
func (m *Model) answerKey(s string) bool {
	if m.answer == nil || len(m.asks) == 0 || m.ended() || (s != "y" && s != "n") {
		return false
	}
	decision := map[string]string{"y": "allow", "n": "deny"}[s]
	ask := m.asks[0]
	m.asks = m.asks[1:]
	if err := m.answer(ask.ID, decision); err != nil {
		// Decided meanwhile (timed out): its PermissionDecided says how.
		m.notice(fmt.Sprintf("permission %s: %v", ask.ID, err))
	}
	return true
}

// askLine is the footer's key line while an ask waits, "" otherwise.
func (m *Model) askLine() string {
	if m.answer == nil || len(m.asks) == 0 || m.ended() {
		return ""
	}
	a := m.asks[0]
	why := a.Risk + " risk"
	if a.Rule != "" {
		why = "rule " + a.Rule
	}
	more := ""
	if n := len(m.asks) - 1; n > 0 {
		more = fmt.Sprintf(" · %d more waiting", n)
	}
	return styleWarn.Render(fmt.Sprintf("permission: %s wants %s %q (%s) · y allow · n deny%s", a.Agent, a.Action, a.Target, why, more))
}
