package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// captureBody sends req through a backend built from o and returns the JSON body it posted.
func captureBody(t *testing.T, o provider.Options, req provider.Request) map[string]any {
	t.Helper()
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies <- b
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, providertest.Transcript(t, "text.sse"))
	}))
	defer srv.Close()
	o.BaseURL, o.APIKey = srv.URL+"/v1", "sk-test"
	if r := providertest.Collect(t.Context(), newProvider(t, o), req); r.Err != nil {
		t.Fatal(r.Err)
	}
	var body map[string]any
	if err := json.Unmarshal(<-bodies, &body); err != nil {
		t.Fatal(err)
	}
	return body
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v in %s", err, s)
	}
	return v
}

func TestToWire_Conversation(t *testing.T) {
	req := providertest.Request()
	req.Model = "gpt-5"
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: "Let me vote.", ToolCalls: []provider.ToolCall{
			{ID: "call_a", Name: "vote", Arguments: `{"agent_id":"agent1"}`},
			{ID: "call_b", Name: "new_answer", Arguments: ""},
		}},
		provider.Message{Role: provider.RoleTool, ToolCallID: "call_a", Content: "Error: reason is required", IsError: true},
		provider.Message{Role: provider.RoleTool, ToolCallID: "call_b", Content: "only one workflow call per response", IsError: true},
		provider.Message{Role: provider.RoleUser, Content: "Please call exactly one tool."},
		provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
			{ID: "call_c", Name: "vote", Arguments: `{"agent_id":"agent1","reason":"ok"}`},
		}},
		provider.Message{Role: provider.RoleTool, ToolCallID: "call_c", Content: "Vote recorded."},
	)
	got := captureBody(t, provider.Options{}, req)
	want := jsonValue(t, `{
		"model": "gpt-5",
		"instructions": "You are one of several agents.",
		"stream": true,
		"store": false,
		"input": [
			{"role": "user", "content": "<ORIGINAL MESSAGE>\nCapital of France?\n<END OF ORIGINAL MESSAGE>"},
			{"role": "assistant", "content": "Let me vote."},
			{"type": "function_call", "call_id": "call_a", "name": "vote", "arguments": "{\"agent_id\":\"agent1\"}"},
			{"type": "function_call", "call_id": "call_b", "name": "new_answer", "arguments": "{}"},
			{"type": "function_call_output", "call_id": "call_a", "output": "Error: reason is required"},
			{"type": "function_call_output", "call_id": "call_b", "output": "Error: only one workflow call per response"},
			{"role": "user", "content": "Please call exactly one tool."},
			{"type": "function_call", "call_id": "call_c", "name": "vote", "arguments": "{\"agent_id\":\"agent1\",\"reason\":\"ok\"}"},
			{"type": "function_call_output", "call_id": "call_c", "output": "Vote recorded."}
		],
		"tools": [{
			"type": "function", "name": "vote", "description": "Vote for the best answer.", "strict": false,
			"parameters": {
				"type": "object",
				"properties": {"agent_id": {"type": "string", "enum": ["agent1"]}, "reason": {"type": "string"}},
				"required": ["agent_id", "reason"]
			}
		}]
	}`)
	if d := cmp.Diff(want, any(got)); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
}

