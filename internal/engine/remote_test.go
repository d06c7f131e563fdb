package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
)

// drive runs a session the way a remote driver does (internal/durable): the coordinator in one
// place, each turn on a replica rebuilt from the ops, one turn at a time in agent order.
func drive(t *testing.T, o Options, scripts []config.Script) (Result, []event.Event) {
	t.Helper()
	_, res, log := driveCoordinator(t, o)
	return res, log
}

// driveCoordinator is drive, returning the coordinator too.
func driveCoordinator(t *testing.T, o Options) (*Coordinator, Result, []event.Event) {
	t.Helper()
	var log []event.Event
	bus := event.NewBus(nil)
	bus.Subscribe(event.SinkFunc(func(e event.Event) { log = append(log, e) }))
	co := o
	co.Bus = bus
	// The coordinator has the agents as the config names them: providers and tools are the
	// replicas'.
	co.Agents = make([]Agent, len(o.Agents))
	for i, a := range o.Agents {
		co.Agents[i] = Agent{ID: a.ID, Backend: a.Backend, Model: a.Model, System: a.System, Subtask: a.Subtask}
	}
	// The orchestrator's subagents run where the driver says, as the workflow has them run
	// on the worker holding the session.
	co.Subagent = nil
	if o.Recall != nil || o.Remember != nil {
		// The memory store is the replicas' (remote_memory.go).
		co.RemoteMemory, co.Recall, co.Remember = true, nil, nil
	}
	x := NewCoordinator(co)
	if o.Subagent != nil {
		x.SubagentOn(o.Subagent)
	}
	x.Start()
	// A replica's events reach the log as a driver forwards them: the decisions are the
	// coordinator's to publish.
	replicaBus := func() (*event.Bus, func()) {
		var evs []event.Event
		b := event.NewBus(nil)
		b.Subscribe(event.SinkFunc(func(e event.Event) { evs = append(evs, e) }))
		return b, func() {
			for _, e := range evs {
				if !Decided(e.Payload) {
					bus.Publish(e.Payload)
				}
			}
		}
	}
	if x.NeedsPrepare() {
		wo := o
		var forward func()
		wo.Bus, forward = replicaBus()
		p, u, cost := RunPrepare(context.Background(), wo, x.Ops())
		forward()
		x.Account(0, u, cost)
		x.Prepare(p)
	}
	x.VerifyOn(func(ctx context.Context, i int, user string) (string, error) {
		wo := o
		var forward func()
		wo.Bus, forward = replicaBus()
		reply, u, cost, err := RunVerify(ctx, wo, x.Ops(), i, user)
		forward()
		x.Account(i, u, cost)
		return reply, err
	})
	if co.RemoteMemory {
		x.RememberOn(func(ctx context.Context, i int, r Result) {
			wo := o
			var forward func()
			wo.Bus, forward = replicaBus()
			// What the replica remembers from is what the log says each agent answered last.
			logged := map[string]string{}
			for _, a := range ofType[event.AnswerSubmitted](log) {
				logged[a.Agent] = a.Content
			}
			if got := LatestAnswers(o, x.Ops()); !maps.Equal(got, logged) {
				t.Errorf("the latest answers are %v, the log's %v", got, logged)
			}
			u, cost := RunRemember(ctx, wo, x.Ops(), r)
			forward()
			x.Account(i, u, cost)
		})
	}
	x.EvaluateOn(func(ctx context.Context, i int, answer string) Evaluated {
		wo := o
		var forward func()
		wo.Bus, forward = replicaBus()
		e, u, cost, err := RunEvaluation(ctx, wo, x.Ops(), i, answer)
		forward()
		x.Account(i, u, cost)
		if err != nil {
			t.Fatal(err)
		}
		return viaJSON(t, e)
	})
	for attempt := 1; ; attempt++ {
		if attempt > 10 {
			t.Fatal("no end after 10 attempts")
		}
		res := coordinateDriven(t, x, o, replicaBus)
		if !x.Restarting() {
			return x, res, log
		}
	}
}

