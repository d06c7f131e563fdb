package engine

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"massgen/internal/provider"
)

// A request waits while another writes its prefix, until that call is over or for at most
// maxPrefixWait; other prefixes, and requests with none, never wait.
func TestPrefixGate_HoldsARequestWhileItsPrefixIsWritten(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release bool // the writer's call ends after a second
		waited  time.Duration
	}{
		{"until the writer's call is over", true, time.Second},
		{"at most maxPrefixWait", false, maxPrefixWait},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var g prefixGate
				done := g.enter(t.Context(), "k")
				g.enter(t.Context(), "")()
				g.enter(t.Context(), "other")()
				start := time.Now()
				var waited atomic.Int64
				var returned atomic.Bool
				go func() {
					g.enter(t.Context(), "k")()
					waited.Store(int64(time.Since(start)))
					returned.Store(true)
				}()
				synctest.Wait()
				if returned.Load() {
					t.Fatal("the request did not wait for the prefix's writer")
				}
				if tc.release {
					time.Sleep(time.Second)
					done()
				}
				time.Sleep(maxPrefixWait + time.Second)
				if got := time.Duration(waited.Load()); got != tc.waited {
					t.Errorf("waited %v, want %v", got, tc.waited)
				}
				if !tc.release {
					done()
				}
				// Once the writer is over, the prefix is cached: nobody waits for it.
				g.enter(t.Context(), "k")()
			})
		})
	}
}

func TestPrefixKey_TheSharedPrefixOfALongStableMessage(t *testing.T) {
	long := strings.Repeat("answers ", 600) // 4,800 bytes: 1,200 tokens
	req := func(model, system, stable, tail string) provider.Request {
		msgs := []provider.Message{{Role: provider.RoleUser, Content: stable, Stable: true}}
		if tail != "" {
			msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: tail})
		}
		return provider.Request{Model: model, System: system, Messages: msgs}
	}
	base := prefixKey("claude", req("m", "sys", long, "Your own answer is agent1."))
	if base == "" {
		t.Fatal("no key for a long stable prefix")
	}
	for _, tc := range []struct {
		name    string
		backend string
		req     provider.Request
		same    bool
	}{
		{"another agent's tail", "claude", req("m", "sys", long, "Your own answer is agent2."), true},
		{"no tail", "claude", req("m", "sys", long, ""), true},
		{"another model", "claude", req("n", "sys", long, ""), false},
		{"another backend", "openai", req("m", "sys", long, ""), false},
		{"another system prompt", "claude", req("m", "sys2", long, ""), false},
		{"other answers", "claude", req("m", "sys", long+"more", ""), false},
	} {
		if got := prefixKey(tc.backend, tc.req); (got == base) != tc.same || got == "" {
			t.Errorf("%s: key %q, same as the first: %v, want %v", tc.name, got, got == base, tc.same)
		}
	}
	if k := prefixKey("claude", req("m", "sys", "short", "")); k != "" {
		t.Errorf("a prefix too short to cache has key %q", k)
	}
	if k := prefixKey("claude", provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Content: long}}}); k != "" {
		t.Errorf("a request without a stable message has key %q", k)
	}
}

// Only a turn that offers a vote, on a backend that bills cached prefixes, is held back: a
// local server or the scripted backend never waits.
func TestTurnPrefixKey_OnlyVotingTurnsOnBilledBackends(t *testing.T) {
	long := strings.Repeat("answers ", 600)
	req := provider.Request{Model: "m", System: "sys", Messages: []provider.Message{{Role: provider.RoleUser, Content: long, Stable: true}}}
	voting := &conversation{labels: []string{"agent1"}}
	for _, tc := range []struct {
		backend string
		c       *conversation
		waits   bool
	}{
		{"claude", voting, true},
		{"openai", voting, true},
		{"claude", &conversation{}, false},
		{"ollama", voting, false},
		{"vllm", voting, false},
		{"scripted", voting, false},
	} {
		if got := turnPrefixKey(Agent{Backend: tc.backend}, tc.c, req) != ""; got != tc.waits {
			t.Errorf("%s (labels %v): waits %v, want %v", tc.backend, tc.c.labels, got, tc.waits)
		}
	}
}
