package web

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"massgen/internal/app"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/permission"
	"massgen/internal/provider"
)

// session is a run this server started and that has not finished: its events so far, for the
// subscribers that arrive late, and a signal for those waiting for more. It is an event.Sink.
// Once the run has returned (its log directory complete) it leaves the registry, and readers
// go to the log directory instead.
type session struct {
	team    string
	cancel  context.CancelFunc
	asks    *permission.Broker // the permission asks and the agents' questions the dashboard answers
	onStart func(*session)     // registers the session; called from Handle at SessionStarted
	started chan struct{}      // closed at SessionStarted, or when the run ended without one
	done    chan struct{}      // closed once the run has returned and left the registry
	steer   *engine.Steering   // stop an agent, Answer Now, messages (steer.go)

	mu      sync.Mutex
	id      string // log_<ts>/turn_<n>; "" before SessionStarted (and for a run without logs)
	begun   bool   // SessionStarted was seen
	events  []event.Event
	changed chan struct{} // closed and replaced on every change
	ended   bool
	res     app.Result
	err     error // the run could not start
}

// Handle implements event.Sink: it keeps the event and wakes the subscribers. It never blocks
// on a subscriber.
func (ss *session) Handle(e event.Event) {
	ss.mu.Lock()
	ss.events = append(ss.events, e)
	close(ss.changed)
	ss.changed = make(chan struct{})
	first := false
	if p, ok := e.Payload.(event.SessionStarted); ok && !ss.begun {
		ss.begun, first = true, true
		if p.SessionID != "" {
			ss.id = fmt.Sprintf("%s/turn_%d", p.SessionID, p.Turn)
		}
	}
	ss.mu.Unlock()
	if first {
		if ss.id != "" {
			ss.onStart(ss)
		}
		close(ss.started)
	}
}

// next returns the events after the first n, waiting until there are some. ended is true when
// the run has ended and every event has been returned; err is ctx's error.
func (ss *session) next(ctx context.Context, n int) (evs []event.Event, ended bool, err error) {
	for {
		ss.mu.Lock()
		if len(ss.events) > n {
			evs = ss.events[n:len(ss.events):len(ss.events)]
			ss.mu.Unlock()
			return evs, false, nil
		}
		if ss.ended {
			ss.mu.Unlock()
			return nil, true, nil
		}
		ch := ss.changed
		ss.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// indexAfter is the index in ss.events of the first event numbered after seq. A session on
// Temporal shows previews, which carry the number of the event they follow, so an event's
// index is not its number.
func (ss *session) indexAfter(seq int64) int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return sort.Search(len(ss.events), func(k int) bool { return ss.events[k].Seq > seq })
}

// snapshot returns the events so far and whether the run has ended.
func (ss *session) snapshot() ([]event.Event, bool) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.events[:len(ss.events):len(ss.events)], ss.ended
}

// ID returns the session id, "" before SessionStarted.
func (ss *session) ID() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.id
}

// result returns how the run ended; valid once done is closed.
func (ss *session) result() (app.Result, error) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.res, ss.err
}

var errShuttingDown = errors.New("the server is shutting down")

// busyError: the server already runs as many sessions as it may.
type busyError struct{ max int }

func (e busyError) Error() string {
	running := fmt.Sprintf("%d sessions are running", e.max)
	if e.max == 1 {
		running = "1 session is running"
	}
	return running + ", the most this server runs at once (massgen serve --max-sessions); retry when one has ended"
}

// run is what a session runs: question on team, after history; logSession and turn, when
// set, make it the next turn of an existing log_<timestamp> folder (a follow-up).
type run struct {
	team, question string
	history        []provider.Message
	logSession     string
	turn           int
	// workspace is the previous turn's winner's workspace a follow-up starts from ("": none).
	workspace string
}

// start runs r in a goroutine the server owns, and returns once the session has started (its
// id is known) or has failed to. The session stops when parent is done (nil: only when the
// server closes, or through cancel). A session that could not start returns its error, an
// *app.Error carrying the exit code.
func (s *Server) start(parent context.Context, r run) (*session, error) {
	team := r.team
	cfg, ok := s.team(team)
	if !ok {
		return nil, fmt.Errorf("no team %q", team)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errShuttingDown
	}
	if s.maxSessions > 0 && s.active >= s.maxSessions {
		s.mu.Unlock()
		return nil, busyError{s.maxSessions}
	}
	s.active++
	ctx, cancel := context.WithCancel(s.base)
	stop := context.AfterFunc(parent, cancel)
	ss := &session{
		team:    team,
		cancel:  cancel,
		steer:   engine.NewSteering(),
		onStart: s.register,
		started: make(chan struct{}),
		done:    make(chan struct{}),
		changed: make(chan struct{}),
		asks:    permission.NewBroker(),
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer cancel()
		defer stop()
		// A follow-up starts from the previous winner's workspace, as massgen --continue does.
		var conv *app.Conversation
		if r.workspace != "" {
			conv = app.ResumeConversation(r.workspace)
			defer conv.Close()
		}
		res, err := s.run(ctx, cfg, app.Options{
			Conversation: conv,
			Question:     r.question,
			History:      r.history,
			Session:      r.logSession,
			Turn:         r.turn,
			Steering:     ss.steer,
			Logging:      true,
			LogRoot:      s.logRoot,
			Sinks:        []event.Sink{ss},
			Version:      s.version,
			Secrets:      []string{s.token}, // an agent that learns it must not show it to the page
			// The dashboard answers the permission engine's asks (permissions.go).
			Approvals: ss.asks,
			// What metadata.json records; the list reads the team back from it.
			Args: []string{"massgen", "serve", "--config", team + "=" + cfg.Path},
		})
		// Free the slot before anyone can learn that the session ended.
		s.mu.Lock()
		s.active--
		s.mu.Unlock()
		ss.mu.Lock()
		ss.ended, ss.res, ss.err = true, res, err
		id, begun := ss.id, ss.begun
		s.log.ended(id, team, res, err)
		close(ss.changed)
		ss.changed = make(chan struct{})
		ss.mu.Unlock()
		if !begun {
			close(ss.started)
		}
		if id != "" {
			s.unregister(id)
		}
		close(ss.done)
	}()
	<-ss.started
	ss.mu.Lock()
	failed := ss.ended && !ss.begun
	ss.mu.Unlock()
	if failed {
		<-ss.done
		_, err := ss.result()
		if err == nil {
			err = errors.New("the session ended before it started")
		}
		return nil, err
	}
	return ss, nil
}

func (s *Server) register(ss *session) {
	s.mu.Lock()
	s.running[ss.id] = ss
	s.mu.Unlock()
	s.log.started(ss.id, ss.team)
}

func (s *Server) unregister(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.running, id)
}

// lookup returns the running session with id, or nil.
func (s *Server) lookup(id string) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[id]
}

// runningSessions returns the sessions running now.
func (s *Server) runningSessions() []*session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*session, 0, len(s.running))
	for _, ss := range s.running {
		out = append(out, ss)
	}
	return out
}