// coordinateDriven runs one attempt's coordination and its presentation as drive does.
func coordinateDriven(t *testing.T, x *Coordinator, o Options, replicaBus func() (*event.Bus, func())) Result {
	t.Helper()
	// Each attempt's conversations start from nothing, as Run's new session's do.
	convs := make([]Conversation, len(o.Agents))
	rounds := make([]int, len(o.Agents))
	for steps := 0; !x.Ended(); steps++ {
		if steps > 100 {
			t.Fatal("no end after 100 turns")
		}
		ran := false
		for i := range o.Agents {
			if !x.Ready(i) || !x.BeforeTurn(context.Background(), i) {
				continue
			}
			ran = true
			rounds[i]++
			conv := x.BeginTurn(i, convs[i], rounds[i])
			wo := o
			var forward func()
			wo.Bus, forward = replicaBus()
			wo.PeerContext = func(k int) []provider.Message { return convs[k].Msgs[:convs[k].Sent] }
			// Conversations and outcomes travel as JSON between a driver and its workers.
			out := RunTurn(context.Background(), wo, viaJSON(t, x.Ops()), i, viaJSON(t, conv))
			out = viaJSON(t, out)
			forward()
			convs[i] = x.Finish(i, out)
		}
		if !ran {
			t.Fatal("no agent ready and coordination not over")
		}
	}
	return x.Present(context.Background(), func(ctx context.Context, i int, system, user string) (string, string, error) {
		wo := o
		var forward func()
		wo.Bus, forward = replicaBus()
		text, cut, u, cost, err := RunPresentation(ctx, wo, x.Ops(), i, system, user)
		forward()
		x.Account(i, u, cost)
		return text, cut, err
	})
}

func TestCoordinator_SameWinnerAsRun(t *testing.T) {
	tests := []struct {
		name    string
		scripts []config.Script
	}{
		{"one answer each", []config.Script{
			{Answers: []string{"Paris."}, Vote: "longest"},
			{Answers: []string{"The capital is Paris."}, Vote: "longest"},
			{Answers: []string{"The capital of France is Paris, on the Seine."}, Vote: "longest"},
		}},
		{"an improved answer invalidates votes", []config.Script{
			{Answers: []string{"Paris.", "Paris is the capital of France, on the Seine, since the Middle Ages."}, ImproveAfter: 3, Vote: "longest"},
			{Answers: []string{"The capital is Paris."}, Vote: "longest"},
			{Answers: []string{"France's capital: Paris."}, Vote: "longest"},
		}},
		{"a bad vote is retried", []config.Script{
			{Answers: []string{"Paris."}, Vote: "longest", Faults: []config.Fault{{Kind: config.FaultBadVote, Call: 2}}},
			{Answers: []string{"The capital is Paris, France."}, Vote: "longest"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mk := func() Options {
				o := Options{Question: "What is the capital of France?"}
				for k, s := range tt.scripts {
					id := string(rune('a' + k))
					o.Agents = append(o.Agents, Agent{ID: id, Backend: "scripted", Model: "s", Provider: scripted.New(s, "s")})
				}
				return o
			}
			lo := mk()
			var localLog []event.Event
			lo.Bus = event.NewBus(nil)
			lo.Bus.Subscribe(event.SinkFunc(func(e event.Event) { localLog = append(localLog, e) }))
			local := Run(context.Background(), lo)
			res, log := drive(t, mk(), tt.scripts)
			if res.ExitCode != 0 || res.Winner != local.Winner || res.FinalAnswer != local.FinalAnswer {
				t.Errorf("driven: exit %d winner %q answer %q; Run: exit %d winner %q answer %q (err %v)",
					res.ExitCode, res.Winner, res.FinalAnswer, local.ExitCode, local.Winner, local.FinalAnswer, res.Err)
			}
			if _, ok := log[0].Payload.(event.SessionStarted); !ok {
				t.Errorf("first event %T", log[0].Payload)
			}
			if _, ok := log[len(log)-1].Payload.(event.SessionEnded); !ok {
				t.Errorf("last event %T", log[len(log)-1].Payload)
			}
			// Each decision is published once, by the coordinator, not again by the replica
			// that ran the turn (votes may differ in number from Run's: its agents race).
			for _, typ := range []string{"final_answer", "coordination_ended"} {
				if got, want := count(log, typ), count(localLog, typ); got != want {
					t.Errorf("%d %s events, Run has %d", got, typ, want)
				}
			}
			// The replica's usage names the coordination round of its turn, as Run's does.
			for _, e := range log {
				if u, ok := e.Payload.(event.UsageReported); ok && !u.Presentation && u.Round < 1 {
					t.Errorf("usage of %s reported in round %d", u.Agent, u.Round)
				}
			}
			seen := map[string]bool{}
			for _, e := range log {
				key := ""
				switch p := e.Payload.(type) {
				case event.AnswerSubmitted:
					key = "answer " + p.Label
				case event.VoteCast:
					key = fmt.Sprintf("vote %s %d", p.Agent, p.Version)
				default:
					continue
				}
				if seen[key] {
					t.Errorf("%s published twice", key)
				}
				seen[key] = true
			}
			if count(log, "answer_submitted") == 0 || count(log, "vote_cast") == 0 {
				t.Error("no answer or vote published")
			}
		})
	}
}

func viaJSON[T any](t *testing.T, v T) T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func count(log []event.Event, typ string) int {
	n := 0
	for _, e := range log {
		if e.Payload.Type() == typ {
			n++
		}
	}
	return n
}
