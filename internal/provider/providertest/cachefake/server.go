package cachefake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"
)

// Turn is what a fake model reads in a request to decide its move.
type Turn struct {
	Model      string
	Tools      []string // the names of the tools offered
	VoteLabels []string // the vote tool's agent_id enum, if it offers one
	LastUser   string   // the text of the last user message
}

// Move is a fake model's response: a tool call (Tool with its JSON Args) or Text.
type Move struct{ Tool, Args, Text string }

// Call is what one request was billed, as the server reported it.
type Call struct {
	Model                  string
	Input, Cached, Written int64 // every input token; read from the cache; written to it
	Output                 int64
}

// Server is a fake API whose prompt cache behaves as the real one's.
type Server struct {
	*httptest.Server
	mu    sync.Mutex
	calls []Call
}

// Calls returns what every request so far was billed, in the order they finished.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

// Options configure a fake server.
type Options struct {
	// Play decides each response.
	Play func(Turn) Move
	// Latency is how long the model "thinks" before it streams: requests sent together
	// overlap, as they do on a real API, so that none reads what another is still writing.
	Latency time.Duration
}

// serve runs handle on each decoded request body; handle looks the request up in its cache
// as it arrives, then calls think, which waits out the latency (false: the client has gone),
// then streams. The caller closes the server.
func serve(o Options, handle func(s *Server, w http.ResponseWriter, body map[string]any, think func() bool)) *Server {
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad json: "+err.Error(), http.StatusBadRequest)
			return
		}
		handle(s, w, body, func() bool {
			select {
			case <-r.Context().Done():
				return false
			case <-time.After(o.Latency):
				return true
			}
		})
	}))
	return s
}

// NewAnthropic serves the Messages API (POST /v1/messages, streamed) with cache as its prompt
// cache.
func NewAnthropic(cache *Anthropic, o Options) *Server {
	return serve(o, func(s *Server, w http.ResponseWriter, body map[string]any, think func() bool) {
		model, _ := body["model"].(string)
		u, commit, err := cache.Lookup(model, AnthropicBlocks(body))
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": err.Error()}})
			_, _ = w.Write(b)
			return
		}
		t := Turn{Model: model, LastUser: lastUser(body["messages"], "role", "content")}
		for _, tool := range list(body["tools"]) {
			t.Tools = append(t.Tools, str(obj(tool)["name"]))
			if obj(tool)["name"] == "vote" {
				t.VoteLabels = enum(obj(tool)["input_schema"])
			}
		}
		if !think() {
			return
		}
		m := o.Play(t)
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
			"model": model, "content": []any{}, "usage": map[string]any{"input_tokens": u.Input, "cache_read_input_tokens": u.CacheRead,
				"cache_creation_input_tokens": u.CacheCreation, "output_tokens": 1}}})
		stop, out := "end_turn", m.Text
		if m.Tool != "" {
			stop, out = "tool_use", m.Args
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + m.Tool, "name": m.Tool, "input": map[string]any{}}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": m.Args}})
		} else {
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": m.Text}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		// The response is out: what the request wrote is readable from here on.
		commit()
		s.record(Call{Model: model, Input: u.Total(), Cached: u.CacheRead, Written: u.CacheCreation, Output: Tokens(len(out))})
		sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": Tokens(len(out))}})
		sse(w, "message_stop", map[string]any{"type": "message_stop"})
	})
}

