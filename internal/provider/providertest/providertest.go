// Package providertest is the conformance suite every network backend passes: the same
// scenarios (streamed text, a tool call split across chunks, reasoning, usage) and the same
// faults (429 with Retry-After, 500, a rejected key, a dropped connection, a malformed stream,
// a hang), each served by an httptest server speaking the backend's own wire format.
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/provider"
)

// Scenario names a successful streamed response the wire must be able to produce.
type Scenario string

const (
	// Text: "Hello, world." streamed in at least two pieces; usage 25 input (5 cached), 7 output.
	Text Scenario = "text"
	// ToolCall: one call, ID "call_1", name "vote", arguments {"agent_id":"agent1","reason":"best answer"}
	// split across at least three chunks, the finish reason arriving with the last fragment;
	// usage 30 input, 12 output.
	ToolCall Scenario = "tool_call"
	// Reasoning: reasoning "Let me think." then text "Paris."; usage 20 input, 15 output of
	// which 9 reasoning.
	Reasoning Scenario = "reasoning"
	// Malformed: a stream whose second event is not valid JSON.
	Malformed Scenario = "malformed"
)

// Expected results of the successful scenarios.
var (
	TextUsage      = provider.Usage{InputTokens: 25, CachedInputTokens: 5, OutputTokens: 7}
	ToolCallUsage  = provider.Usage{InputTokens: 30, OutputTokens: 12}
	ReasoningUsage = provider.Usage{InputTokens: 20, OutputTokens: 15, ReasoningTokens: 9}
	ToolArguments  = map[string]any{"agent_id": "agent1", "reason": "best answer"}
)

// Wire describes one wire protocol for the suite.
type Wire struct {
	// Body returns the complete streamed response body for s, in the wire's format.
	Body func(s Scenario) string
	// ContentType of Body (text/event-stream for SSE).
	ContentType string
	// ErrorBody returns the wire's error JSON for an HTTP status.
	ErrorBody func(status int) string
	// KeyEnv is the variable a rejected key must be named by.
	KeyEnv string
	// ToolChoiceNone holds the top-level body fields that forbid tool calls in the wire's
	// format ({"tool_choice": "none"}, ...): a request with provider.ToolChoiceNone must
	// carry them, the tools still listed, and a request without it must carry none of them.
	ToolChoiceNone map[string]any
	// New builds the backend under test, pointed at baseURL with apiKey. Retries must honour
	// Retry-After and be fast enough for a test (the suite's Retry-After is 1 s).
	New func(baseURL, apiKey string) provider.Provider
}

// Result is what one Stream call produced.
type Result struct {
	Text, Reasoning string
	Calls           []provider.ToolCall
	Usage           provider.Usage
	Done            bool
	Err             error
}

// Collect runs one Stream call to its end.
func Collect(ctx context.Context, p provider.Provider, req provider.Request) Result {
	var r Result
	for c, err := range p.Stream(ctx, req) {
		if err != nil {
			r.Err = err
			break
		}
		switch v := c.(type) {
		case provider.TextDelta:
			r.Text += v.Text
		case provider.ReasoningDelta:
			r.Reasoning += v.Text
		case provider.ToolCallChunk:
			r.Calls = append(r.Calls, v.Call)
		case provider.UsageChunk:
			r.Usage = r.Usage.Add(v.Usage)
		case provider.Done:
			r.Done = true
		}
	}
	return r
}

// Request is a typical coordination request with the workflow tools.
func Request() provider.Request {
	return provider.Request{
		Model:  "test-model",
		System: "You are one of several agents.",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: "<ORIGINAL MESSAGE>\nCapital of France?\n<END OF ORIGINAL MESSAGE>"},
		},
		Tools: []provider.ToolSpec{{
			Name: "vote", Description: "Vote for the best answer.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"agent_id": map[string]any{"type": "string", "enum": []any{"agent1"}},
					"reason":   map[string]any{"type": "string"},
				},
				"required": []any{"agent_id", "reason"},
			},
		}},
		Stage: provider.StageInitial,
	}
}

const testKey = "sk-conformance-SECRET-4242"

// fault is how the server misbehaves on a request.
type fault func(w http.ResponseWriter, r *http.Request, n int) bool

