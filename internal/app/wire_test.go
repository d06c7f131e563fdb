package app

// Fake model servers, one per wire protocol, that play a coordinating agent: answer first,
// then vote for agent1, and present when offered no tools. Each response reports a fixed
// usage, so the test can add up what the servers billed.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	usageIn  = 100
	usageOut = 20
)

// move is what the fake model does on one request.
type move struct {
	tool string // "new_answer", "vote" or "" for text
	args string
	text string
}

// decide plays the agent from what the request shows: has it answered yet (a new_answer call
// in the conversation, or a turn that names its own answer), is it presenting (no tools, or a
// presentation that continues its conversation), whom may it vote for (agent1 when offered,
// else the first label).
func decide(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
	raw, _ := json.Marshal(body)
	if len(offered) == 0 || strings.Contains(string(raw), "Coordination is over.") {
		return move{text: "FINAL: " + answer}
	}
	answered = answered || strings.Contains(string(raw), "Your own current answer is the one labelled")
	if !answered || len(enum) == 0 {
		b, _ := json.Marshal(map[string]string{"content": answer})
		return move{tool: "new_answer", args: string(b), text: answer}
	}
	label := fmt.Sprint(enum[0])
	for _, e := range enum {
		if e == "agent1" {
			label = "agent1"
		}
	}
	return move{tool: "vote", args: fmt.Sprintf(`{"agent_id":%q,"reason":"%s is right"}`, label, label)}
}

// player is how a fake model decides, from what a request shows (decide, by default).
type player func(answer string, offered []string, enum []any, answered bool, body map[string]any) move

// offeredTools reads the tool names a request offers and the vote enum; fn finds each tool's
// name and schema in that wire format's tool object.
func offeredTools(tools any, fn func(tool map[string]any) (name, schema any)) (offered []string, enum []any) {
	for _, t := range list(tools) {
		name, schema := fn(obj(t))
		offered = append(offered, fmt.Sprint(name))
		if name == "vote" {
			enum = voteEnum(schema)
		}
	}
	return offered, enum
}

// voteEnum finds the vote tool's agent_id enum in a JSON schema.
func voteEnum(schema any) []any {
	return list(obj(obj(obj(schema)["properties"])["agent_id"])["enum"])
}

// fault is injected by a fake server; it returns true when it has answered the request.
type fault func(w http.ResponseWriter, r *http.Request, n int) bool

// fakeServer counts requests and billed usage for one agent.
type fakeServer struct {
	*httptest.Server
	requests atomic.Int32
	billed   atomic.Int32 // responses that carried usage
}

func newFake(t *testing.T, f fault, respond func(w http.ResponseWriter, body map[string]any) bool) *fakeServer {
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(fs.requests.Add(1))
		if f != nil && f(w, r, n) {
			return
		}
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, "bad json", 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		if respond(w, body) {
			fs.billed.Add(1)
		}
	}))
	t.Cleanup(fs.Close)
	return fs
}

func sse(w http.ResponseWriter, event string, data any) {
	b, _ := json.Marshal(data)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	w.(http.Flusher).Flush()
}

func list(v any) []any { l, _ := v.([]any); return l }
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// splitArgs cuts a JSON text into three fragments, as streaming providers send it.
func splitArgs(s string) []string {
	a, b := len(s)/3, 2*len(s)/3
	return []string{s[:a], s[a:b], s[b:]}
}

// openaiResponses serves the Responses API.
func openaiResponses(answer string) func(http.ResponseWriter, map[string]any) bool {
	return openaiResponsesAs(answer, decide)
}