// AnthropicBlocks lays a Messages request out in cache order: each tool, each system block,
// then each message's content blocks (a string content is one block). A top-level
// cache_control (automatic caching) puts a breakpoint on the last block.
func AnthropicBlocks(body map[string]any) []Block {
	var out []Block
	add := func(prefix string, v any) {
		m := obj(v)
		_, bp := m["cache_control"]
		if m != nil {
			c := map[string]any{}
			for k, x := range m {
				if k != "cache_control" {
					c[k] = x
				}
			}
			v = c
		}
		b, _ := json.Marshal(v)
		out = append(out, Block{Text: prefix + string(b), Breakpoint: bp})
	}
	for _, t := range list(body["tools"]) {
		add("tool:", t)
	}
	if s, ok := body["system"].(string); ok {
		add("system:", s)
	}
	for _, b := range list(body["system"]) {
		add("system:", b)
	}
	for _, msg := range list(body["messages"]) {
		role := str(obj(msg)["role"]) + ":"
		if s, ok := obj(msg)["content"].(string); ok {
			add(role, s)
		}
		for _, b := range list(obj(msg)["content"]) {
			add(role, b)
		}
	}
	if _, auto := body["cache_control"]; auto && len(out) > 0 {
		out[len(out)-1].Breakpoint = true
	}
	return out
}

// NewResponses serves OpenAI's Responses API (POST /v1/responses, streamed) with cache as
// its prompt cache.
func NewResponses(cache *OpenAI, o Options) *Server {
	return serve(o, func(s *Server, w http.ResponseWriter, body map[string]any, think func() bool) {
		model, _ := body["model"].(string)
		input, cached, commit := cache.Lookup(model, ResponsesPrompt(body))
		t := Turn{Model: model, LastUser: lastUser(body["input"], "role", "content")}
		for _, tool := range list(body["tools"]) {
			t.Tools = append(t.Tools, str(obj(tool)["name"]))
			if obj(tool)["name"] == "vote" {
				t.VoteLabels = enum(obj(tool)["parameters"])
			}
		}
		if !think() {
			return
		}
		m := o.Play(t)
		w.Header().Set("Content-Type", "text/event-stream")
		sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "status": "in_progress", "output": []any{}}})
		var output []any
		out := m.Text
		if m.Tool != "" {
			out = m.Args
			item := map[string]any{"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_" + m.Tool, "name": m.Tool}
			sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
			sse(w, "response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": m.Args})
			done := map[string]any{"id": "fc_1", "type": "function_call", "status": "completed", "arguments": m.Args, "call_id": "call_" + m.Tool, "name": m.Tool}
			sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": done})
			output = append(output, done)
		} else {
			sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": m.Text})
		}
		commit()
		s.record(Call{Model: model, Input: input, Cached: cached, Output: Tokens(len(out))})
		sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": "resp_1", "status": "completed", "output": output,
			"usage": map[string]any{"input_tokens": input, "input_tokens_details": map[string]any{"cached_tokens": cached},
				"output_tokens": Tokens(len(out)), "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": input + Tokens(len(out))}}})
	})
}

// ResponsesPrompt lays a Responses request out as the model reads it, for the prefix cache:
// the tools, the instructions, then each input item.
func ResponsesPrompt(body map[string]any) string {
	var parts []string
	tools, _ := json.Marshal(body["tools"])
	parts = append(parts, "tools:"+string(tools))
	if s, ok := body["instructions"].(string); ok {
		parts = append(parts, "instructions:"+s)
	}
	for _, it := range list(body["input"]) {
		b, _ := json.Marshal(it)
		parts = append(parts, string(b))
	}
	return strings.Join(parts, "\n")
}

// lastUser is the text of the last user message of a message or input list.
func lastUser(msgs any, roleKey, contentKey string) string {
	l := list(msgs)
	for i := len(l) - 1; i >= 0; i-- {
		m := obj(l[i])
		if m[roleKey] != "user" {
			continue
		}
		if s, ok := m[contentKey].(string); ok {
			return s
		}
		var b strings.Builder
		for _, c := range list(m[contentKey]) {
			b.WriteString(str(obj(c)["text"]))
		}
		return b.String()
	}
	return ""
}

func enum(schema any) []string {
	var out []string
	for _, e := range list(obj(obj(obj(schema)["properties"])["agent_id"])["enum"]) {
		out = append(out, str(e))
	}
	return out
}

func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	w.(http.Flusher).Flush()
}

func list(v any) []any { l, _ := v.([]any); return l }

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }

func str(v any) string { s, _ := v.(string); return s }
