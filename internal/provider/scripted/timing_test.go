package scripted

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/config"
	"massgen/internal/provider"
)

const ms = time.Millisecond

func TestProvider_LatencyAndChunkDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := New(config.Script{Answers: []string{"a b c"}, Thinking: "hm", Latency: 100 * ms, ChunkDelay: 10 * ms}, "m")
		start := time.Now()
		var at []time.Duration
		for _, err := range p.Stream(t.Context(), coordReq()) {
			if err != nil {
				t.Fatal(err)
			}
			at = append(at, time.Since(start))
		}
		// reasoning, 3 words, tool call, usage, done
		want := []time.Duration{100 * ms, 110 * ms, 120 * ms, 130 * ms, 140 * ms, 140 * ms, 140 * ms}
		if len(at) != len(want) {
			t.Fatalf("chunks at %v, want %v", at, want)
		}
		for i := range want {
			if at[i] != want[i] {
				t.Errorf("chunk %d at %v, want %v", i, at[i], want[i])
			}
		}
	})
}

func TestProvider_Cancellation(t *testing.T) {
	tests := []struct {
		name      string
		script    config.Script
		cancelAt  time.Duration // 0: deadline instead
		deadline  time.Duration
		wantErr   error
		wantAt    time.Duration
		wantKinds int // chunks before the error
	}{
		{
			name:     "during latency",
			script:   config.Script{Answers: []string{"a"}, Latency: time.Hour},
			cancelAt: 5 * ms, wantErr: context.Canceled, wantAt: 5 * ms,
		},
		{
			name:     "between chunks",
			script:   config.Script{Answers: []string{"a b"}, ChunkDelay: time.Hour},
			cancelAt: 5 * ms, wantErr: context.Canceled, wantAt: 5 * ms, wantKinds: 1,
		},
		{
			name:     "hang until cancelled",
			script:   config.Script{Answers: []string{"a"}, Faults: []config.Fault{{Kind: config.FaultHang}}},
			cancelAt: time.Second, wantErr: context.Canceled, wantAt: time.Second,
		},
		{
			name:     "hang until the deadline",
			script:   config.Script{Answers: []string{"a"}, Faults: []config.Fault{{Kind: config.FaultHang, Call: 1}}},
			deadline: 2 * time.Second, wantErr: context.DeadlineExceeded, wantAt: 2 * time.Second,
		},
		{
			name: "fail after the latency",
			script: config.Script{Answers: []string{"a"}, Latency: 30 * ms,
				Faults: []config.Fault{{Kind: config.FaultFail}}},
			cancelAt: time.Hour, wantErr: ErrFailure, wantAt: 30 * ms,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.deadline > 0 {
					ctx, cancel = context.WithTimeout(ctx, tt.deadline)
					defer cancel()
				} else {
					time.AfterFunc(tt.cancelAt, cancel)
				}
				p := New(tt.script, "m")
				start := time.Now()
				r := collect(t, p.Stream(ctx, coordReq()))
				if !errors.Is(r.err, tt.wantErr) {
					t.Fatalf("error %v, want %v", r.err, tt.wantErr)
				}
				if got := time.Since(start); got != tt.wantAt {
					t.Errorf("returned after %v, want %v", got, tt.wantAt)
				}
				if got := len(r.kinds) - 1; got != tt.wantKinds {
					t.Errorf("%d chunks before the error (%v), want %d", got, r.kinds, tt.wantKinds)
				}
			})
		})
	}
}

func TestProvider_AlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := collect(t, New(config.Script{Answers: []string{"a b"}}, "m").Stream(ctx, coordReq()))
	if !errors.Is(r.err, context.Canceled) || len(r.kinds) != 1 {
		t.Fatalf("chunks %v, error %v: want only context.Canceled", r.kinds, r.err)
	}
}

func TestProvider_BreakEarly(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, breakAfter := range []string{"text", "call"} {
		t.Run(breakAfter, func(t *testing.T) {
			p := New(config.Script{Answers: []string{"one two three"}, ChunkDelay: ms}, "m")
			n := 0
			for c, err := range p.Stream(t.Context(), coordReq()) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				if _, ok := c.(provider.ToolCallChunk); ok || breakAfter == "text" {
					break
				}
			}
			if n == 0 {
				t.Fatal("no chunk")
			}
			// A response the caller did not take submitted nothing: the next call answers again.
			if got := summary(t, run(t, p, coordReq(shown{"agent2", "x"}))); got != "new_answer:one two three" {
				t.Errorf("next call: %q", got)
			}
		})
	}
	// The same in a bubble, with delays that would block for an hour.
	synctest.Test(t, func(t *testing.T) {
		p := New(config.Script{Answers: []string{"one two"}, ChunkDelay: time.Hour}, "m")
		for range p.Stream(t.Context(), coordReq()) {
			break
		}
	})
}
