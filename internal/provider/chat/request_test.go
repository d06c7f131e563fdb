package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// sentBody streams req through a Provider built from o and returns the JSON body it sent.
func sentBody(t *testing.T, o provider.Options, req provider.Request) map[string]any {
	t.Helper()
	url, reqs := serveSSE(t, providertest.Transcript(t, "vllm", string(providertest.Text)+".sse"))
	o.BaseURL = url + "/v1"
	r := providertest.Collect(t.Context(), mustNew(t, o), req)
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	var body map[string]any
	if err := json.Unmarshal((<-reqs).body, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return v
}

var voteTool = provider.ToolSpec{Name: "vote", Description: "Vote for the best answer.",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"agent_id": map[string]any{"type": "string"}},
		"required": []any{"agent_id"}}}

func TestToWire_Conversation(t *testing.T) {
	req := provider.Request{
		Model:  "llama-3.3-70b-versatile",
		System: "You are one of several agents.",
		Messages: []provider.Message{
			{Role: provider.RoleUser, Content: "Capital of France?"},
			{Role: provider.RoleAssistant, Content: "Let me vote.", ToolCalls: []provider.ToolCall{
				{ID: "call_1", Name: "vote", Arguments: `{"agent_id":"agent9"}`},
				{ID: "call_2", Name: "new_answer", Arguments: ""},
			}},
			{Role: provider.RoleTool, ToolCallID: "call_1", Content: "agent9 is not a valid agent", IsError: true},
			{Role: provider.RoleTool, ToolCallID: "call_2", Content: "Error: only one workflow call per response", IsError: true},
			{Role: provider.RoleUser, Content: "While you were working, the current answers changed."},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "call_3", Name: "vote", Arguments: `{"agent_id":"agent1"}`}}},
			{Role: provider.RoleTool, ToolCallID: "call_3", Content: ""},
			{Role: provider.RoleUser, Content: "New answers arrived."},
		},
		Tools: []provider.ToolSpec{voteTool, {Name: "new_answer"}},
	}
	got := sentBody(t, provider.Options{Type: "groq", Model: "ignored-default"}, req)
	want := decode(t, `{
		"model": "llama-3.3-70b-versatile",
		"stream": true,
		"stream_options": {"include_usage": true},
		"messages": [
			{"role": "system", "content": "You are one of several agents."},
			{"role": "user", "content": "Capital of France?"},
			{"role": "assistant", "content": "Let me vote.", "tool_calls": [
				{"id": "call_1", "type": "function", "function": {"name": "vote", "arguments": "{\"agent_id\":\"agent9\"}"}},
				{"id": "call_2", "type": "function", "function": {"name": "new_answer", "arguments": "{}"}}
			]},
			{"role": "tool", "tool_call_id": "call_1", "content": "Error: agent9 is not a valid agent"},
			{"role": "tool", "tool_call_id": "call_2", "content": "Error: only one workflow call per response"},
			{"role": "user", "content": "While you were working, the current answers changed."},
			{"role": "assistant", "tool_calls": [
				{"id": "call_3", "type": "function", "function": {"name": "vote", "arguments": "{\"agent_id\":\"agent1\"}"}}
			]},
			{"role": "tool", "tool_call_id": "call_3", "content": ""},
			{"role": "user", "content": "New answers arrived."}
		],
		"tools": [
			{"type": "function", "function": {"name": "vote", "description": "Vote for the best answer.",
				"parameters": {"type": "object", "properties": {"agent_id": {"type": "string"}}, "required": ["agent_id"]}}},
			{"type": "function", "function": {"name": "new_answer", "parameters": {"type": "object", "properties": {}}}}
		]
	}`)
	if d := cmp.Diff(want, any(got)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
}

func TestToWire_ModelAndTools(t *testing.T) {
	got := sentBody(t, provider.Options{Type: "ollama", Model: "qwen3:8b"},
		provider.Request{Messages: []provider.Message{{Role: provider.RoleUser, Content: "hi"}}})
	if got["model"] != "qwen3:8b" {
		t.Errorf("model = %v, want the configured one", got["model"])
	}
	for _, k := range []string{"tools", "tool_choice"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s sent without tools", k)
		}
	}
	if msgs := got["messages"].([]any); len(msgs) != 1 {
		t.Errorf("messages = %v, want the user message alone (no empty system message)", msgs)
	}
	if _, err := toWire(provider.Options{Type: "vllm"}, provider.Request{}); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("toWire without a model: %v", err)
	}
}

