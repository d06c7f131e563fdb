package engine

import (
	"context"
	"fmt"
	"iter"
	"math"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
)

// backendCut is a backend that stops at its own bound (Request.MaxResponseBytes), as every
// network backend does with one endless tool call: some text, then ErrResponseTooLarge.
type backendCut struct {
	after *fake
	req   provider.Request // the first call's request
	n     int
}

func (b *backendCut) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	if b.n++; b.n > 1 || req.Stage == provider.StagePresentation {
		return b.after.Stream(ctx, req)
	}
	b.req = req
	return func(yield func(provider.Chunk, error) bool) {
		if !yield(provider.TextDelta{Text: "Let me write the file."}, nil) {
			return
		}
		yield(nil, &provider.Error{Provider: "test", Err: fmt.Errorf("%w: it exceeded %d bytes; stopped reading",
			provider.ErrResponseTooLarge, req.MaxResponseBytes)})
	}
}

// A call the engine cuts off never reports its usage, yet the provider bills it: its tokens
// must still count, estimated and marked so, towards the cost and max_cost_usd.
func TestRun_CutCallsAreBilledByEstimate(t *testing.T) {
	const backend, model = "openai", "gpt-4o"
	price := func(b, m string, u provider.Usage) float64 { return usage.Cost(b, m, u) }
	for _, tc := range []struct {
		name    string
		model   func(after *fake) provider.Provider
		minOut  int64 // output tokens the estimate must reach
		checkFn func(t *testing.T, p provider.Provider)
	}{
		{"the engine's cap", func(after *fake) provider.Provider { return &flood{textChunks: 10_000, after: after} },
			// 4 chunks of 1 KiB read before 2,000 characters were passed: 4,096 bytes, 1,024 tokens.
			1024, nil},
		{"the backend's cap", func(after *fake) provider.Provider { return &backendCut{after: after} },
			// The backend read its whole bound, 8 bytes for each of the 2,000 characters.
			16_000 / 4, func(t *testing.T, p provider.Provider) {
				if got := p.(*backendCut).req.MaxResponseBytes; got != 16_000 {
					t.Errorf("the backend was given a bound of %d bytes, want 16000 (8 x max_response_chars)", got)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cut := tc.model(answerThenVote("Paris, France.", "agent1"))
			a := agents(answerThenVote("Paris.", "agent1"), cut)
			for i := range a {
				a[i].Backend, a[i].Model = backend, model
			}
			res, evs := run(t, t.Context(), Options{Agents: a, Price: price,
				Orchestrator: config.Orchestrator{MaxResponseChars: 2000, MaxToolCallsPerResponse: 4, MaxAnswerChars: 1000}})
			if res.ExitCode != 0 || res.Winner != "a1" {
				t.Fatalf("result %+v", res)
			}
			if errs := ofType[event.AgentError](evs); len(errs) != 0 {
				t.Errorf("a cut is not a failure: %+v", errs)
			}
			var first *event.UsageReported
			for _, u := range ofType[event.UsageReported](evs) {
				if u.Agent == "a2" {
					first = &u
					break
				}
			}
			if first == nil {
				t.Fatal("no usage reported for the cut-off call")
			}
			u := first.Usage
			if !u.Estimated || u.InputTokens <= 0 || u.OutputTokens < tc.minOut || u.OutputTokens > 2*tc.minOut {
				t.Errorf("usage of the cut-off call: %+v, want estimated, input > 0, output in [%d, %d]", u, tc.minOut, 2*tc.minOut)
			}
			if want := usage.Cost(backend, model, u); first.CostUSD <= 0 || math.Abs(first.CostUSD-want) > 1e-12 {
				t.Errorf("cost %v, want %v for %+v", first.CostUSD, want, u)
			}
			if !res.Usage.Estimated || res.CostUSD < first.CostUSD {
				t.Errorf("session totals %+v, $%v do not carry the estimate", res.Usage, res.CostUSD)
			}
			if tc.checkFn != nil {
				tc.checkFn(t, cut)
			}
			// Reported calls stay as reported.
			for _, r := range ofType[event.UsageReported](evs) {
				if r.Agent == "a1" && r.Usage.Estimated {
					t.Errorf("a reported usage was marked estimated: %+v", r)
				}
			}
		})
	}
}

// stallThenAfter streams a little text, then waits for its context like a model that stops
// answering; later calls go to after.
type stallThenAfter struct {
	after *fake
	n     int
}

func (b *stallThenAfter) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	if b.n++; b.n > 1 || req.Stage == provider.StagePresentation {
		return b.after.Stream(ctx, req)
	}
	return func(yield func(provider.Chunk, error) bool) {
		if !yield(provider.TextDelta{Text: "Thinking about it..."}, nil) {
			return
		}
		<-ctx.Done()
		yield(nil, ctx.Err())
	}
}

