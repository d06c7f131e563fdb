package media

import (
	"context"
	"sync"

	"massgen/internal/provider"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

// A media tool asks other models (a vision model reads an image, a transcription model hears a
// recording): those calls are paid for like the agent's own. Each tool call carries a meter in
// its context; the provider calls add what they were billed, and the tool's result reports the
// sum in tool.Result.Spent, which the engine adds to the agent's cost.

type meterKey struct{}

type meter struct {
	mu    sync.Mutex
	spent provider.Usage
}

// metered wraps t so that what its provider calls were billed reaches its result.
func metered(t tool.Tool) tool.Tool {
	run := t.Run
	t.Run = func(ctx context.Context, args string) tool.Result {
		m := &meter{}
		res := run(context.WithValue(ctx, meterKey{}, m), args)
		m.mu.Lock()
		defer m.mu.Unlock()
		res.Spent = res.Spent.Add(m.spent)
		return res
	}
	return t
}

// bill records one provider call of the tool running in ctx: u priced for backend's model, or
// marked unknown when the price list has no such model. A call whose usage the provider did
// not report is estimated from the sizes (est) and marked so.
func bill(ctx context.Context, backend, model string, u provider.Usage, est provider.Usage) {
	m, _ := ctx.Value(meterKey{}).(*meter)
	if m == nil {
		return
	}
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		u = est
		u.Estimated = true
	}
	spent := provider.Usage{Estimated: u.Estimated}
	if usage.Known(backend, model) {
		spent.CostUSD = usage.Cost(backend, model, u)
	} else {
		spent.Unknown = true
	}
	m.mu.Lock()
	m.spent = m.spent.Add(spent)
	m.mu.Unlock()
}

// billUnpriced records a paid call of the tool running in ctx whose price massgen cannot tell.
func billUnpriced(ctx context.Context) {
	if m, _ := ctx.Value(meterKey{}).(*meter); m != nil {
		m.mu.Lock()
		m.spent.Unknown = true
		m.mu.Unlock()
	}
}
