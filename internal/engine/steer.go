package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// Steering lets someone outside a running session act on it: stop one agent, end coordination
// with the best answer so far ("Answer Now"), or send the agents a message (MassGen's human
// input queue: each message reaches every live agent once, at its next turn boundary or after
// its next tool round, appended to what its model reads next as "[Human Input]: ..."). A
// Steering serves one session (Options.Steering); its methods are safe for concurrent use and
// fail with ErrNotRunning before the session starts and after coordination ended.
type Steering struct {
	mu       sync.Mutex
	s        *session
	cancels  map[int]context.CancelFunc // each agent's goroutine context
	messages []string                   // every message sent, in order
	given    map[int]int                // messages delivered per agent
	remote   Steerable                  // where the session runs when not here (Forward)
}

// Steerable is a session running elsewhere (on Temporal) that takes the same steering.
type Steerable interface {
	StopAgent(id string) error
	AnswerNow() error
	Send(text string) error
}

// Forward sends st's steering to r, a session that runs elsewhere, until the returned stop is
// called.
func (st *Steering) Forward(r Steerable) (stop func()) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.remote = r
	return func() {
		st.mu.Lock()
		defer st.mu.Unlock()
		if st.remote == r {
			st.remote = nil
		}
	}
}

func (st *Steering) forwarded() Steerable {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.remote
}

// ErrNotRunning: the session has not started coordinating, or coordination is over.
var ErrNotRunning = errors.New("coordination is not running")

// MaxHumanInput caps one message's size in bytes.
const MaxHumanInput = 16 << 10

// NewSteering returns a Steering for one session.
func NewSteering() *Steering {
	return &Steering{cancels: map[int]context.CancelFunc{}, given: map[int]int{}}
}

func (st *Steering) attach(s *session) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.s = s
}

// session returns the session while it coordinates, with s.mu held; the caller unlocks it.
func (st *Steering) session() (*session, error) {
	st.mu.Lock()
	s := st.s
	st.mu.Unlock()
	if s == nil {
		return nil, ErrNotRunning
	}
	s.mu.Lock()
	if s.m.Ended() {
		s.mu.Unlock()
		return nil, ErrNotRunning
	}
	return s, nil
}

// StopAgent takes agent id out of the session as if it had died: its model call is cancelled
// and it answers and votes no more. Its answers stay and may still win.
func (st *Steering) StopAgent(id string) error {
	if r := st.forwarded(); r != nil {
		return r.StopAgent(id)
	}
	s, err := st.session()
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	i := s.index(id)
	if i < 0 {
		return fmt.Errorf("no agent %q in this session", id)
	}
	if s.m.Dead(i) {
		return fmt.Errorf("agent %s is already out of the session", id)
	}
	s.stopLocked(i)
	st.mu.Lock()
	if cancel := st.cancels[i]; cancel != nil {
		cancel()
	}
	st.mu.Unlock()
	return nil
}

// stopLocked takes agent i out as a person asked; s.mu must be held.
func (s *session) stopLocked(i int) {
	s.m.Kill(i)
	s.agentDeadLocked(s.agents[i].ID, "stopped from the dashboard")
	s.broadcastLocked()
	s.checkEndLocked()
}

// AnswerNow ends coordination at once; the winner so far (by votes, then MassGen's order)
// presents its answer, and the session ends as completed.
func (st *Steering) AnswerNow() error {
	if r := st.forwarded(); r != nil {
		return r.AnswerNow()
	}
	s, err := st.session()
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	if len(s.m.CurrentAnswers()) == 0 {
		return errors.New("no agent has answered yet: there is nothing to present")
	}
	s.endLocked(event.EndAnswerNow)
	return nil
}

// Send queues text for every live agent; it is delivered at each one's next turn boundary.
func (st *Steering) Send(text string) error {
	text = strings.TrimSpace(text)
	if text == "" {
		return errors.New("the message is empty")
	}
	if len(text) > MaxHumanInput {
		return fmt.Errorf("the message is %d bytes, over the %d-byte limit", len(text), MaxHumanInput)
	}
	if r := st.forwarded(); r != nil {
		return r.Send(text)
	}
	s, err := st.session()
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	st.mu.Lock()
	st.messages = append(st.messages, text)
	st.mu.Unlock()
	// An agent waiting for its turn starts none for a message: it reads it when it next acts.
	return nil
}

// agentContext gives agent i's goroutine a context StopAgent can cancel.
func (s *session) agentContext(ctx context.Context, i int) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if st := s.o.Steering; st != nil {
		st.mu.Lock()
		st.cancels[i] = cancel
		st.mu.Unlock()
	}
	return ctx, cancel
}

// deliverHumanInputLocked appends the messages agent i has not read yet to what its next call
// sends: to the last unsent user or tool message (MassGen injects into the next tool result),
// else as a new user message. s.mu must be held.
func (s *session) deliverHumanInputLocked(i int, c *conversation) {
	st := s.o.Steering
	if st == nil {
		return
	}
	st.mu.Lock()
	from := st.given[i]
	news := st.messages[from:]
	st.given[i] = len(st.messages)
	// A shared turn is rebuilt from the shared prefix each time, so what the person said in
	// earlier turns is said again: it stays part of the agent's instructions, as it does in a
	// continued conversation.
	var said []string
	if s.sharedTurnsFor(i) && c.sent == 0 {
		said = st.messages[:len(st.messages):len(st.messages)]
	} else {
		said = news
	}
	st.mu.Unlock()
	if len(said) == 0 {
		return
	}
	text := "[Human Input]: " + strings.Join(said, "\n")
	if n := len(c.msgs); n > c.sent && c.msgs[n-1].Role != provider.RoleAssistant {
		c.msgs[n-1].Content += "\n\n" + text
	} else {
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: text})
	}
	for k, m := range news {
		s.publish(event.HumanInput{Agent: s.agents[i].ID, ID: from + k + 1, Text: m})
	}
}

// deliverInboxLocked appends what agent i's Inbox holds to what its next call sends, as
// human input is, and bills what it paid. s.mu must be held.
func (s *session) deliverInboxLocked(i int, c *conversation) {
	in := s.agents[i].Inbox
	if in == nil {
		return
	}
	text, spent := in()
	s.accountSpentLocked(i, spent)
	if text == "" {
		return
	}
	if n := len(c.msgs); n > c.sent && c.msgs[n-1].Role != provider.RoleAssistant {
		c.msgs[n-1].Content += "\n\n" + text
	} else {
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: text})
	}
}

func (s *session) index(id string) int {
	for i, a := range s.agents {
		if a.ID == id {
			return i
		}
	}
	return -1
}