func openaiResponsesAs(answer string, decide player) func(http.ResponseWriter, map[string]any) bool {
	return func(w http.ResponseWriter, body map[string]any) bool {
		offered, enum := offeredTools(body["tools"], func(t map[string]any) (any, any) { return t["name"], t["parameters"] })
		answered := false
		for _, it := range list(body["input"]) {
			if obj(it)["type"] == "function_call" && obj(it)["name"] == "new_answer" {
				answered = true
			}
		}
		m := decide(answer, offered, enum, answered, body)
		sse(w, "response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_1", "status": "in_progress", "output": []any{}}})
		var output []any
		if m.tool != "" {
			item := map[string]any{"id": "fc_1", "type": "function_call", "status": "in_progress", "arguments": "", "call_id": "call_" + m.tool, "name": m.tool}
			sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
			for _, d := range splitArgs(m.args) {
				sse(w, "response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta", "item_id": "fc_1", "output_index": 0, "delta": d})
			}
			done := map[string]any{"id": "fc_1", "type": "function_call", "status": "completed", "arguments": m.args, "call_id": "call_" + m.tool, "name": m.tool}
			sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": done})
			output = append(output, done)
		} else {
			for _, word := range strings.SplitAfter(m.text, " ") {
				sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": word})
			}
		}
		sse(w, "response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": "resp_1", "status": "completed", "output": output,
			"usage": map[string]any{"input_tokens": usageIn, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": usageOut, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": usageIn + usageOut}}})
		return true
	}
}

// chatCompletions serves an OpenAI-compatible /chat/completions (Groq's flavour: usage in a
// usage-only last chunk, finish reason with the last argument fragment).
func chatCompletions(answer string) func(http.ResponseWriter, map[string]any) bool {
	return chatCompletionsAs(answer, decide)
}

func chatCompletionsAs(answer string, decide player) func(http.ResponseWriter, map[string]any) bool {
	return func(w http.ResponseWriter, body map[string]any) bool {
		offered, enum := offeredTools(body["tools"], func(t map[string]any) (any, any) {
			f := obj(t["function"])
			return f["name"], f["parameters"]
		})
		answered := false
		for _, msg := range list(body["messages"]) {
			for _, tc := range list(obj(msg)["tool_calls"]) {
				if obj(obj(tc)["function"])["name"] == "new_answer" {
					answered = true
				}
			}
		}
		m := decide(answer, offered, enum, answered, body)
		chunk := func(delta map[string]any, finish any) map[string]any {
			return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "llama-3.3-70b-versatile",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
		}
		sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
		if m.tool != "" {
			parts := splitArgs(m.args)
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "id": "call_" + m.tool, "type": "function",
				"function": map[string]any{"name": m.tool, "arguments": parts[0]}}}}, nil))
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": parts[1]}}}}, nil))
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 0, "function": map[string]any{"arguments": parts[2]}}}}, "tool_calls"))
		} else {
			for _, word := range strings.SplitAfter(m.text, " ") {
				sse(w, "", chunk(map[string]any{"content": word}, nil))
			}
			sse(w, "", chunk(map[string]any{}, "stop"))
		}
		sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "llama-3.3-70b-versatile", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": usageIn, "completion_tokens": usageOut, "total_tokens": usageIn + usageOut}})
		fmt.Fprint(w, "data: [DONE]\n\n")
		return true
	}
}

// anthropicMessages serves the Messages API with its ping events.
func anthropicMessages(answer string) func(http.ResponseWriter, map[string]any) bool {
	return anthropicMessagesAs(answer, decide)
}

func anthropicMessagesAs(answer string, decide player) func(http.ResponseWriter, map[string]any) bool {
	return func(w http.ResponseWriter, body map[string]any) bool {
		offered, enum := offeredTools(body["tools"], func(t map[string]any) (any, any) { return t["name"], t["input_schema"] })
		answered := false
		for _, msg := range list(body["messages"]) {
			for _, c := range list(obj(msg)["content"]) {
				if obj(c)["type"] == "tool_use" && obj(c)["name"] == "new_answer" {
					answered = true
				}
			}
		}
		m := decide(answer, offered, enum, answered, body)
		sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
			"model": "claude-sonnet-4-5", "content": []any{}, "usage": map[string]any{"input_tokens": usageIn, "output_tokens": 1}}})
		sse(w, "ping", map[string]any{"type": "ping"})
		stop := "end_turn"
		if m.tool != "" {
			stop = "tool_use"
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]any{"type": "tool_use", "id": "toolu_" + m.tool, "name": m.tool, "input": map[string]any{}}})
			for _, d := range append([]string{""}, splitArgs(m.args)...) {
				sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": d}})
			}
		} else {
			sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, word := range strings.SplitAfter(m.text, " ") {
				sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": word}})
			}
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": usageOut}})
		sse(w, "message_stop", map[string]any{"type": "message_stop"})
		return true
	}
}

