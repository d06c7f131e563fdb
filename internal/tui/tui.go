// Package tui is the live terminal view of a session: a Bubble Tea program that shows every
// agent streaming, answering and voting, then the final answer with the vote tally, usage and
// cost. Like every view it is a projection of the event stream: its Model folds events into a
// readmodel.State (and a runlog.Table) and renders them, so a replayed log looks like the live
// run.
//
// The Model is a pure reducer: Apply folds one event, Update handles messages (events, window
// size, keys, clock ticks) without I/O, and View renders from the model alone, with the time
// taken from the events and ticks, never from the wall clock. Run drives a real program from a
// channel of events; Replay plays a recorded session through it.
package tui

import (
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"massgen/internal/event"
	"massgen/internal/readmodel"
	"massgen/internal/runlog"
)

// EventMsg delivers one event to the program.
type EventMsg struct{ event.Event }

// EventBatchMsg delivers events in stream order, applied before one re-render. At is the wall
// time the batch was sent, which lets the clock run between events; zero when unknown.
type EventBatchMsg struct {
	Events []event.Event
	At     time.Time
}

// TickMsg advances the spinner and the elapsed time between events; Time is the wall clock.
// Run sends one every 100 ms.
type TickMsg struct{ Time time.Time }

// StreamClosedMsg tells the model that no more events will come (the channel was closed), so q
// quits at once even if SessionEnded never arrived.
type StreamClosedMsg struct{}

// interruptMsg is a SIGINT turned into the same intent as ctrl+c (see Run).
type interruptMsg struct{}

// screen is what the body of the window shows.
type screen int

const (
	screenMain  screen = iota // columns or tabs while running, the final screen after the end
	screenAgent               // one agent full screen
	screenTable               // the coordination table
)

// Model is the terminal view's Bubble Tea model. Use it through a pointer: *Model implements
// tea.Model. It is not safe for concurrent use; the program owns it while it runs.
type Model struct {
	st       *readmodel.State
	table    *runlog.Table
	tableVer int64   // counts the events the table has seen
	panes    []*pane // by agent index, as st.Agents
	byID     map[string]*pane

	width, height int

	screen screen
	help   bool
	focus  int // focused agent: the tab shown, or the agent full screen
	agentV viewport.Model
	tableV viewport.Model
	finalV viewport.Model
	// What each viewport was last filled with, to refill it only on change.
	agentKey, tableKey, finalKey contentKey

	spin            int       // spinner frame, advanced by ticks
	wallAt, wallNow time.Time // wall time of the last event batch and of the last tick
	clockScale      float64   // event time per wall time between events (replay speed)
	endWall         time.Time // wall time SessionEnded arrived; zero until a tick sets it
	exitAfter       time.Duration
	leave           bool    // quit as soon as the session ends (Options.Leave)
	replay          bool    // a recorded session: q quits at once
	replaySpeed     float64 // its pace (0: as fast as possible)
	notices         []string
	// asks wait for y or n, which answer calls (Options.Answer; nil: no keys for them).
	asks   []event.PermissionAsked
	answer func(id, decision string) error
	// reply answers the agents' questions to the person (Options.Reply; nil: no keys);
	// typing is set while the answer is typed into typed.
	reply               func(id, text string) error
	typing              bool
	typed               string
	presenter           string // who presents the final answer (FinalStarted.Agent)
	presenterNote       string // why the configured presenter does not present (FinalStarted.Note)
	endKey              string // what q does after the end (Options.EndKeyHelp); "" is quit
	cancelled           bool
	cancelCh            chan struct{}
	streamDone, quit    bool
	dirty               bool
	frameCache          string
	finalMD, finalMDKey string // rendered final answer, and its width and input
	renderMD            func(md string, width int) (string, error)
}

// contentKey identifies what a viewport holds.
type contentKey struct{ seq, ver, width, which int64 }

