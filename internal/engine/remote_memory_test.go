package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
)

// Persistent memory under a remote driver: what the replicas recall reaches every agent's
// system prompt and what they remember is what Run remembers, paid for in the session's cost.

// fakeMemory is a store of remembered final answers, recalled for every agent.
type fakeMemory struct {
	mu    sync.Mutex
	facts []string
}

func (f *fakeMemory) on(o *Options) {
	n := len(o.Agents)
	o.Recall = func(_ context.Context, pay func(int, provider.Usage)) []string {
		f.mu.Lock()
		defer f.mu.Unlock()
		out := make([]string, n)
		for i := range out {
			if len(f.facts) > 0 {
				out[i] = "## Relevant memories\n- " + strings.Join(f.facts, "\n- ")
				pay(i, provider.Usage{InputTokens: 7})
			}
		}
		return out
	}
	o.Remember = func(_ context.Context, r Result, pay func(int, provider.Usage)) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.facts = append(f.facts, r.Winner+" said "+r.FinalAnswer)
		pay(1, provider.Usage{InputTokens: 5, OutputTokens: 3})
	}
}

func TestCoordinator_MemoryAsRun(t *testing.T) {
	mk := func(answer string) Options {
		sa := func(a string) provider.Provider { return scripted.New(config.Script{Answers: []string{a}}, "m") }
		return Options{Question: "What is the capital of France?", Agents: agents(sa(answer), sa(answer+" Surely."))}
	}
	type session struct {
		res Result
		log []event.Event
	}
	// Two sessions each way: the second recalls what the first remembered.
	sessions := func(driven bool) ([]session, *fakeMemory) {
		f := &fakeMemory{}
		var out []session
		for _, answer := range []string{"Paris.", "It is Paris."} {
			o := mk(answer)
			f.on(&o)
			var res Result
			var log []event.Event
			if driven {
				res, log = drive(t, o, nil)
			} else {
				o.Bus = event.NewBus(nil)
				o.Bus.Subscribe(event.SinkFunc(func(e event.Event) { log = append(log, e) }))
				res = Run(context.Background(), o)
			}
			out = append(out, session{res, log})
		}
		return out, f
	}
	local, lf := sessions(false)
	driven, df := sessions(true)
	if !cmp.Equal(df.facts, lf.facts) || len(df.facts) != 2 {
		t.Fatalf("remembered %q, Run remembered %q", df.facts, lf.facts)
	}
	// The memory calls' usage, as the log reports it (the turns' differ: the driver runs
	// them one at a time).
	paid := func(log []event.Event) []string {
		var out []string
		for _, u := range ofType[event.UsageReported](log) {
			if u.Usage == (provider.Usage{InputTokens: 7}) || u.Usage == (provider.Usage{InputTokens: 5, OutputTokens: 3}) {
				out = append(out, fmt.Sprintf("%s %d/%d presentation=%v", u.Agent, u.Usage.InputTokens, u.Usage.OutputTokens, u.Presentation))
			}
		}
		return out
	}
	for k := range local {
		l, d := local[k], driven[k]
		if d.res.ExitCode != 0 || d.res.FinalAnswer != l.res.FinalAnswer {
			t.Errorf("session %d: driven %+v, Run %+v", k+1, d.res, l.res)
		}
		if got, want := paid(d.log), paid(l.log); !cmp.Equal(got, want) || len(want) != 1+2*k {
			t.Errorf("session %d: memory paid %q, Run paid %q", k+1, got, want)
		}
		for w, log := range [][]event.Event{l.log, d.log} {
			for _, m := range ofType[event.ModelCalled](log) {
				if m.System == "" {
					continue // a call that continues the conversation: its system was logged before
				}
				if has := strings.Contains(m.System, lf.facts[0]); has != (k == 1) {
					t.Errorf("session %d (driven %v): %s's call (stage %s) carries the first session's memory: %v", k+1, w == 1, m.Agent, m.Stage, has)
				}
			}
		}
	}
}

func TestCoordinator_RecallFailedIsReported(t *testing.T) {
	sa := func() provider.Provider { return scripted.New(config.Script{Answers: []string{"Paris."}}, "m") }
	var log []event.Event
	bus := event.NewBus(nil)
	bus.Subscribe(event.SinkFunc(func(e event.Event) { log = append(log, e) }))
	x := NewCoordinator(Options{Question: "q", Agents: agents(sa()), Bus: bus, RemoteMemory: true})
	x.Start()
	if !x.NeedsPrepare() {
		t.Fatal("a session with remote memory needs no recall")
	}
	x.Prepare(x.PrepareFailed("no worker took the step"))
	tr := ofType[event.MemoryTrouble](log)
	if len(tr) != 1 || tr[0].Stage != "retrieve" || !strings.Contains(tr[0].Message, "no worker took the step") {
		t.Fatalf("troubles %+v, want one saying why recall did not run", tr)
	}
	if x.NeedsPrepare() || x.Ended() {
		t.Errorf("after the failed recall: needs prepare %v, ended %v", x.NeedsPrepare(), x.Ended())
	}
}