// A call cut by agent_timeout_seconds reports no usage either, but was sent and billed.
func TestRun_TimedOutCallsAreBilledByEstimate(t *testing.T) {
	slow := &stallThenAfter{after: answerThenVote("Paris, France.", "agent1")}
	a := agents(answerThenVote("Paris.", "agent1"), slow)
	for i := range a {
		a[i].Backend, a[i].Model = "openai", "gpt-4o"
	}
	res, evs := run(t, t.Context(), Options{Agents: a,
		Price:    func(b, m string, u provider.Usage) float64 { return usage.Cost(b, m, u) },
		Timeouts: config.Timeouts{Agent: 300 * time.Millisecond}})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	var first *event.UsageReported
	for _, u := range ofType[event.UsageReported](evs) {
		if u.Agent == "a2" {
			first = &u
			break
		}
	}
	if first == nil || !first.Usage.Estimated || first.Usage.InputTokens <= 0 || first.Usage.OutputTokens != 5 || first.CostUSD <= 0 {
		t.Fatalf("usage of the timed-out call: %+v, want estimated input > 0, 5 output tokens (20 bytes), a cost", first)
	}
	if errs := ofType[event.AgentError](evs); len(errs) == 0 {
		t.Error("the timeout was not reported as the turn's error")
	}
}

// A call still running when the session ends it (orchestrator_timeout_seconds, max_cost_usd
// spent) reports no usage, but was sent and is billed: it counts, estimated, in the agent's
// round (issue: new-user review, minor 2).
func TestRun_CallsCutBySessionEndAreBilledByEstimate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      Options
		reason string
	}{
		{"orchestrator timeout", Options{Timeouts: config.Timeouts{Orchestrator: 300 * time.Millisecond}}, event.EndTimeout},
		{"cost budget", Options{Orchestrator: config.Orchestrator{MaxCostUSD: 0.5}}, event.EndBudget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slow := &stallThenAfter{after: answerThenVote("Paris, France.", "agent1")}
			o := tc.o
			// a1 answers once a2's call is under way.
			fast := answerThenVote("Paris.", "agent1")
			next := fast.next
			fast.next = func(n int, req provider.Request) step {
				st := next(n, req)
				st.delay = 100 * time.Millisecond
				return st
			}
			o.Agents = agents(fast, slow)
			o.Price = func(string, string, provider.Usage) float64 { return 1 }
			res, evs := run(t, t.Context(), o)
			if res.EndReason != tc.reason {
				t.Fatalf("ended by %q, want %q: %+v", res.EndReason, tc.reason, res)
			}
			var cut *event.UsageReported
			for _, u := range ofType[event.UsageReported](evs) {
				if u.Agent == "a2" {
					cut = &u
				}
			}
			if cut == nil || !cut.Usage.Estimated || cut.Usage.InputTokens <= 0 || cut.Usage.OutputTokens != 5 || cut.Round != 1 || cut.CostUSD != 1 {
				t.Fatalf("usage of the cut-off call: %+v, want estimated input > 0, 5 output tokens (20 bytes), round 1, $1", cut)
			}
			if !res.Usage.Estimated {
				t.Errorf("session usage %+v is not marked estimated", res.Usage)
			}
		})
	}
}