// New returns a model before any event. The window size comes with the first
// tea.WindowSizeMsg; until then it renders at 80x24.
func New() *Model {
	st := readmodel.NewState()
	m := &Model{
		st:         st,
		table:      runlog.NewTableOn(st),
		byID:       map[string]*pane{},
		width:      80,
		height:     24,
		clockScale: 1,
		cancelCh:   make(chan struct{}),
		dirty:      true,
		renderMD:   renderMarkdown,
	}
	for _, v := range []*viewport.Model{&m.agentV, &m.tableV, &m.finalV} {
		*v = viewport.New()
		v.MouseWheelEnabled = false
	}
	m.resize(m.width, m.height)
	return m
}

// State returns the session state the view renders. It is read-only for the caller and only
// valid while the program is not running Update.
func (m *Model) State() *readmodel.State { return m.st }

// Cancelled reports whether the user asked to stop the session (q or ctrl+c before it ended).
func (m *Model) Cancelled() bool { return m.cancelled }

// CancelRequested returns a channel closed when the user first presses q or ctrl+c before the
// session has ended. The caller should then cancel the session's context and keep feeding
// events: the program stays up, showing "cancelling...", until SessionEnded (or the end of the
// stream) arrives, and quits then. A second q or ctrl+c quits at once. Run watches this channel
// and calls Options.OnCancel.
func (m *Model) CancelRequested() <-chan struct{} { return m.cancelCh }

// Init implements tea.Model. The model needs no command: Run sends clock ticks.
func (m *Model) Init() tea.Cmd { return nil }

// Update implements tea.Model. It does no I/O and returns no command but tea.Quit.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case EventMsg:
		m.Apply(msg.Event)
		m.afterEvents(time.Time{})
	case EventBatchMsg:
		for _, e := range msg.Events {
			m.Apply(e)
		}
		m.afterEvents(msg.At)
	case TickMsg:
		m.tick(msg.Time)
	case StreamClosedMsg:
		m.streamDone = true
		m.dirty = true
		if m.cancelled || m.exitAfter > 0 || m.leave {
			m.quit = true
		}
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.KeyPressMsg:
		m.key(msg)
	case interruptMsg:
		m.requestQuit()
	}
	if m.quit {
		return m, tea.Quit
	}
	return m, nil
}

// afterEvents refreshes what depends on a batch of events just applied.
func (m *Model) afterEvents(at time.Time) {
	m.wallAt = at
	if !at.IsZero() {
		m.wallNow = at
	}
	if m.st.Ended {
		if m.endWall.IsZero() {
			m.endWall = at
		}
		if m.cancelled || m.leave {
			m.quit = true
		}
	}
	m.dirty = true
	m.sync()
}

// tick advances the spinner and the clock; it quits a moment after the end when asked to.
func (m *Model) tick(now time.Time) {
	m.wallNow = now
	if m.st.Ended {
		if m.endWall.IsZero() {
			m.endWall = now
		}
		if m.exitAfter > 0 && now.Sub(m.endWall) >= m.exitAfter {
			m.quit = true
		}
		return
	}
	m.spin++
	m.dirty = true
}

// now is the time the view shows: the last event's time, advanced by the wall time since
// then (scaled for replays), frozen at the end of the session.
func (m *Model) now() time.Time {
	if m.st.Ended {
		return m.st.EndTime
	}
	t := m.st.LastTime
	if !m.wallAt.IsZero() && m.wallNow.After(m.wallAt) {
		t = t.Add(time.Duration(float64(m.wallNow.Sub(m.wallAt)) * m.clockScale))
	}
	return t
}

// ended reports whether no more events can come.
func (m *Model) ended() bool { return m.st.Ended || m.streamDone }

// requestQuit handles q, ctrl+c and SIGINT: quit once the session has ended or when it is a
// replay, otherwise ask the caller to cancel it (the second time, quit at once).
func (m *Model) requestQuit() {
	m.dirty = true
	switch {
	case m.ended() || m.cancelled || m.replay:
		m.quit = true
	default:
		m.cancelled = true
		close(m.cancelCh)
	}
}

