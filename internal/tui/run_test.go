package tui

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"go.uber.org/goleak"

	"massgen/internal/event"
)

// noLeaks checks that every goroutine started by the test has stopped. teatest leaves one
// goroutine per test model waiting for SIGINT; it is not ours.
func noLeaks(t *testing.T) {
	t.Helper()
	goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"))
}

// syncBuffer is an output the program writes while the test may read it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRun_Session streams a whole session through a real program and returns once it ended.
func TestRun_Session(t *testing.T) {
	defer noLeaks(t)
	events := make(chan event.Event)
	go func() {
		defer close(events)
		for _, e := range session().events {
			events <- e
		}
	}()
	var out syncBuffer
	err := Run(t.Context(), events, Options{
		Input: strings.NewReader(""), Output: &out, Width: 100, Height: 40,
		ExitOnEnd: true, ExitDelay: 10 * time.Millisecond,
		OnCancel: func() { t.Error("OnCancel called for a session that ended") },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := ansi.Strip(out.String())
	for _, s := range []string{"Final answer", "agent2 (bob) with agent2.1 won", "log: .massgen/massgen_logs"} {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %q", s)
		}
	}
}

// TestRun_CancelWiring: q before the end calls OnCancel; the program stays up until the
// session, cancelled by the caller, ends; then Run returns.
func TestRun_CancelWiring(t *testing.T) {
	defer noLeaks(t)
	all := session().events
	events := make(chan event.Event, len(all))
	for _, e := range all[:10] {
		events <- e
	}
	cancelled := make(chan struct{})
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(t.Context(), events, Options{
			Input: strings.NewReader("q"), Output: &out, Width: 100, Height: 30,
			OnCancel: func() { close(cancelled) },
		})
	}()
	select {
	case <-cancelled:
	case err := <-done:
		t.Fatalf("Run returned before the session ended: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("OnCancel not called")
	}
	// The engine winds down: interrupted, then the end of the session.
	select {
	case err := <-done:
		t.Fatalf("Run returned before SessionEnded: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	s := &stream{at: all[9].Time.Sub(t0), events: all[:10]}
	s.add(ms, event.CoordinationEnded{Reason: event.EndInterrupted, Winner: "alice", WinnerLabel: "agent1", AnswerLabel: "agent1.1"}).
		add(ms, event.SessionEnded{Status: event.StatusInterrupted, ExitCode: 4})
	for _, e := range s.events[10:] {
		events <- e
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after SessionEnded")
	}
}

// TestRun_ContextEnds: cancelling Run's context kills the program, reports the context's
// error and tells the caller to cancel the unfinished session.
func TestRun_ContextEnds(t *testing.T) {
	defer noLeaks(t)
	ctx, cancel := context.WithCancel(t.Context())
	events := make(chan event.Event, 100)
	for _, e := range midSession().events {
		events <- e
	}
	var calls int
	time.AfterFunc(100*time.Millisecond, cancel)
	err := Run(ctx, events, Options{Input: strings.NewReader(""), Output: &syncBuffer{}, Width: 80, Height: 24, OnCancel: func() { calls++ }})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("OnCancel called %d times, want 1", calls)
	}
}

// TestReplay plays a recorded session at its pace (sped up) and as fast as possible.
func TestReplay(t *testing.T) {
	defer noLeaks(t)
	evs := session().events // 0.57 s recorded
	for _, speed := range []float64{0, 10} {
		var out syncBuffer
		start := time.Now()
		err := Replay(t.Context(), evs, speed, Options{Input: strings.NewReader(""), Output: &out, Width: 100, Height: 40, ExitOnEnd: true, ExitDelay: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); speed == 10 && took < 50*time.Millisecond {
			t.Errorf("speed 10 replay of 0.57 s took %v; pacing ignored", took)
		}
		if !strings.Contains(ansi.Strip(out.String()), "Final answer") {
			t.Errorf("speed %v: no final screen", speed)
		}
	}
}

// TestForwarder_Batches: events already in the channel go out in one message, and the stream's
// end is announced.
func TestForwarder_Batches(t *testing.T) {
	defer noLeaks(t)
	evs := midSession().events
	ch := make(chan event.Event, len(evs))
	for _, e := range evs {
		ch <- e
	}
	close(ch)
	msgs := make(chan tea.Msg, 100)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		f := forwarder{send: func(m tea.Msg) { msgs <- m }, events: ch, onCancel: func() {}}
		f.run(ctx)
	})
	var batches, n int
	for closed := false; !closed; {
		switch m := (<-msgs).(type) {
		case EventBatchMsg:
			batches++
			n += len(m.Events)
		case StreamClosedMsg:
			closed = true
		}
	}
	cancel()
	wg.Wait()
	if n != len(evs) || batches != 1 {
		t.Errorf("%d events in %d batches, want %d in 1", n, batches, len(evs))
	}
}

// TestTeatest drives the model in a teatest program: events and keys in, screen out.
func TestTeatest(t *testing.T) {
	defer noLeaks(t)
	tm := teatest.NewTestModel(t, New(), teatest.WithInitialTermSize(100, 30))
	tm.Send(EventBatchMsg{Events: midSession().events})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		return bytes.Contains(b, []byte("voted for agent2"))
	}, teatest.WithDuration(5*time.Second))
	tm.Send(keyMsg("q"))
	tm.Send(EventBatchMsg{Events: session().events[len(midSession().events):]})
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if !fm.Cancelled() || !fm.State().Ended {
		t.Errorf("cancelled %v, ended %v", fm.Cancelled(), fm.State().Ended)
	}
}
