package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"massgen/internal/event"
)

func TestApply_MidSession(t *testing.T) {
	m := New()
	for _, e := range midSession().events {
		m.Apply(e)
	}
	if got := len(m.panes); got != 3 {
		t.Fatalf("panes = %d, want 3", got)
	}
	want := []struct{ activity, badge string }{
		{"vote -> agent2", "voted for agent2"},
		{"new_answer agent2.1", "answered agent2.1"},
		{"", "thinking"},
	}
	for i, w := range want {
		pn := m.panes[i]
		if pn.activity != w.activity {
			t.Errorf("%s activity = %q, want %q", pn.a.Label, pn.activity, w.activity)
		}
		if b := m.badge(pn); b.text != w.badge {
			t.Errorf("%s badge = %q, want %q", pn.a.Label, b.text, w.badge)
		}
	}
	if m.phase() != "voting" || m.st.Version != 2 {
		t.Errorf("phase %q version %d, want voting 2", m.phase(), m.st.Version)
	}
	v := screenText(m)
	for _, s := range []string{"voting · answers v2", "✓ voted for agent2", "● answered agent2.1", "thinking",
		"programs every day", "answers 2/2 · votes 1/1", "tokens 2.7k in / 1.2k out", "$0.025"} {
		if !strings.Contains(v, s) {
			t.Errorf("view lacks %q:\n%s", s, v)
		}
	}
}

func TestApply_InvalidationErrorAndDeath(t *testing.T) {
	m := New()
	evs := session().events
	// Up to bob's answer: alice's vote for agent1.1 is invalidated.
	i := 0
	for ; i < len(evs); i++ {
		m.Apply(evs[i])
		if _, ok := evs[i].Payload.(event.AnswerSubmitted); ok && m.st.Version == 2 {
			break
		}
	}
	alice := m.pane("alice")
	if alice.activity != "vote for agent1.1 invalidated by agent2.1" || !alice.bad {
		t.Errorf("alice activity = %q (bad %v)", alice.activity, alice.bad)
	}
	if b := m.badge(alice); b.text != "vote not counted" {
		t.Errorf("alice badge = %q, want vote not counted", b.text)
	}
	m.Apply(evs[i+1]) // carol's first error
	carol := m.pane("carol")
	if b := m.badge(carol); b.text != "retrying after error (1/3)" {
		t.Errorf("carol badge = %q", b.text)
	}
	for i += 2; i < len(evs); i++ {
		m.Apply(evs[i])
		if _, ok := evs[i].Payload.(event.VoteIgnored); ok {
			break
		}
	}
	if !strings.Contains(carol.activity, "not counted: saw v1, now v2") {
		t.Errorf("carol activity after stale vote = %q", carol.activity)
	}
	for i++; i < len(evs); i++ {
		m.Apply(evs[i])
		if _, ok := evs[i].Payload.(event.AgentDead); ok {
			break
		}
	}
	if b := m.badge(carol); b.text != "dead" || carol.activity != "dead: 3 consecutive failed turns" {
		t.Errorf("carol badge %q activity %q", b.text, carol.activity)
	}
}

func TestApply_RetryingWhileThinking(t *testing.T) {
	s := started(1)
	s.add(ms, event.TurnStarted{Agent: "alice", Fresh: true}).
		add(ms, event.AgentError{Agent: "alice", Message: "503", Consecutive: 1, Budget: 3}).
		add(ms, event.TurnStarted{Agent: "alice", Fresh: true})
	m := newModel(80, 24, s.events)
	if b := m.badge(m.panes[0]); b.text != "retrying (1/3 failed)" || !b.spin {
		t.Errorf("badge = %+v", b)
	}
}

