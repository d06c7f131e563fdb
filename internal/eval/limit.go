package eval

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// Limits cap the model calls of a whole eval run per backend type (openai, claude, ...),
// across every item and agent: items run side by side (--concurrency) share one provider's
// rate limit. A call waits for its turn before it starts; the wait counts towards the agent's
// timeouts like any slow call.
type Limits struct {
	// RPM is the most calls a minute a backend type may start. Calls are spaced evenly,
	// 60/RPM seconds apart, so a burst never trips a per-minute limit.
	RPM map[string]int
	// Concurrent is the most calls of a backend type in flight at once.
	Concurrent map[string]int
}

// ParseLimit reads a TYPE=N command-line value (openai=500) into m, checking that TYPE is a
// backend type and N a positive whole number.
func ParseLimit(m map[string]int, flag, value string) error {
	name, num, ok := strings.Cut(value, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("%s %q: want TYPE=N, such as openai=60", flag, value)
	}
	if _, known := config.BackendTypes[name]; !known {
		return fmt.Errorf("%s %q: unknown backend type %q (want one of %s)", flag, value, name, strings.Join(config.BackendTypeNames(), ", "))
	}
	n, err := strconv.Atoi(strings.TrimSpace(num))
	if err != nil || n <= 0 {
		return fmt.Errorf("%s %q: N must be a whole number above 0", flag, value)
	}
	m[name] = n
	return nil
}

// String is the limits as the summary shows them: "openai 60/min, claude 4 at once".
func (l Limits) String() string {
	var parts []string
	for _, t := range sortedKeys(l.RPM) {
		parts = append(parts, fmt.Sprintf("%s %d/min", t, l.RPM[t]))
	}
	for _, t := range sortedKeys(l.Concurrent) {
		parts = append(parts, fmt.Sprintf("%s %d at once", t, l.Concurrent[t]))
	}
	return strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// limiter is one backend type's rate and concurrency limit; safe for concurrent use.
type limiter struct {
	interval time.Duration // 0: no rate limit
	slots    chan struct{} // nil: no concurrency limit

	mu   sync.Mutex
	next time.Time // when the next call may start
}

// limiters holds one limiter per limited backend type.
type limiters map[string]*limiter

func newLimiters(l Limits) limiters {
	out := limiters{}
	get := func(t string) *limiter {
		if out[t] == nil {
			out[t] = &limiter{}
		}
		return out[t]
	}
	for t, rpm := range l.RPM {
		get(t).interval = time.Minute / time.Duration(rpm)
	}
	for t, n := range l.Concurrent {
		get(t).slots = make(chan struct{}, n)
	}
	return out
}

// wrap limits p when its backend type has a limit.
func (ls limiters) wrap(backend string, p provider.Provider) provider.Provider {
	if l := ls[backend]; l != nil {
		return limited{p: p, l: l}
	}
	return p
}

// acquire waits for a slot and the call's turn; release gives the slot back.
func (l *limiter) acquire(ctx context.Context) (release func(), err error) {
	release = func() {}
	if l.slots != nil {
		select {
		case l.slots <- struct{}{}:
			release = func() { <-l.slots }
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if l.interval > 0 {
		l.mu.Lock()
		now := time.Now()
		at := l.next
		if at.Before(now) {
			at = now
		}
		l.next = at.Add(l.interval)
		l.mu.Unlock()
		if wait := at.Sub(now); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				l.mu.Lock()
				if l.next.Equal(at.Add(l.interval)) { // no later call took a turn: give this one back
					l.next = at
				}
				l.mu.Unlock()
				release()
				return nil, ctx.Err()
			}
		}
	}
	return release, nil
}

// limited is a provider whose calls go through a limiter.
type limited struct {
	p provider.Provider
	l *limiter
}

// Stream waits for the limiter on the first pull, as the call itself starts then, and holds
// its slot until the stream ends.
func (p limited) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		release, err := p.l.acquire(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		defer release()
		for c, err := range p.p.Stream(ctx, req) {
			if !yield(c, err) {
				return
			}
		}
	}
}
