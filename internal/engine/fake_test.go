package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// step is what a fake model does on one call.
type step struct {
	delay  time.Duration
	hosted []provider.HostedToolChunk // tools the provider ran, reported before the text
	text   string
	calls  []provider.ToolCall
	err    error
	hang   bool
	stop   string // the stop reason; "" means "stop"
}

// fake is a model whose every call is decided by a function of the call number and request.
type fake struct {
	mu   sync.Mutex
	reqs []provider.Request
	next func(n int, req provider.Request) step
}

func (f *fake) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		n := len(f.reqs)
		f.mu.Unlock()
		st := f.next(n, req)
		if st.hang {
			<-ctx.Done()
			yield(nil, ctx.Err())
			return
		}
		if st.delay > 0 {
			t := time.NewTimer(st.delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				yield(nil, ctx.Err())
				return
			}
		}
		if st.err != nil {
			yield(nil, st.err)
			return
		}
		for _, h := range st.hosted {
			if !yield(h, nil) {
				return
			}
		}
		if st.text != "" && !yield(provider.TextDelta{Text: st.text}, nil) {
			return
		}
		for _, c := range st.calls {
			if !yield(provider.ToolCallChunk{Call: c}, nil) {
				return
			}
		}
		if !yield(provider.UsageChunk{Usage: provider.Usage{InputTokens: 10, OutputTokens: 5}}, nil) {
			return
		}
		yield(provider.Done{StopReason: cmp.Or(st.stop, "stop")}, nil)
	}
}

func (f *fake) requests() []provider.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

func answer(content string) step {
	b, _ := json.Marshal(map[string]string{"content": content})
	return step{text: content, calls: []provider.ToolCall{{ID: "c1", Name: "new_answer", Arguments: string(b)}}}
}

func vote(label, reason string) step {
	b, _ := json.Marshal(map[string]string{"agent_id": label, "reason": reason})
	return step{calls: []provider.ToolCall{{ID: "c1", Name: "vote", Arguments: string(b)}}}
}

// labels returns the vote enum offered in req.
func labels(req provider.Request) []string {
	for _, t := range req.Tools {
		if t.Name != "vote" {
			continue
		}
		props := t.Parameters["properties"].(map[string]any)
		enum, _ := props["agent_id"].(map[string]any)["enum"].([]any)
		var out []string
		for _, e := range enum {
			out = append(out, e.(string))
		}
		return out
	}
	return nil
}

// answerThenVote answers once with content, then votes for target (or the first label).
func answerThenVote(content, target string) *fake {
	return &fake{next: func(n int, req provider.Request) step {
		if req.Stage == provider.StagePresentation {
			return step{text: "FINAL: " + content}
		}
		if !hasOwnAnswer(req, content) {
			return answer(content)
		}
		ls := labels(req)
		if slices.Contains(ls, target) {
			return vote(target, "looks best")
		}
		return vote(ls[0], "looks best")
	}}
}

// hasOwnAnswer reports whether the conversation already holds a new_answer call with content,
// or, in a turn that starts from the shared prefix, shows content as the agent's own answer.
func hasOwnAnswer(req provider.Request, content string) bool {
	own := ""
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			if c.Name == "new_answer" && strings.Contains(c.Arguments, content) {
				return true
			}
		}
		if _, rest, ok := strings.Cut(m.Content, "Your own current answer is the one labelled "); ok {
			own, _, _ = strings.Cut(rest, " ")
		}
	}
	if own == "" {
		return false
	}
	for _, m := range req.Messages {
		if strings.Contains(m.Content, "<"+own+">\n"+content+"\n<end of "+own+">") {
			return true
		}
	}
	return false
}

// recorder collects events.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) Handle(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) all() []event.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func ofType[T event.Payload](evs []event.Event) []T {
	var out []T
	for _, e := range evs {
		if v, ok := e.Payload.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

func agents(ps ...provider.Provider) []Agent {
	out := make([]Agent, len(ps))
	for i, p := range ps {
		out[i] = Agent{ID: fmt.Sprintf("a%d", i+1), Backend: "fake", Model: "m", Provider: p}
	}
	return out
}

var errRetryable = &provider.Error{Provider: "fake", Err: errors.New("server overloaded")}