func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 1), max(h, 1)
	bh := m.bodyHeight()
	m.agentV.SetWidth(m.width)
	m.agentV.SetHeight(max(bh-2, 1))
	m.tableV.SetWidth(m.width)
	m.tableV.SetHeight(max(bh-1, 1))
	m.finalV.SetWidth(m.width)
	m.finalV.SetHeight(max(bh, 1))
	m.dirty = true
	m.sync()
}

// headerHeight and footerHeight frame the body; notices add to the header, up to maxNotices
// lines.
const headerHeight, footerHeight, maxNotices = 2, 2, 3

func (m *Model) bodyHeight() int {
	return max(m.height-headerHeight-m.noticeLines()-footerHeight, 1)
}

// noticeLines is how many lines the notices take under the header.
func (m *Model) noticeLines() int { return min(len(m.notices), maxNotices) }

// notice adds a warning to show under the header for the rest of the session.
func (m *Model) notice(s string) {
	m.notices = append(m.notices, s)
	m.resize(m.width, m.height)
}

// key handles one key press.
func (m *Model) key(k tea.KeyPressMsg) {
	m.dirty = true
	s := k.String()
	if m.answerKey(s) || m.questionKey(k) {
		return
	}
	switch s {
	case "ctrl+c", "q":
		m.requestQuit()
		return
	case "?":
		m.help = !m.help
		return
	case "esc":
		switch {
		case m.help:
			m.help = false
		case m.screen != screenMain:
			m.screen = screenMain
		}
		return
	}
	m.help = false
	switch s {
	case "t":
		if m.screen == screenTable {
			m.screen = screenMain
		} else {
			m.screen = screenTable
			m.tableV.GotoTop()
		}
	case "1", "2", "3", "4", "5", "6", "7", "8", "9":
		i := int(s[0] - '1')
		if i >= len(m.panes) {
			return
		}
		if m.screen == screenAgent && m.focus == i {
			m.screen = screenMain
			return
		}
		m.showAgent(i)
	case "tab", "right", "l", "shift+tab", "left", "h":
		if m.screen == screenTable {
			m.tableV, _ = m.tableV.Update(k)
			return
		}
		if len(m.panes) == 0 || (m.screen == screenMain && m.ended()) {
			return
		}
		d := 1
		if s == "shift+tab" || s == "left" || s == "h" {
			d = len(m.panes) - 1
		}
		m.focus = (m.focus + d) % len(m.panes)
		if m.screen == screenAgent {
			m.showAgent(m.focus)
		}
	case "enter":
		if m.screen == screenMain && !m.ended() && len(m.panes) > 0 {
			m.showAgent(m.focus)
		}
	case "g", "home":
		m.active().GotoTop()
	case "G", "end":
		m.active().GotoBottom()
	default:
		if v := m.active(); v != nil {
			*v, _ = v.Update(k)
		}
	}
	m.sync()
}

// showAgent opens agent i full screen, scrolled to its newest text.
func (m *Model) showAgent(i int) {
	m.screen, m.focus = screenAgent, i
	m.agentKey = contentKey{}
	m.sync()
	m.agentV.GotoBottom()
}

// active returns the viewport the keys scroll, or a scratch one.
func (m *Model) active() *viewport.Model {
	switch {
	case m.screen == screenAgent:
		return &m.agentV
	case m.screen == screenTable:
		return &m.tableV
	case m.st.Ended:
		return &m.finalV
	}
	return &viewport.Model{}
}

// View implements tea.Model. It re-renders only after a change; otherwise it returns the
// previous frame.
func (m *Model) View() tea.View {
	if m.dirty {
		m.frameCache = m.render()
		m.dirty = false
	}
	v := tea.NewView(m.frameCache)
	v.AltScreen = true
	v.WindowTitle = "massgen: " + m.phase()
	return v
}