func TestApply_SanitizesModelText(t *testing.T) {
	s := started(1)
	s.add(ms, event.TurnStarted{Agent: "alice", Fresh: true}).
		add(ms, event.TextDelta{Agent: "alice", Text: "safe\x1b]0;pwned\x07 \x1b[2Jtext\tend\r\n"})
	m := newModel(80, 24, s.events)
	v := m.View().Content
	if strings.Contains(v, "pwned") || strings.Contains(v, "\x1b[2J") || strings.Contains(v, "\x07") {
		t.Errorf("model text reached the terminal unsanitised: %q", v)
	}
	if !strings.Contains(screenText(m), "safe text    end") {
		t.Errorf("view lacks the cleaned text:\n%s", screenText(m))
	}
}

func TestView_TabsFollowFocus(t *testing.T) {
	m := newModel(80, 24, eightAgents().events)
	if !strings.Contains(screenText(m), "alice thinks Go") {
		t.Fatalf("tab 1 does not show alice:\n%s", screenText(m))
	}
	press(m, "tab", "tab", "tab", "tab", "tab", "tab", "tab") // agent8
	v := screenText(m)
	if m.focus != 7 || !strings.Contains(v, "agent8 heidi") || !strings.Contains(v, "dead: invalid API key") {
		t.Errorf("focus %d, view:\n%s", m.focus, v)
	}
	if !strings.Contains(strings.Split(v, "\n")[2], "‹") {
		t.Errorf("tab bar should mark hidden tabs on the left: %q", strings.Split(v, "\n")[2])
	}
}

func TestView_CachesFrameUntilChange(t *testing.T) {
	m := newModel(80, 24, midSession().events)
	a := m.View().Content
	if m.dirty {
		t.Fatal("dirty after View")
	}
	if b := m.View().Content; b != a {
		t.Error("unchanged model rendered a different frame")
	}
	m.Update(EventMsg{event.Event{Seq: 99, Time: t0.Add(time.Second), Payload: event.TextDelta{Agent: "carol", Text: " and read code."}}})
	if !m.dirty || !strings.Contains(screenText(m), "read code.") {
		t.Errorf("new text not rendered:\n%s", screenText(m))
	}
}

func TestClock_FromEventsAndTicks(t *testing.T) {
	m := newModel(80, 24, midSession().events) // last event at 0.236 s
	if got := m.now().Sub(m.st.StartTime); got != 236*ms {
		t.Fatalf("elapsed = %v, want 236ms", got)
	}
	wall := t0.Add(time.Hour) // the wall clock is unrelated to event times
	m.Update(EventBatchMsg{Events: nil, At: wall})
	m.Update(TickMsg{Time: wall.Add(2 * time.Second)})
	if got := m.now().Sub(m.st.StartTime); got != 2236*ms {
		t.Errorf("elapsed after a 2 s tick = %v, want 2.236s", got)
	}
	if !strings.Contains(screenText(m), "2.2s ·") {
		t.Errorf("footer lacks 2.2s:\n%s", screenText(m))
	}
	spin := m.spin
	m.Update(TickMsg{Time: wall.Add(3 * time.Second)})
	if m.spin != spin+1 {
		t.Error("tick did not advance the spinner")
	}
}

func TestUpdate_ExitOnEndAfterDelay(t *testing.T) {
	m := New()
	m.exitAfter = time.Second
	wall := t0.Add(time.Hour)
	_, cmd := m.Update(EventBatchMsg{Events: session().events, At: wall})
	if cmd != nil {
		t.Fatal("quit at once; want a moment later")
	}
	if _, cmd = m.Update(TickMsg{Time: wall.Add(500 * ms)}); cmd != nil {
		t.Fatal("quit before the delay")
	}
	if _, cmd = m.Update(TickMsg{Time: wall.Add(time.Second)}); !isQuit(cmd) {
		t.Fatal("did not quit after the delay")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestUpdate_TooSmallWindowDoesNotPanic(t *testing.T) {
	for _, size := range [][2]int{{1, 1}, {10, 3}, {30, 6}, {0, 0}} {
		m := newModel(size[0], size[1], eightAgents().events)
		_ = m.View()
		press(m, "1", "t", "?")
		_ = m.View()
		m.Update(EventBatchMsg{Events: session().events[30:]})
		_ = m.View()
	}
}
