package eval

import (
	"context"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/provider"
)

// counting is a provider that records how many of its calls, and its siblings', are in
// flight at once.
type counting struct {
	p    provider.Provider
	n    *atomic.Int64
	most *atomic.Int64
	mu   *sync.Mutex
}

func (c counting) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		c.mu.Lock()
		if n := c.n.Add(1); n > c.most.Load() {
			c.most.Store(n)
		}
		c.mu.Unlock()
		defer c.n.Add(-1)
		for ch, err := range c.p.Stream(ctx, req) {
			if !yield(ch, err) {
				return
			}
		}
	}
}

// instant is a provider whose call ends at once.
type instant struct{}

func (instant) Stream(context.Context, provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) { yield(provider.Done{StopReason: "stop"}, nil) }
}

func drain(ctx context.Context, p provider.Provider) error {
	for _, err := range p.Stream(ctx, provider.Request{}) {
		if err != nil {
			return err
		}
	}
	return nil
}

// TestLimiter_RPM: at 120 calls a minute, five calls started at once begin 0.5 s apart.
func TestLimiter_RPM(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls := newLimiters(Limits{RPM: map[string]int{"openai": 120}})
		p := ls.wrap("openai", instant{})
		start := time.Now()
		var mu sync.Mutex
		var at []time.Duration
		var wg sync.WaitGroup
		for range 5 {
			wg.Go(func() {
				if err := drain(t.Context(), p); err != nil {
					t.Error(err)
				}
				mu.Lock()
				at = append(at, time.Since(start))
				mu.Unlock()
			})
		}
		wg.Wait()
		if got := at[len(at)-1]; got != 2*time.Second {
			t.Errorf("the fifth call started after %v, want 2s", got)
		}
		// Another backend type is not limited.
		if ls.wrap("claude", instant{}) != (instant{}) {
			t.Error("claude was wrapped without a limit")
		}
	})
}

// TestLimiter_Cancel: a call waiting for its turn gives up when its context ends.
func TestLimiter_Cancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls := newLimiters(Limits{RPM: map[string]int{"openai": 1}, Concurrent: map[string]int{"openai": 1}})
		p := ls.wrap("openai", instant{})
		if err := drain(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := drain(ctx, p); err != context.DeadlineExceeded {
			t.Errorf("err = %v, want the deadline (the next turn is a minute away)", err)
		}
		// The slot it held while waiting is free again, and so is the turn it had: the next
		// call starts a minute after the first, not two.
		start := time.Now()
		if err := drain(t.Context(), p); err != nil {
			t.Errorf("third call: %v", err)
		}
		if waited := time.Since(start); waited != 59*time.Second {
			t.Errorf("third call waited %v, want 59s (a minute after the first call)", waited)
		}
	})
}

func TestParseLimit(t *testing.T) {
	m := map[string]int{}
	if err := ParseLimit(m, "--rate-limit", "openai=60"); err != nil || m["openai"] != 60 {
		t.Errorf("openai=60: %v, %v", m, err)
	}
	for _, bad := range []struct{ in, want string }{
		{"openai", "want TYPE=N"},
		{"=5", "want TYPE=N"},
		{"nosuch=5", `unknown backend type "nosuch"`},
		{"openai=0", "N must be a whole number above 0"},
		{"openai=x", "N must be a whole number above 0"},
	} {
		err := ParseLimit(m, "--rate-limit", bad.in)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %q", bad.in, err, bad.want)
		}
	}
	l := Limits{RPM: map[string]int{"openai": 60, "claude": 50}, Concurrent: map[string]int{"openai": 4}}
	if got, want := l.String(), "claude 50/min, openai 60/min, openai 4 at once"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