func TestToWire_Params(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts, req  map[string]any
		noReqModel bool
		wantSubset string
		absent     []string
	}{
		{
			name:       "max_tokens is renamed, reasoning and text pass through",
			opts:       map[string]any{"max_tokens": 4096, "reasoning": map[string]any{"effort": "low", "summary": "auto"}, "text": map[string]any{"verbosity": "low"}},
			wantSubset: `{"max_output_tokens": 4096, "reasoning": {"effort": "low", "summary": "auto"}, "text": {"verbosity": "low"}}`,
			absent:     []string{"max_tokens"},
		},
		{
			name:       "request params win over options, max_output_tokens over max_tokens",
			opts:       map[string]any{"temperature": 0.2, "max_output_tokens": 100},
			req:        map[string]any{"temperature": 0.7, "max_tokens": 5},
			wantSubset: `{"temperature": 0.7, "max_output_tokens": 100}`,
		},
		{
			name:       "extra_body is merged into the body",
			opts:       map[string]any{"extra_body": map[string]any{"service_tier": "flex", "top_p": 0.5}, "top_p": 0.9},
			wantSubset: `{"service_tier": "flex", "top_p": 0.9}`,
			absent:     []string{"extra_body"},
		},
		{
			name:       "owned keys cannot be replaced, store can",
			opts:       map[string]any{"stream": false, "input": "hijack", "instructions": "x", "model": "other", "tools": nil, "store": true},
			wantSubset: `{"stream": true, "instructions": "You are one of several agents.", "model": "test-model", "store": true}`,
		},
		{
			name:       "keys with sjson syntax stay whole",
			opts:       map[string]any{"metadata.tag": "a"},
			wantSubset: `{"metadata.tag": "a"}`,
		},
		{
			name:       "the options' model is used when the request has none",
			noReqModel: true,
			wantSubset: `{"model": "o-model"}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providertest.Request()
			req.Params = tc.req
			if tc.noReqModel {
				req.Model = ""
			}
			o := provider.Options{Params: tc.opts, Model: "o-model"}
			got := captureBody(t, o, req)
			for k, v := range jsonValue(t, tc.wantSubset).(map[string]any) {
				if d := cmp.Diff(v, got[k]); d != "" {
					t.Errorf("%s (-want +got):\n%s", k, d)
				}
			}
			for _, k := range tc.absent {
				if _, ok := got[k]; ok {
					t.Errorf("%s was sent", k)
				}
			}
			if in, ok := got["input"].([]any); !ok || len(in) != 1 {
				t.Errorf("input %v", got["input"])
			}
			if tools, ok := got["tools"].([]any); !ok || len(tools) != 1 {
				t.Errorf("tools %v", got["tools"])
			}
		})
	}
}

// The engine's cache key goes out as prompt_cache_key, so that OpenAI routes the requests
// sharing a prefix to one cache; a prompt_cache_key in the params wins.
func TestToWire_PromptCacheKey(t *testing.T) {
	req := providertest.Request()
	req.CacheKey = "massgen-0123"
	if got := captureBody(t, provider.Options{}, req)["prompt_cache_key"]; got != "massgen-0123" {
		t.Errorf("prompt_cache_key %v", got)
	}
	o := provider.Options{Params: map[string]any{"prompt_cache_key": "mine"}}
	if got := captureBody(t, o, req)["prompt_cache_key"]; got != "mine" {
		t.Errorf("with the param: prompt_cache_key %v", got)
	}
	req.CacheKey = ""
	if _, ok := captureBody(t, provider.Options{}, req)["prompt_cache_key"]; ok {
		t.Error("prompt_cache_key sent without a key")
	}
}

func TestToWireInput_Orphans(t *testing.T) {
	msgs := []provider.Message{
		{Role: provider.RoleUser, Content: "q"},
		{Role: provider.RoleTool, ToolCallID: "call_ghost", Content: "answer to nothing"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "call_1", Name: "vote", Arguments: "{}"}, {ID: "call_2", Name: "vote", Arguments: "{}"}}},
		{Role: provider.RoleTool, ToolCallID: "call_2", Content: "done"},
		{Role: provider.RoleUser, Content: "go on"},
		{Role: provider.RoleTool, ToolCallID: "call_2", Content: "late duplicate"},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "call_3", Name: "vote", Arguments: "{}"}}},
	}
	items, err := toWireInput(msgs)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(items)
	want := jsonValue(t, `[
		{"role": "user", "content": "q"},
		{"type": "function_call", "call_id": "call_1", "name": "vote", "arguments": "{}"},
		{"type": "function_call", "call_id": "call_2", "name": "vote", "arguments": "{}"},
		{"type": "function_call_output", "call_id": "call_2", "output": "done"},
		{"type": "function_call_output", "call_id": "call_1", "output": "Error: no result was recorded for this call."},
		{"role": "user", "content": "go on"},
		{"type": "function_call", "call_id": "call_3", "name": "vote", "arguments": "{}"},
		{"type": "function_call_output", "call_id": "call_3", "output": "Error: no result was recorded for this call."}
	]`)
	if d := cmp.Diff(want, jsonValue(t, string(b))); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
	if _, err := toWireInput([]provider.Message{{Role: "system", Content: "x"}}); err == nil {
		t.Error("an unknown role was accepted")
	}
}

func TestToWire_NoModelIsFatal(t *testing.T) {
	p, err := New(provider.Options{APIKey: "k", BaseURL: "http://127.0.0.1:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	req := providertest.Request()
	req.Model = ""
	r := providertest.Collect(t.Context(), p, req)
	if !provider.IsFatal(r.Err) {
		t.Fatalf("err = %v, want a fatal error", r.Err)
	}
}