func TestToWire_Params(t *testing.T) {
	for _, tc := range []struct {
		name            string
		typ             string
		options, params map[string]any
		want            map[string]any // top-level fields besides model, messages, stream, stream_options
		streamOptions   map[string]any
	}{
		{
			name:    "sampling and reasoning pass through",
			typ:     "deepseek",
			options: map[string]any{"temperature": 0.2, "top_p": 0.9, "max_tokens": uint64(2048)},
			params:  map[string]any{"reasoning_effort": "low", "temperature": 0.7, "seed": 7},
			want:    map[string]any{"temperature": 0.7, "top_p": 0.9, "max_tokens": 2048.0, "reasoning_effort": "low", "seed": 7.0},
		},
		{
			name: "extra_body merged at the top level, last",
			typ:  "grok",
			params: map[string]any{"temperature": 0.5, "extra_body": map[string]any{
				"search_parameters": map[string]any{"mode": "auto", "return_citations": true}, "temperature": 0.1,
				"messages": "never"}},
			want: map[string]any{"temperature": 0.1,
				"search_parameters": map[string]any{"mode": "auto", "return_citations": true}},
		},
		{
			name: "vllm sampling extras at the top level",
			typ:  "vllm",
			params: map[string]any{"top_k": 20, "repetition_penalty": 1.05,
				"chat_template_kwargs": map[string]any{"enable_thinking": false}},
			want: map[string]any{"top_k": 20.0, "repetition_penalty": 1.05,
				"chat_template_kwargs": map[string]any{"enable_thinking": false}},
		},
		{
			name: "sglang extras, also through extra_body",
			typ:  "sglang",
			params: map[string]any{"separate_reasoning": true,
				"extra_body": map[string]any{"top_k": 40, "chat_template_kwargs": map[string]any{"thinking": true}}},
			want: map[string]any{"separate_reasoning": true, "top_k": 40.0,
				"chat_template_kwargs": map[string]any{"thinking": true}},
		},
		{
			name: "MassGen keys and our own fields are not sent",
			typ:  "openrouter",
			params: map[string]any{"max_mcp_message_history": 200, "command_line_docker_image": "x",
				"provider": "OpenRouter", "enable_image_generation": true, "model": "other", "stream": false,
				"messages": []any{}, "tools": []any{}, "enable_thinking": true},
			want: map[string]any{"enable_thinking": true},
		},
		{
			name:   "OpenRouter routing preferences are sent",
			typ:    "openrouter",
			params: map[string]any{"provider": map[string]any{"order": []any{"DeepInfra"}, "allow_fallbacks": false}},
			want:   map[string]any{"provider": map[string]any{"order": []any{"DeepInfra"}, "allow_fallbacks": false}},
		},
		{
			name:          "stream_options keeps usage on",
			typ:           "vllm",
			params:        map[string]any{"stream_options": map[string]any{"continuous_usage_stats": true, "include_usage": false}},
			want:          map[string]any{},
			streamOptions: map[string]any{"continuous_usage_stats": true, "include_usage": true},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providertest.Request()
			req.Params = tc.params
			got := sentBody(t, provider.Options{Type: tc.typ, Model: "m", Params: tc.options}, req)
			if got["model"] != "test-model" || got["stream"] != true || len(got["messages"].([]any)) != 2 || len(got["tools"].([]any)) != 1 {
				t.Errorf("own fields changed: model %v, stream %v, messages %v, tools %v", got["model"], got["stream"], got["messages"], got["tools"])
			}
			so := tc.streamOptions
			if so == nil {
				so = map[string]any{"include_usage": true}
			}
			if d := cmp.Diff(so, got["stream_options"]); d != "" {
				t.Errorf("stream_options (-want +got):\n%s", d)
			}
			for _, k := range []string{"model", "messages", "tools", "stream", "stream_options"} {
				delete(got, k)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("params (-want +got):\n%s", d)
			}
		})
	}
}

func TestToWire_BadParams(t *testing.T) {
	for _, p := range []map[string]any{{"extra_body": "x"}, {"stream_options": true}} {
		if _, err := toWire(provider.Options{Model: "m"}, provider.Request{Params: p}); err == nil {
			t.Errorf("toWire(%v) gave no error", p)
		}
	}
}

func TestPairToolCalls(t *testing.T) {
	user := func(s string) provider.Message { return provider.Message{Role: provider.RoleUser, Content: s} }
	asst := func(text string, ids ...string) provider.Message {
		m := provider.Message{Role: provider.RoleAssistant, Content: text}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, provider.ToolCall{ID: id, Name: "vote", Arguments: "{}"})
		}
		return m
	}
	tool := func(id, s string) provider.Message {
		return provider.Message{Role: provider.RoleTool, ToolCallID: id, Content: s}
	}
	for _, tc := range []struct {
		name     string
		in, want []provider.Message
	}{
		{"complete pairs are kept",
			[]provider.Message{user("q"), asst("", "a", "b"), tool("a", "1"), tool("b", "2"), user("more")},
			[]provider.Message{user("q"), asst("", "a", "b"), tool("a", "1"), tool("b", "2"), user("more")}},
		{"a call without a result is stripped",
			[]provider.Message{user("q"), asst("text", "a", "b"), tool("b", "2"), user("more")},
			[]provider.Message{user("q"), asst("text", "b"), tool("b", "2"), user("more")}},
		{"an assistant message left empty is dropped",
			[]provider.Message{user("q"), asst("", "a"), user("enforcement"), asst("answer")},
			[]provider.Message{user("q"), user("enforcement"), asst("answer")}},
		{"a result without a call is dropped",
			[]provider.Message{tool("x", "0"), user("q"), asst("", "a"), tool("a", "1"), tool("zz", "9")},
			[]provider.Message{user("q"), asst("", "a"), tool("a", "1")}},
		{"a result of an earlier assistant message is an orphan",
			[]provider.Message{user("q"), asst("", "a"), tool("a", "1"), asst("", "b"), tool("a", "again"), tool("b", "2")},
			[]provider.Message{user("q"), asst("", "a"), tool("a", "1"), asst("", "b"), tool("b", "2")}},
		{"a result after a user message moves up to its call",
			[]provider.Message{user("q"), asst("", "a", "b"), tool("a", "1"), user("news"), tool("b", "2")},
			[]provider.Message{user("q"), asst("", "a", "b"), tool("a", "1"), tool("b", "2"), user("news")}},
		{"one result per call",
			[]provider.Message{asst("", "a"), tool("a", "1"), tool("a", "dup")},
			[]provider.Message{asst("", "a"), tool("a", "1")}},
		{"calls without an ID cannot be answered",
			[]provider.Message{asst("hm", ""), tool("", "1")},
			[]provider.Message{asst("hm")}},
		{"an empty assistant message is dropped",
			[]provider.Message{user("q"), asst(""), user("enforcement")},
			[]provider.Message{user("q"), user("enforcement")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, pairToolCalls(tc.in)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
