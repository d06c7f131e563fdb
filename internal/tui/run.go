package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"massgen/internal/event"
)

// Options configure Run and Replay. The zero value runs on the terminal.
type Options struct {
	// Input is where keys come from; nil means the terminal.
	Input io.Reader
	// Output is where the view is drawn; nil means standard output.
	Output io.Writer
	// Width and Height fix the window size; 0 takes it from the terminal (80x24 when the
	// output is not one).
	Width, Height int
	// OnCancel is called once, from Run's goroutine, when the user asks to stop the session (q
	// or ctrl+c, or SIGINT) before it ended, and when the program ends before the session did.
	// It should cancel the session's context and return at once. Nil: ignored.
	OnCancel func()
	// Pace > 0 replays events at their recorded intervals divided by Pace (1: as recorded, 2:
	// twice as fast). 0 delivers events as they arrive, for live sessions.
	Pace float64
	// ExitOnEnd quits a moment (ExitDelay) after SessionEnded or the end of the stream, for
	// replays and tests; otherwise the final screen stays until the user presses q.
	ExitOnEnd bool
	// ExitDelay is the moment ExitOnEnd waits; 0 means 1 s.
	ExitDelay time.Duration
	// Leave is for a one-shot run: the program quits as soon as the session ends, and the
	// final screen (the answer, the winner and why, the votes, the usage) is then written to
	// Output as it stood, so that it stays in the terminal's scrollback and the shell gets its
	// prompt back. An interactive turn leaves it unset: its final screen stays until q, which
	// returns to the prompt.
	Leave bool
	// Notices are shown under the header from the start, and on the final screen: warnings
	// printed before the view opened (config warnings) would otherwise hide behind it.
	Notices []string
	// EndKeyHelp says what q does once the session has ended, in the footer ("q <it>") and the
	// help; "" says "quit". An interactive turn, whose q goes back to the prompt, says so.
	EndKeyHelp string
	// Answer, when set, answers the permission engine's asks: y allows, n denies the oldest
	// waiting one (decision "allow" or "deny").
	Answer func(id, decision string) error
	// Reply, when set, answers the agents' questions to the person (broadcast: human): a
	// starts typing the oldest one's answer, enter sends it, s skips it ("" text).
	Reply func(id, text string) error
}

// Timing of the forwarder.
const (
	frameInterval = time.Second / 60       // at most one batch of events per frame (60 FPS)
	tickInterval  = 100 * time.Millisecond // spinner and clock
	maxBatch      = 1 << 14                // events sent in one message at most
	defaultExit   = time.Second            // ExitOnEnd's delay
)

// Run shows a live session: it reads events from the channel and draws them until the user
// quits after the session has ended, ExitOnEnd fires, or ctx is done (then it returns ctx's
// error). Events are forwarded by one goroutine, in batches of what is available, at most one
// batch per frame, so a flood of deltas costs one re-render per frame. The caller closes events
// when the session is over (or never; Run does not need it). Run stops every goroutine it
// started before returning.
//
// Cancellation: ctx ends the program itself and should outlive the session. When the user
// presses q or ctrl+c while the session runs, Run calls OnCancel; the caller cancels the
// session and keeps sending events, and the program quits when SessionEnded arrives. After Run
// returns nothing reads the channel any more: a producer must not block on it (select on a
// done channel).
func Run(ctx context.Context, events <-chan event.Event, opts Options) error {
	return run(ctx, New(), events, opts)
}

func run(ctx context.Context, m *Model, events <-chan event.Event, opts Options) error {
	m.configure(opts)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithFilter(interruptFilter)}
	if opts.Input != nil {
		popts = append(popts, tea.WithInput(opts.Input))
	}
	if opts.Output != nil {
		popts = append(popts, tea.WithOutput(opts.Output))
	}
	if opts.Width > 0 && opts.Height > 0 {
		popts = append(popts, tea.WithWindowSize(opts.Width, opts.Height))
	}
	p := tea.NewProgram(m, popts...)

	var once sync.Once
	cancel := func() {
		if opts.OnCancel != nil {
			once.Do(opts.OnCancel)
		}
	}
	fctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		f := forwarder{send: p.Send, events: events, cancel: m.CancelRequested(), onCancel: cancel, pace: opts.Pace}
		f.run(fctx)
	})
	_, err := p.Run()
	stop()
	wg.Wait()
	// The model is the program's no more: reading it is safe now.
	if !m.st.Ended {
		cancel()
	}
	if err != nil && errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil && opts.Leave && m.st.Ended {
		out := opts.Output
		if out == nil {
			out = os.Stdout
		}
		_, err = io.WriteString(out, m.Leftover()+"\n")
	}
	return err
}

