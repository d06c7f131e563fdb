package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/prompt"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// flood is a model that, on its first coordination call, streams text chunks or tool calls
// for as long as the engine keeps reading (up to a bound), and behaves on every later call.
type flood struct {
	textChunks int // chunks of 1 KiB of text
	toolCalls  int
	calls      []provider.ToolCall // sent whole after the text, if set (one huge call, say)
	after      *fake
	pulled     atomic.Int64 // chunks the engine took from the flood
	n          atomic.Int64
}

func (f *flood) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	if f.n.Add(1) > 1 || req.Stage == provider.StagePresentation {
		return f.after.Stream(ctx, req)
	}
	return func(yield func(provider.Chunk, error) bool) {
		chunk := strings.Repeat("é", 512) // 1 KiB, 512 characters
		for range f.textChunks {
			f.pulled.Add(1)
			if !yield(provider.TextDelta{Text: chunk}, nil) {
				return
			}
		}
		for k := range f.toolCalls {
			f.pulled.Add(1)
			if !yield(provider.ToolCallChunk{Call: provider.ToolCall{ID: fmt.Sprintf("t%d", k), Name: "mcp__kb__lookup", Arguments: `{"q":"x"}`}}, nil) {
				return
			}
		}
		for _, c := range f.calls {
			f.pulled.Add(1)
			if !yield(provider.ToolCallChunk{Call: c}, nil) {
				return
			}
		}
		yield(provider.Done{StopReason: "tool_calls"}, nil)
	}
}

// A response of 50 MB took 1.4 GB and 10,000 tool calls 786 MB (issue 9 item 6): the engine
// must stop reading at the caps, keep what fits and tell the model the limit.
func TestRun_OutputCaps(t *testing.T) {
	huge, _ := json.Marshal(map[string]string{"content": strings.Repeat("x", 5000)})
	tests := []struct {
		name  string
		flood *flood
		check func(t *testing.T, f *flood, evs []event.Event, tools int, reqs []provider.Request)
	}{
		{"text over max_response_chars", &flood{textChunks: 10_000}, func(t *testing.T, f *flood, evs []event.Event, _ int, reqs []provider.Request) {
			if p := f.pulled.Load(); p > 5 {
				t.Errorf("the engine read %d chunks of a 2,000-character cap", p)
			}
			n, calls := 0, 0
			for _, e := range evs {
				switch p := e.Payload.(type) {
				case event.ModelCalled:
					if p.Agent == "a2" {
						calls++
					}
				case event.TextDelta:
					if p.Agent == "a2" && calls == 1 {
						n += utf8.RuneCountInString(p.Text)
					}
				}
			}
			if n != 2000 {
				t.Errorf("published %d characters of text, want the 2000 that fit", n)
			}
			wantCutNote(t, evs, reqs, "over 2000 characters (orchestrator.max_response_chars)")
		}},
		{"one huge tool call", &flood{calls: []provider.ToolCall{{ID: "h", Name: "new_answer", Arguments: string(huge)}}},
			func(t *testing.T, f *flood, evs []event.Event, _ int, reqs []provider.Request) {
				for _, c := range ofType[event.ToolCalled](evs) {
					if len(c.Call.Arguments) > 2000 {
						t.Errorf("a call kept %d bytes of arguments past the cap", len(c.Call.Arguments))
					}
				}
				for _, a := range ofType[event.AnswerSubmitted](evs) {
					if a.Agent == "a2" && len(a.Content) > 100 {
						t.Errorf("the cut-off answer was accepted")
					}
				}
				wantCutNote(t, evs, reqs, "max_response_chars")
			}},
		{"tool calls over max_tool_calls_per_response", &flood{toolCalls: 10_000}, func(t *testing.T, f *flood, evs []event.Event, tools int, reqs []provider.Request) {
			if p := f.pulled.Load(); p > 5 {
				t.Errorf("the engine read %d tool calls with a cap of 4", p)
			}
			if tools != 4 {
				t.Errorf("the tool ran %d times, want 4", tools)
			}
			called := 0
			for _, c := range ofType[event.ToolCalled](evs) {
				if c.Agent == "a2" && strings.HasPrefix(c.Call.ID, "t") {
					called++
				}
			}
			if called != 5 {
				t.Errorf("%d tool_called events, want 4 run and 1 standing for the rest", called)
			}
			rej := ofType[event.ToolRejected](evs)
			if len(rej) != 1 || rej[0].CallID != "t4" || !strings.Contains(rej[0].Error, "more than 4 tool calls (orchestrator.max_tool_calls_per_response)") {
				t.Fatalf("rejected: %+v", rej)
			}
			// Every call of the assistant message has a result in the next request.
			next := reqs[0].Messages
			results := map[string]string{}
			for _, m := range next {
				if m.Role == provider.RoleTool {
					results[m.ToolCallID] = m.Content
				}
			}
			if len(results) != 5 || !strings.Contains(results["t4"], "dropped") {
				t.Errorf("results: %v", results)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			tc.flood.after = answerThenVote("Paris, France.", "agent1")
			a := agents(answerThenVote("Paris.", "agent1"), tc.flood)
			a[1].Tools = tool.Set{lookupTool(&n, &mu)}
			// The requests of agent 2 after the flood, as its well-behaved self sees them.
			res, evs := run(t, t.Context(), Options{Agents: a, Orchestrator: config.Orchestrator{
				MaxResponseChars: 2000, MaxToolCallsPerResponse: 4, MaxAnswerChars: 1000}})
			if res.ExitCode != 0 || res.Winner != "a1" {
				t.Fatalf("result %+v", res)
			}
			mu.Lock()
			defer mu.Unlock()
			tc.check(t, tc.flood, evs, n, tc.flood.after.requests())
		})
	}
}

// wantCutNote checks that the cut-off response was not acted on and the model was told why.
func wantCutNote(t *testing.T, evs []event.Event, reqs []provider.Request, want string) {
	t.Helper()
	found := false
	for _, e := range ofType[event.EnforcementSent](evs) {
		if e.Agent == "a2" && strings.Contains(e.Message, want) {
			found = true
		}
	}
	if !found {
		t.Errorf("no enforcement message with %q: %+v", want, ofType[event.EnforcementSent](evs))
	}
	if len(reqs) == 0 {
		t.Fatal("agent 2 was not called again after the cut")
	}
	// After the cut-off response: a result for each of its calls, then the note (then news of
	// answers that came meanwhile, if any).
	msgs := reqs[0].Messages
	k := len(msgs) - 1
	for k >= 0 && msgs[k].Role != provider.RoleAssistant {
		k--
	}
	noted := false
	for _, m := range msgs[k+1:] {
		switch {
		case m.Role == provider.RoleTool && m.Content != prompt.CutNotRun:
			t.Errorf("a call of the cut-off response got %q", m.Content)
		case m.Role == provider.RoleUser && strings.Contains(m.Content, want):
			noted = true
		}
	}
	if !noted {
		t.Errorf("the retry does not carry the note: %+v", msgs[k+1:])
	}
}

func TestRun_AnswerOverMaxAnswerCharsIsRejected(t *testing.T) {
	long := strings.Repeat("Paris ", 100)
	model := &fake{next: func(n int, req provider.Request) step {
		switch {
		case req.Stage == provider.StagePresentation:
			return step{text: "Paris."}
		case n == 1:
			return answer(long)
		}
		if !hasOwnAnswer(req, "Paris.") {
			return answer("Paris.")
		}
		return vote("agent1", "short")
	}}
	res, evs := run(t, t.Context(), Options{Agents: agents(model), Orchestrator: config.Orchestrator{MaxAnswerChars: 100}})
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res)
	}
	rej := ofType[event.ToolRejected](evs)
	if len(rej) != 1 || !strings.Contains(rej[0].Error, "599 characters long, over the limit of 100 (orchestrator.max_answer_chars)") {
		t.Fatalf("rejected: %+v", rej)
	}
	if a := ofType[event.AnswerSubmitted](evs); len(a) != 1 || a[0].Content != "Paris." {
		t.Fatalf("answers: %+v", a)
	}
}