// geminiStream serves streamGenerateContent?alt=sse, usage repeated on every chunk.
func geminiStream(answer string) func(http.ResponseWriter, map[string]any) bool {
	return geminiStreamAs(answer, decide)
}

func geminiStreamAs(answer string, decide player) func(http.ResponseWriter, map[string]any) bool {
	return func(w http.ResponseWriter, body map[string]any) bool {
		var offered []string
		var enum []any
		for _, t := range list(body["tools"]) {
			for _, fd := range list(obj(t)["functionDeclarations"]) {
				offered = append(offered, fmt.Sprint(obj(fd)["name"]))
				if obj(fd)["name"] == "vote" {
					schema := obj(fd)["parametersJsonSchema"]
					if schema == nil {
						schema = obj(fd)["parameters"]
					}
					enum = voteEnum(schema)
				}
			}
		}
		answered := false
		for _, c := range list(body["contents"]) {
			for _, p := range list(obj(c)["parts"]) {
				if fc := obj(obj(p)["functionCall"]); fc != nil && fc["name"] == "new_answer" {
					answered = true
				}
			}
		}
		m := decide(answer, offered, enum, answered, body)
		usage := map[string]any{"promptTokenCount": usageIn, "candidatesTokenCount": usageOut, "totalTokenCount": usageIn + usageOut}
		cand := func(parts []any, finish string) map[string]any {
			c := map[string]any{"index": 0, "content": map[string]any{"role": "model", "parts": parts}}
			if finish != "" {
				c["finishReason"] = finish
			}
			return map[string]any{"candidates": []any{c}, "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"}
		}
		if m.tool != "" {
			var args map[string]any
			_ = json.Unmarshal([]byte(m.args), &args)
			sse(w, "", cand([]any{map[string]any{"text": ""}}, ""))
			sse(w, "", cand([]any{map[string]any{"functionCall": map[string]any{"name": m.tool, "args": args}}}, ""))
		} else {
			for _, word := range strings.SplitAfter(m.text, " ") {
				sse(w, "", cand([]any{map[string]any{"text": word}}, ""))
			}
		}
		sse(w, "", map[string]any{"candidates": []any{map[string]any{"index": 0, "finishReason": "STOP"}}, "usageMetadata": usage})
		return true
	}
}

// Faults, each applied to one agent's server.
func statusOnce(status int, header, value, body string) fault {
	return func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n > 1 {
			return false
		}
		if header != "" {
			w.Header().Set(header, value)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
		return true
	}
}

// echoKeyAlways rejects every request and, like some services, quotes the key it got.
func echoKeyAlways(w http.ResponseWriter, r *http.Request, n int) bool {
	key := r.Header.Get("Authorization") + r.Header.Get("x-api-key") + r.Header.Get("x-goog-api-key") + r.URL.Query().Get("key")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	msg, _ := json.Marshal("Incorrect API key provided: " + key)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":"authentication_error","code":401,"status":"UNAUTHENTICATED"}}`, msg)
	return true
}

func dropOnce(w http.ResponseWriter, r *http.Request, n int) bool {
	if n > 1 {
		return false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fmt.Fprint(w, "data: {\"partial\": ")
	w.(http.Flusher).Flush()
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
	}
	return true
}

func malformedOnce(w http.ResponseWriter, r *http.Request, n int) bool {
	if n > 1 {
		return false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	fmt.Fprint(w, "data: {this is not json\n\n")
	return true
}

func hangOnce(w http.ResponseWriter, r *http.Request, n int) bool {
	if n > 1 {
		return false
	}
	// Read the whole body: only then does the server notice the client hanging up.
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(30 * time.Second):
	}
	return true
}
