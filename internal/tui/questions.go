package tui

import (
	"fmt"
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"massgen/internal/permission"
	"massgen/internal/termtext"
)

// The agents' questions to the person (broadcast: human): while one waits and no permission
// ask does, the footer shows it; a starts typing the answer in the footer, enter sends it,
// esc stops typing, s skips the question. The session's broadcast_done ends it otherwise
// (broadcast_timeout, the session's end).

// questionKey handles a key while a question waits; it reports whether the key was taken.
func (m *Model) questionKey(k tea.KeyPressMsg) bool {
	q := m.waitingQuestion()
	if q == "" {
		m.typing, m.typed = false, ""
		return false
	}
	s := k.String()
	if !m.typing {
		switch s {
		case "a":
			m.typing, m.typed = true, ""
		case "s":
			m.sendReply(q, "")
		default:
			return false
		}
		return true
	}
	switch s {
	case "enter":
		m.sendReply(q, m.typed)
	case "esc":
		m.typing = false
	case "backspace":
		if _, n := utf8.DecodeLastRuneInString(m.typed); n > 0 {
			m.typed = m.typed[:len(m.typed)-n]
		}
	case "ctrl+c":
		return false
	default:
		if t := k.Text; t != "" && len(m.typed)+len(t) <= permission.MaxReply {
			m.typed += termtext.Clean(t)
		}
	}
	return true
}

// waitingQuestion is the id of the oldest question waiting for the person, when the footer
// may show it: the view can answer, no permission ask comes first, and the session runs.
func (m *Model) waitingQuestion() string {
	if m.reply == nil || len(m.asks) > 0 || m.ended() {
		return ""
	}
	if qs := m.st.WaitingForPerson(); len(qs) > 0 {
		return qs[0].ID
	}
	return ""
}

func (m *Model) sendReply(id, text string) {
	m.typing, m.typed = false, ""
	if err := m.reply(id, strings.TrimSpace(text)); err != nil {
		m.notice(fmt.Sprintf("question %s: %v", id, err)) // it ended meanwhile
	}
}

// questionLine is the footer's key line while a question waits, "" otherwise.
func (m *Model) questionLine() string {
	id := m.waitingQuestion()
	if id == "" {
		return ""
	}
	q := m.st.QuestionByID(id)
	who := q.Agent
	if a := m.st.Agent(q.Agent); a != nil {
		who = a.Label
	}
	if m.typing {
		return styleWarn.Render(fmt.Sprintf("answer %s: %s█ · enter send · esc stop typing", who, m.typed))
	}
	more := ""
	if n := len(m.st.WaitingForPerson()) - 1; n > 0 {
		more = fmt.Sprintf(" · %d more waiting", n)
	}
	text := strings.Join(strings.Fields(termtext.Clean(q.Text)), " ")
	return styleWarn.Render(fmt.Sprintf("%s asks you: %s · a answer · s skip%s", who, text, more))
}