// An answer cut off by the token limit was accepted as finished (issue 9 item 10).
func TestRun_TruncatedTurnIsNotAnAnswer(t *testing.T) {
	for _, stop := range []string{"length", "max_tokens", "MAX_TOKENS"} {
		t.Run(stop, func(t *testing.T) {
			model := &fake{next: func(n int, req provider.Request) step {
				switch {
				case req.Stage == provider.StagePresentation:
					return step{text: "Paris is the capital of France."}
				case n == 1:
					s := answer("Paris is the capital of")
					s.stop = stop
					return s
				case !hasOwnAnswer(req, "Paris is the capital of France."):
					return answer("Paris is the capital of France.")
				}
				return vote("agent1", "complete")
			}}
			res, evs := run(t, t.Context(), Options{Agents: agents(model)})
			if res.ExitCode != 0 || res.TruncatedBy != "" {
				t.Fatalf("result %+v", res)
			}
			answers := ofType[event.AnswerSubmitted](evs)
			if len(answers) != 1 || answers[0].Content != "Paris is the capital of France." {
				t.Fatalf("answers: %+v", answers)
			}
			second := model.requests()[1].Messages
			last := second[len(second)-1]
			if !strings.Contains(last.Content, fmt.Sprintf("output token limit stopped it (stop reason %q)", stop)) {
				t.Errorf("the retry ends with %+v", last)
			}
			if m := second[len(second)-2]; m.Role != provider.RoleTool || m.Content != prompt.CutNotRun {
				t.Errorf("the cut-off call got %+v", m)
			}
			if errs := ofType[event.AgentError](evs); len(errs) != 0 {
				t.Errorf("a retried truncation failed the turn: %+v", errs)
			}
		})
	}
}

