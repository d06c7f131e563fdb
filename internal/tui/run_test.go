package tui

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"go.uber.org/goleak"

	"massgen/internal/event"
	"massgen/internal/testio"
)

// noLeaks checks that every goroutine started by the test has stopped. teatest leaves one
// goroutine per test model waiting for SIGINT; it is not ours.
func noLeaks(t *testing.T) {
	t.Helper()
	goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/charmbracelet/x/exp/teatest/v2.NewTestModel.func2"))
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
	var out testio.Buffer
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
	var out testio.Buffer
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
	err := Run(ctx, events, Options{Input: strings.NewReader(""), Output: &testio.Buffer{}, Width: 80, Height: 24, OnCancel: func() { calls++ }})
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
		var out testio.Buffer
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

// TestRun_LeaveOneShot: a one-shot run does not wait for q once the session has ended; its
// final screen, all of it, is left on the terminal.
func TestRun_LeaveOneShot(t *testing.T) {
	defer noLeaks(t)
	events := make(chan event.Event)
	go func() {
		defer close(events)
		for _, e := range session().events {
			events <- e
		}
	}()
	var out testio.Buffer
	done := make(chan error, 1)
	go func() {
		// The input never sends a key: only the end of the session can end the program.
		r, w := io.Pipe()
		defer w.Close()
		done <- Run(t.Context(), events, Options{Input: r, Output: &out, Width: 100, Height: 20, Leave: true,
			Notices: []string{"warning: team.yaml:3:1: orchestratr: unknown top-level key"}})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run still waits for a key after the session ended")
	}
	got := ansi.Strip(out.String())
	left := got[max(strings.LastIndex(got, "massgen: What is the best way"), 0):]
	// What stays is the whole final screen, though the window was too short to show it.
	for _, s := range []string{"! warning: team.yaml:3:1: orchestratr", "Final answer · agent2 (bob)", "Votes", "Usage", "total ", "log: .massgen/massgen_logs/log_20250314_150926/turn_1\n"} {
		if !strings.Contains(left, s) {
			t.Errorf("the screen left behind lacks %q:\n%s", s, left)
		}
	}
}

// TestReplay_QuitsAtOnce: q stops a replay at once (there is no session to wait for), and the
// screen says it is a replay and at what speed.
func TestReplay_QuitsAtOnce(t *testing.T) {
	defer noLeaks(t)
	evs := session().events
	for i := range evs {
		evs[i].Time = t0.Add(evs[i].Time.Sub(t0) * 100) // a minute long
	}
	var out testio.Buffer
	start := time.Now()
	r, w := io.Pipe()
	time.AfterFunc(300*time.Millisecond, func() { _, _ = w.Write([]byte("q")) })
	defer w.Close()
	err := Replay(t.Context(), evs, 1, Options{Input: r, Output: &out, Width: 100, Height: 30})
	if !errors.Is(err, ErrReplayStopped) {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("q took %v to stop a replay", took)
	}
	if got := ansi.Strip(out.String()); !strings.Contains(got, "massgen replay (1× speed): What is the best way") {
		t.Errorf("the screen does not say it is a replay:\n%s", got)
	}
}

func TestReplay_Header(t *testing.T) {
	for _, tc := range []struct {
		speed float64
		want  string
	}{{0, "massgen replay (as fast as possible): "}, {4, "massgen replay (4× speed): "}, {0.5, "massgen replay (0.5× speed): "}} {
		m := New()
		m.replay, m.replaySpeed = true, tc.speed
		m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
		m.Update(EventBatchMsg{Events: midSession().events})
		if got := screenText(m); !strings.HasPrefix(got, tc.want) || !strings.Contains(got, "q stop the replay") {
			t.Errorf("speed %v: screen starts %q, want %q and a footer to stop it", tc.speed, strings.SplitN(got, "\n", 2)[0], tc.want)
		}
	}
}

// TestReplay_StoppedOrEnded: q before the end says the replay was stopped, so that a caller
// replaying several turns stops them all; a replay that reaches its end with Leave moves on
// by itself, leaving its final screen.
func TestReplay_StoppedOrEnded(t *testing.T) {
	defer noLeaks(t)
	slow := session().events
	for i := range slow {
		slow[i].Time = t0.Add(slow[i].Time.Sub(t0) * 100) // a minute long
	}
	r, w := io.Pipe()
	time.AfterFunc(300*time.Millisecond, func() { _, _ = w.Write([]byte("q")) })
	defer w.Close()
	err := Replay(t.Context(), slow, 1, Options{Input: r, Output: &testio.Buffer{}, Width: 100, Height: 30, Leave: true})
	if !errors.Is(err, ErrReplayStopped) {
		t.Errorf("q mid-replay: %v, want ErrReplayStopped", err)
	}

	var out testio.Buffer
	keys, never := io.Pipe() // no key is ever pressed
	defer never.Close()
	done := make(chan error, 1)
	go func() {
		done <- Replay(t.Context(), session().events, 0, Options{Input: keys, Output: &out, Width: 100, Height: 30, Leave: true})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a replay that reached its end: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a replay with Leave waits for a key at its end")
	}
	if !strings.Contains(ansi.Strip(out.String()), "Final answer") {
		t.Error("its final screen is not left on the terminal")
	}
}