// configure applies what opts say about the model itself, before the program starts.
func (m *Model) configure(opts Options) {
	if opts.Pace > 0 {
		m.clockScale = opts.Pace
	}
	m.leave, m.endKey, m.answer, m.reply = opts.Leave, opts.EndKeyHelp, opts.Answer, opts.Reply
	m.notices = append(m.notices, opts.Notices...)
	if opts.ExitOnEnd {
		m.exitAfter = opts.ExitDelay
		if m.exitAfter <= 0 {
			m.exitAfter = defaultExit
		}
	}
}

// ErrReplayStopped is what Replay returns when the user stopped it (q, ctrl+c) before the
// session's end: a caller replaying several turns stops them all.
var ErrReplayStopped = errors.New("replay stopped")

// Replay plays a finished session's events through the same view, at their recorded pace
// divided by speed; speed 0 (or less) plays them as fast as the view can take them. The
// screen says it is a replay and at what speed, and q stops it at once: there is no session
// to cancel. Stopped before the end, it returns ErrReplayStopped. With opts.Leave it moves
// on by itself at the end, its final screen left on the terminal, as the next turn's replay
// would.
func Replay(ctx context.Context, events []event.Event, speed float64, opts Options) error {
	ch := make(chan event.Event, len(events))
	for _, e := range events {
		ch <- e
	}
	close(ch)
	opts.Pace = max(speed, 0)
	m := New()
	m.replay, m.replaySpeed = true, opts.Pace
	if err := run(ctx, m, ch, opts); err != nil {
		return err
	}
	if m.quit && !m.ended() {
		return ErrReplayStopped
	}
	return nil
}

// interruptFilter turns SIGINT (which arrives when input is not a terminal) into the same
// intent as ctrl+c instead of killing the program.
func interruptFilter(_ tea.Model, msg tea.Msg) tea.Msg {
	if _, ok := msg.(tea.InterruptMsg); ok {
		return interruptMsg{}
	}
	return msg
}

// forwarder moves events from the channel to the program, in batches of at most one per frame,
// paced for replays, and sends the clock ticks. It is the only goroutine that calls send.
type forwarder struct {
	send     func(tea.Msg)
	events   <-chan event.Event
	cancel   <-chan struct{}
	onCancel func()
	pace     float64

	batch    []event.Event
	held     *event.Event // read but not yet due (replay)
	origin   time.Time    // wall time the replay started
	base     time.Time    // time of the first event
	lastSend time.Time
}

func (f *forwarder) run(ctx context.Context) {
	ticker := time.NewTicker(tickInterval)
	defer ticker.Stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	in := f.events
	for {
		var wake <-chan time.Time
		if d, ok := f.wait(time.Now()); ok {
			timer.Reset(d)
			wake = timer.C
		}
		recv := in
		if f.held != nil {
			recv = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-f.cancel:
			f.cancel = nil
			f.onCancel()
		case t := <-ticker.C:
			f.send(TickMsg{Time: t})
		case e, ok := <-recv:
			if !ok {
				in = nil
				f.flush()
				f.send(StreamClosedMsg{})
				continue
			}
			f.take(e)
			f.drain(in)
		case <-wake:
		}
		now := time.Now()
		if f.held != nil && !now.Before(f.due(*f.held)) {
			f.batch = append(f.batch, *f.held)
			f.held = nil
			f.drain(in)
		}
		if len(f.batch) > 0 && now.Sub(f.lastSend) >= frameInterval {
			f.flush()
		}
	}
}

// take adds e to the batch, or holds it until it is due.
func (f *forwarder) take(e event.Event) {
	if f.pace > 0 {
		if f.origin.IsZero() {
			f.origin, f.base = time.Now(), e.Time
		}
		if time.Now().Before(f.due(e)) {
			f.held = &e
			return
		}
	}
	f.batch = append(f.batch, e)
}

// drain takes what the channel already holds, without blocking.
func (f *forwarder) drain(in <-chan event.Event) {
	for f.held == nil && len(f.batch) < maxBatch {
		select {
		case e, ok := <-in:
			if !ok {
				return // the next receive in run sees the close
			}
			f.take(e)
		default:
			return
		}
	}
}

// due is the wall time a replayed event should be shown.
func (f *forwarder) due(e event.Event) time.Time {
	return f.origin.Add(time.Duration(float64(e.Time.Sub(f.base)) / f.pace))
}

// wait returns how long to sleep before the held event is due or the batch may be sent.
func (f *forwarder) wait(now time.Time) (time.Duration, bool) {
	var at time.Time
	if f.held != nil {
		at = f.due(*f.held)
	}
	if len(f.batch) > 0 {
		if t := f.lastSend.Add(frameInterval); at.IsZero() || t.Before(at) {
			at = t
		}
	}
	if at.IsZero() {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}

func (f *forwarder) flush() {
	if len(f.batch) == 0 {
		return
	}
	now := time.Now()
	f.send(EventBatchMsg{Events: f.batch, At: now})
	f.batch, f.lastSend = nil, now
}