func TestRun_AlwaysTruncatedFailsTheTurn(t *testing.T) {
	cutoff := &fake{next: func(int, provider.Request) step {
		s := answer("Paris is")
		s.stop = "length"
		return s
	}}
	res, evs := run(t, t.Context(), Options{Agents: agents(answerThenVote("Paris.", "agent1"), cutoff),
		Orchestrator: config.Orchestrator{FailureBudget: 1}})
	if res.ExitCode != 0 || res.Winner != "a1" {
		t.Fatalf("result %+v", res)
	}
	for _, a := range ofType[event.AnswerSubmitted](evs) {
		if a.Agent == "a2" {
			t.Fatalf("a truncated answer was accepted: %+v", a)
		}
	}
	if errs := ofType[event.AgentError](evs); len(errs) != 1 || !strings.Contains(errs[0].Message, `cut off (at the output token limit, stop reason "length")`) {
		t.Fatalf("errors: %+v", errs)
	}
}

func TestRun_TruncatedPresentationIsMarked(t *testing.T) {
	tests := []struct {
		name, by string
		present  step
	}{
		{"token limit", event.TruncatedTokenLimit, step{text: "Paris is the capital of", stop: "max_tokens"}},
		{"max_response_chars", event.TruncatedResponseChars, step{text: strings.Repeat("Paris ", 1000)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			model := &fake{next: func(n int, req provider.Request) step {
				if req.Stage == provider.StagePresentation {
					return tc.present
				}
				if !hasOwnAnswer(req, "Paris.") {
					return answer("Paris.")
				}
				return vote("agent1", "fine")
			}}
			res, evs := run(t, t.Context(), Options{Agents: agents(model), Orchestrator: config.Orchestrator{MaxResponseChars: 1000}})
			if res.ExitCode != 0 || res.TruncatedBy != tc.by {
				t.Fatalf("result %+v", res)
			}
			f := ofType[event.FinalAnswer](evs)
			if len(f) != 1 || !f[0].Truncated || f[0].TruncatedBy != tc.by || f[0].Fallback || !strings.HasPrefix(f[0].Content, "Paris ") {
				t.Fatalf("final: %+v", f)
			}
			if n := utf8.RuneCountInString(f[0].Content); n > 1000 {
				t.Errorf("final answer of %d characters, cap 1000", n)
			}
		})
	}
}

// A tool whose Run ignores its context held the session forever (issue 9 item 1): the engine
// must give up on it after a grace period, finish the session, and say the tool is still running.
func TestRun_ToolIgnoringContextCannotHoldTheSession(t *testing.T) {
	for _, how := range []string{"session timeout", "cancellation"} {
		t.Run(how, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				release := make(chan struct{})
				var started atomic.Bool
				stubborn := tool.Tool{
					Spec: provider.ToolSpec{Name: "mcp__fifo__read", Parameters: map[string]any{"type": "object"}},
					Run: func(ctx context.Context, args string) tool.Result {
						started.Store(true)
						tool.Output(ctx)("waiting\n")
						<-release // ignores ctx, like a read of a FIFO nobody writes
						tool.Output(ctx)("too late\n")
						return tool.Result{Content: "late"}
					},
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				user := &fake{next: func(n int, req provider.Request) step {
					if n == 1 {
						return toolCall("f1", "mcp__fifo__read", `{}`)
					}
					return vote("agent1", "fine")
				}}
				a := agents(answerThenVote("Paris.", "agent1"), user)
				a[1].Tools = tool.Set{stubborn}
				o := Options{Agents: a, Timeouts: config.Timeouts{Orchestrator: time.Minute, Agent: time.Hour}}
				if how == "cancellation" {
					go func() {
						time.Sleep(10 * time.Second)
						cancel()
					}()
				}
				start := time.Now()
				res, evs := run(t, ctx, o)
				took := time.Since(start)
				if !started.Load() {
					t.Fatal("the tool never ran")
				}
				limit := time.Minute + 5*time.Second
				wantCode := 3
				if how == "cancellation" {
					limit, wantCode = 15*time.Second, 4
				}
				if took > limit || res.ExitCode != wantCode || res.Winner != "a1" {
					t.Errorf("session took %s (limit %s), result %+v", took, limit, res)
				}
				var result *event.ToolResult
				for _, r := range ofType[event.ToolResult](evs) {
					if r.CallID == "f1" {
						result = &r
					}
				}
				if result == nil || !result.IsError || !strings.Contains(result.Content, "did not stop within 2s") {
					t.Errorf("tool result: %+v", result)
				}
				st := ofType[event.ToolServerStatus](evs)
				if len(st) != 1 || !strings.Contains(st[0].Detail, "1 tool call(s) ignored their cancellation") || !strings.Contains(st[0].Detail, "a2/mcp__fifo__read") {
					t.Errorf("status: %+v", st)
				}
				close(release)
				synctest.Wait()
				for _, o := range ofType[event.ToolOutput](evs) {
					if o.Text == "too late\n" {
						t.Error("output of an abandoned tool reached the stream")
					}
				}
			})
		})
	}
}
