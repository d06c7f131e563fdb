package engine

import (
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

func sawHumanInput(req provider.Request, text string) bool {
	for _, m := range req.Messages {
		if strings.Contains(m.Content, "[Human Input]: "+text) {
			return true
		}
	}
	return false
}

// A message sent while agent 1 deliberates reaches its next call; stopping agent 2, which
// never answers, leaves agent 1's vote as the consensus.
func TestSteering_MessageAndStopAgent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := NewSteering()
		if err := st.Send("too early"); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("send before the session: %v", err)
		}
		first := &fake{next: func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StagePresentation:
				return step{text: "Paris, said plainly."}
			case n == 1:
				return step{delay: time.Second, text: "Paris.", calls: answer("Paris.").calls}
			case sawHumanInput(req, "Answer plainly."):
				return vote("agent1", "mine")
			}
			return step{hang: true}
		}}
		stuck := &fake{next: func(int, provider.Request) step { return step{hang: true} }}
		type out struct {
			res Result
			evs []event.Event
		}
		done := make(chan out, 1)
		go func() {
			res, evs := run(t, t.Context(), Options{Agents: agents(first, stuck), Steering: st})
			done <- out{res, evs}
		}()
		synctest.Wait() // both agents are in their first call
		if err := st.Send("Answer plainly."); err != nil {
			t.Fatal(err)
		}
		if err := st.Send("  "); err == nil {
			t.Error("an empty message was accepted")
		}
		time.Sleep(2 * time.Second)
		synctest.Wait() // agent 1 voted; agent 2 still deliberates
		if err := st.StopAgent("nobody"); err == nil {
			t.Error("stopped an agent that does not exist")
		}
		if err := st.StopAgent("a2"); err != nil {
			t.Fatal(err)
		}
		o := <-done
		if o.res.ExitCode != 0 || o.res.Winner != "a1" || o.res.FinalAnswer != "Paris, said plainly." {
			t.Fatalf("result %+v", o.res)
		}
		in := ofType[event.HumanInput](o.evs)
		if len(in) != 1 || in[0].Agent != "a1" || in[0].ID != 1 || in[0].Text != "Answer plainly." {
			t.Fatalf("human input events %+v", in)
		}
		dead := ofType[event.AgentDead](o.evs)
		if len(dead) != 1 || dead[0].Agent != "a2" || !strings.Contains(dead[0].Reason, "stopped") {
			t.Fatalf("agent dead %+v", dead)
		}
		if e := ofType[event.CoordinationEnded](o.evs); len(e) != 1 || e[0].Reason != event.EndConsensus {
			t.Fatalf("coordination ended %+v", e)
		}
		if err := st.StopAgent("a1"); !errors.Is(err, ErrNotRunning) {
			t.Errorf("stop after the end: %v", err)
		}
	})
}

// Answer Now ends coordination while agents deliberate: the best answer so far is presented
// and the session completes (exit 0).
func TestSteering_AnswerNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := NewSteering()
		first := &fake{next: func(n int, req provider.Request) step {
			switch {
			case req.Stage == provider.StagePresentation:
				return step{text: "Paris (presented)."}
			case n == 1:
				return step{delay: time.Second, calls: answer("Paris.").calls}
			}
			return step{hang: true}
		}}
		stuck := &fake{next: func(int, provider.Request) step { return step{hang: true} }}
		done := make(chan Result, 1)
		var evs []event.Event
		go func() {
			var res Result
			res, evs = run(t, t.Context(), Options{Agents: agents(first, stuck), Steering: st})
			done <- res
		}()
		synctest.Wait()
		if err := st.AnswerNow(); err == nil || errors.Is(err, ErrNotRunning) {
			t.Fatalf("answer now with no answer: %v", err)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if err := st.AnswerNow(); err != nil {
			t.Fatal(err)
		}
		res := <-done
		if res.ExitCode != 0 || res.Status != event.StatusCompleted || res.Winner != "a1" || res.FinalAnswer != "Paris (presented)." {
			t.Fatalf("result %+v", res)
		}
		if e := ofType[event.CoordinationEnded](evs); len(e) != 1 || e[0].Reason != event.EndAnswerNow {
			t.Fatalf("coordination ended %+v", e)
		}
	})
}