// Run executes the suite against w.
func Run(t *testing.T, w Wire) {
	t.Helper()
	serve := func(t *testing.T, s Scenario, f fault) (string, *atomic.Int32) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			k := int(n.Add(1))
			if f != nil && f(rw, r, k) {
				return
			}
			rw.Header().Set("Content-Type", w.ContentType)
			rw.WriteHeader(http.StatusOK)
			_, _ = rw.Write([]byte(w.Body(s)))
		}))
		t.Cleanup(srv.Close)
		return srv.URL, &n
	}
	errorOnce := func(status int, header map[string]string) fault {
		return func(rw http.ResponseWriter, r *http.Request, n int) bool {
			if n > 1 {
				return false
			}
			for k, v := range header {
				rw.Header().Set(k, v)
			}
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(status)
			_, _ = rw.Write([]byte(w.ErrorBody(status)))
			return true
		}
	}
	stream := func(t *testing.T, url string) Result {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		return Collect(ctx, w.New(url, testKey), Request())
	}

	t.Run("text", func(t *testing.T) {
		url, _ := serve(t, Text, nil)
		r := stream(t, url)
		if r.Err != nil || r.Text != "Hello, world." || r.Usage != TextUsage || !r.Done || len(r.Calls) != 0 {
			t.Fatalf("got %+v", r)
		}
	})
	t.Run("tool call split across chunks", func(t *testing.T) {
		url, _ := serve(t, ToolCall, nil)
		r := stream(t, url)
		if r.Err != nil || len(r.Calls) != 1 || r.Usage != ToolCallUsage || !r.Done {
			t.Fatalf("got %+v", r)
		}
		c := r.Calls[0]
		var args map[string]any
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil || c.Name != "vote" || c.ID != "call_1" || !reflect.DeepEqual(args, ToolArguments) {
			t.Fatalf("call %+v (%v)", c, err)
		}
	})
	t.Run("tool choice none", func(t *testing.T) { toolChoiceNone(t, w) })
	t.Run("reasoning", func(t *testing.T) {
		url, _ := serve(t, Reasoning, nil)
		r := stream(t, url)
		if r.Err != nil || r.Reasoning != "Let me think." || r.Text != "Paris." || r.Usage != ReasoningUsage {
			t.Fatalf("got %+v", r)
		}
	})
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
	}{
		{"429 with Retry-After is retried", http.StatusTooManyRequests, map[string]string{"Retry-After": "1"}},
		{"500 is retried", http.StatusInternalServerError, nil},
		{"503 is retried", http.StatusServiceUnavailable, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, n := serve(t, Text, errorOnce(tc.status, tc.header))
			start := time.Now()
			r := stream(t, url)
			if r.Err != nil || r.Text != "Hello, world." || n.Load() != 2 {
				t.Fatalf("got %+v after %d requests", r, n.Load())
			}
			if tc.header != nil && time.Since(start) < 900*time.Millisecond {
				t.Errorf("retried after %v, before Retry-After", time.Since(start))
			}
		})
	}
	t.Run("rejected key is fatal and names the variable, not the key", func(t *testing.T) {
		url, n := serve(t, Text, errorOnce(http.StatusUnauthorized, nil))
		r := stream(t, url)
		if r.Err == nil || !provider.IsFatal(r.Err) {
			t.Fatalf("err = %v, want a fatal error", r.Err)
		}
		if msg := r.Err.Error(); !strings.Contains(msg, w.KeyEnv) || strings.Contains(msg, testKey) || strings.Contains(msg, "4242") {
			t.Errorf("error %q must name %s and never the key", msg, w.KeyEnv)
		}
		if n.Load() != 1 {
			t.Errorf("a rejected key was retried: %d requests", n.Load())
		}
	})
	t.Run("dropped connection is a retryable error", func(t *testing.T) {
		url, _ := serve(t, Text, func(rw http.ResponseWriter, r *http.Request, n int) bool {
			rw.Header().Set("Content-Type", w.ContentType)
			rw.WriteHeader(http.StatusOK)
			body := w.Body(Text)
			_, _ = rw.Write([]byte(body[:len(body)/3]))
			rw.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(rw).Hijack()
			if err == nil {
				conn.Close()
			}
			return true
		})
		r := stream(t, url)
		if r.Err == nil || provider.IsFatal(r.Err) || r.Done {
			t.Fatalf("got %+v, want a retryable error", r)
		}
	})
	t.Run("malformed stream is an error, not a crash", func(t *testing.T) {
		url, _ := serve(t, Malformed, nil)
		r := stream(t, url)
		if r.Err == nil || provider.IsFatal(r.Err) {
			t.Fatalf("got %+v, want a retryable error", r)
		}
	})
	t.Run("hang ends with the context", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		url, _ := serve(t, Text, func(rw http.ResponseWriter, r *http.Request, n int) bool {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return true
		})
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		r := Collect(ctx, w.New(url, testKey), Request())
		if r.Err == nil || !errors.Is(r.Err, context.DeadlineExceeded) && !strings.Contains(r.Err.Error(), "deadline") {
			t.Fatalf("got %+v, want the deadline error", r)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("hang ended after %v", d)
		}
	})
	t.Run("breaking out early releases the stream", func(t *testing.T) {
		url, _ := serve(t, Text, nil)
		for c, err := range w.New(url, testKey).Stream(t.Context(), Request()) {
			if err != nil {
				t.Fatal(err)
			}
			_ = c
			break
		}
	})
}

// toolChoiceNone checks that a request's ToolChoiceNone reaches the wire as w says, with the
// tool list unchanged (the prompt cache keys on it), and that nothing is sent without it.
func toolChoiceNone(t *testing.T, w Wire) {
	if len(w.ToolChoiceNone) == 0 {
		t.Fatal("Wire.ToolChoiceNone is not set: every backend must send provider.ToolChoiceNone")
	}
	bodies := make(chan map[string]any, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		bodies <- body
		rw.Header().Set("Content-Type", w.ContentType)
		_, _ = rw.Write([]byte(w.Body(Text)))
	}))
	t.Cleanup(srv.Close)
	for _, choice := range []provider.ToolChoice{provider.ToolChoiceAuto, provider.ToolChoiceNone} {
		req := Request()
		req.ToolChoice = choice
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		r := Collect(ctx, w.New(srv.URL, testKey), req)
		cancel()
		if r.Err != nil {
			t.Fatalf("tool choice %q: %v", choice, r.Err)
		}
		body := <-bodies
		if _, ok := body["tools"]; !ok {
			t.Errorf("tool choice %q: the request lost its tools: %v", choice, body)
		}
		for k, want := range w.ToolChoiceNone {
			got, sent := body[k]
			switch {
			case choice == provider.ToolChoiceNone && !reflect.DeepEqual(got, want):
				t.Errorf("tool choice none: body %s = %v, want %v", k, got, want)
			case choice == provider.ToolChoiceAuto && sent:
				t.Errorf("tool choice auto: body has %s = %v, want it left to the API's default", k, got)
			}
		}
	}
}

// Transcript reads testdata/<path...> (a recorded stream); a missing file fails the test.
func Transcript(t testing.TB, path ...string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, path...)...))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
