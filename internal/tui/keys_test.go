package tui

import (
	"strings"
	"testing"

	"massgen/internal/event"
)

func TestKeys(t *testing.T) {
	type want struct {
		screen    screen
		help      bool
		focus     int
		cancelled bool
		quit      bool
	}
	cases := []struct {
		name  string
		ended bool
		keys  []string
		want  want
	}{
		{"digit opens agent", false, []string{"2"}, want{screen: screenAgent, focus: 1}},
		{"same digit returns", false, []string{"2", "2"}, want{screen: screenMain, focus: 1}},
		{"other digit switches", false, []string{"2", "3"}, want{screen: screenAgent, focus: 2}},
		{"esc returns", false, []string{"1", "esc"}, want{screen: screenMain}},
		{"digit beyond the agents", false, []string{"9"}, want{screen: screenMain}},
		{"tab moves focus", false, []string{"tab"}, want{focus: 1}},
		{"shift+tab wraps", false, []string{"shift+tab"}, want{focus: 2}},
		{"tab in agent screen", false, []string{"1", "tab"}, want{screen: screenAgent, focus: 1}},
		{"enter opens focused", false, []string{"tab", "enter"}, want{screen: screenAgent, focus: 1}},
		{"t opens table", false, []string{"t"}, want{screen: screenTable}},
		{"t toggles table", false, []string{"t", "t"}, want{screen: screenMain}},
		{"esc closes table", false, []string{"t", "esc"}, want{screen: screenMain}},
		{"? opens help", false, []string{"?"}, want{help: true}},
		{"? toggles help", false, []string{"?", "?"}, want{}},
		{"esc closes help first", false, []string{"t", "?", "esc"}, want{screen: screenTable}},
		{"a key closes help", false, []string{"?", "t"}, want{screen: screenTable}},
		{"q before the end cancels", false, []string{"q"}, want{cancelled: true}},
		{"ctrl+c before the end cancels", false, []string{"ctrl+c"}, want{cancelled: true}},
		{"q twice quits now", false, []string{"q", "ctrl+c"}, want{cancelled: true, quit: true}},
		{"q after the end quits", true, []string{"q"}, want{quit: true}},
		{"ctrl+c after the end quits", true, []string{"ctrl+c"}, want{quit: true}},
		{"q in help after the end quits", true, []string{"?", "q"}, want{help: true, quit: true}},
		{"digit after the end", true, []string{"3"}, want{screen: screenAgent, focus: 2}},
		{"scroll keys on the final screen", true, []string{"down", "pgdown", "up", "j", "k"}, want{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			evs := midSession().events
			if c.ended {
				evs = session().events
			}
			m := newModel(80, 24, evs)
			cmd := press(m, c.keys...)
			got := want{m.screen, m.help, m.focus, m.Cancelled(), isQuit(cmd)}
			if got != c.want {
				t.Errorf("after %v: got %+v, want %+v", c.keys, got, c.want)
			}
			select {
			case <-m.CancelRequested():
				if !c.want.cancelled {
					t.Error("CancelRequested closed without a cancel")
				}
			default:
				if c.want.cancelled {
					t.Error("CancelRequested not closed")
				}
			}
		})
	}
}

// TestKeys_CancelWaitsForTheEnd: after q the program stays up, saying so, until the session
// ends; then it quits by itself.
func TestKeys_CancelWaitsForTheEnd(t *testing.T) {
	all := session().events
	m := newModel(80, 24, all[:20])
	if cmd := press(m, "q"); cmd != nil {
		t.Fatal("quit before the session ended")
	}
	if v := screenText(m); !strings.Contains(v, "cancelling...") {
		t.Errorf("footer does not say cancelling:\n%s", v)
	}
	_, cmd := m.Update(EventBatchMsg{Events: all[20 : len(all)-1]})
	if cmd != nil {
		t.Fatal("quit before SessionEnded")
	}
	if _, cmd = m.Update(EventMsg{all[len(all)-1]}); !isQuit(cmd) {
		t.Fatal("no quit after SessionEnded")
	}
}

// TestKeys_QuitAfterStreamClosed: when the stream ends without SessionEnded, q quits at once.
func TestKeys_QuitAfterStreamClosed(t *testing.T) {
	m := newModel(80, 24, midSession().events)
	m.Update(StreamClosedMsg{})
	if cmd := press(m, "q"); !isQuit(cmd) || m.Cancelled() {
		t.Errorf("q after the stream closed: quit %v, cancelled %v", isQuit(cmd), m.Cancelled())
	}
}

// TestKeys_Interrupt: SIGINT (through Run's filter) is the same intent as ctrl+c.
func TestKeys_Interrupt(t *testing.T) {
	m := newModel(80, 24, midSession().events)
	msg := interruptFilter(m, teaInterrupt())
	if _, cmd := m.Update(msg); cmd != nil || !m.Cancelled() {
		t.Errorf("interrupt: cmd %v, cancelled %v", cmd, m.Cancelled())
	}
	m.Update(EventMsg{event.Event{Seq: 100, Time: t0, Payload: event.SessionEnded{Status: event.StatusInterrupted, ExitCode: 4}}})
	if !m.quit {
		t.Error("no quit after the interrupted session ended")
	}
}
