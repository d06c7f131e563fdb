package engine

import (
	"context"
	"errors"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider/scripted"
)

// A coordinator taken up from its State between turns (a workflow continued as new) goes on
// as the one it replaces: same winner, each message delivered once, a stopped agent out.
func TestCoordinator_ResumedFromItsStateGoesOn(t *testing.T) {
	scripts := []config.Script{
		{Answers: []string{"Paris.", "Paris is the capital of France, on the Seine, since the Middle Ages."}, ImproveAfter: 3, Vote: "longest"},
		{Answers: []string{"The capital is Paris."}, Vote: "longest"},
		{Answers: []string{"France's capital: Paris."}, Vote: "longest"},
	}
	mk := func() Options {
		o := Options{Question: "What is the capital of France?"}
		for k, s := range scripts {
			o.Agents = append(o.Agents, Agent{ID: string(rune('a' + k)), Backend: "scripted", Model: "s", Provider: scripted.New(s, "s")})
		}
		return o
	}
	run := func(resume bool) (Result, []event.Event) {
		o := mk()
		var log []event.Event
		bus := event.NewBus(nil)
		bus.Subscribe(event.SinkFunc(func(e event.Event) { log = append(log, e) }))
		co := o
		co.Bus = bus
		x := NewCoordinator(co)
		x.Start()
		convs := make([]Conversation, len(o.Agents))
		rounds := make([]int, len(o.Agents))
		for steps := 0; !x.Ended(); steps++ {
			if steps > 50 {
				t.Fatal("no end after 50 rounds")
			}
			switch steps {
			case 0:
				if err := x.Send("Keep it short."); err != nil {
					t.Fatal(err)
				}
			case 1:
				if _, err := x.StopAgent("c"); err != nil {
					t.Fatal(err)
				}
				if _, err := x.StopAgent("c"); err == nil {
					t.Error("stopping a stopped agent: no error")
				}
			}
			for i := range o.Agents {
				if !x.Ready(i) {
					continue
				}
				rounds[i]++
				conv := x.BeginTurn(i, convs[i], rounds[i])
				wo := o
				var evs []event.Event
				wo.Bus = event.NewBus(nil)
				wo.Bus.Subscribe(event.SinkFunc(func(e event.Event) { evs = append(evs, e) }))
				out := RunTurn(context.Background(), wo, x.Ops(), i, conv)
				for _, e := range evs {
					if !Decided(e.Payload) {
						bus.Publish(e.Payload)
					}
				}
				convs[i] = x.Finish(i, out)
			}
			if resume && !x.Ended() {
				var err error
				if x, err = ResumeCoordinator(co, x.State()); err != nil {
					t.Fatal(err)
				}
				if steps >= 1 && !x.Dead(2) {
					t.Fatal("the resumed coordinator forgot that c was stopped")
				}
			}
		}
		res := x.Present(context.Background(), func(ctx context.Context, i int, system, user string) (string, string, error) {
			text, cut, u, cost, err := RunPresentation(ctx, o, x.Ops(), i, system, user)
			x.Account(i, u, cost)
			return text, cut, err
		})
		if err := x.AnswerNow(); !errors.Is(err, ErrNotRunning) {
			t.Errorf("Answer Now after the end: %v", err)
		}
		return res, log
	}
	want, wantLog := run(false)
	got, gotLog := run(true)
	if got.Winner != want.Winner || got.FinalAnswer != want.FinalAnswer || got.Usage != want.Usage {
		t.Errorf("resumed: winner %q answer %q usage %+v; kept: %q %q %+v", got.Winner, got.FinalAnswer, got.Usage, want.Winner, want.FinalAnswer, want.Usage)
	}
	for _, typ := range []string{"human_input", "agent_dead", "answer_submitted", "session_started"} {
		if g, w := count(gotLog, typ), count(wantLog, typ); g != w || w == 0 {
			t.Errorf("%d %s events resumed, %d kept", g, typ, w)
		}
	}
}

func TestResumeCoordinator_RefusesAStateOfAnotherTeam(t *testing.T) {
	o := Options{Agents: []Agent{{ID: "a"}, {ID: "b"}}}
	if _, err := ResumeCoordinator(o, CoordinatorState{Given: []int{0}}); err == nil {
		t.Error("a state for 1 agent taken up by a team of 2")
	}
	if _, err := ResumeCoordinator(o, CoordinatorState{Given: []int{3, 0}, Messages: []string{"x"}}); err == nil {
		t.Error("3 of 1 messages read")
	}
}
