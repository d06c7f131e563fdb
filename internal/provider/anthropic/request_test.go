package anthropic

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// send makes one call with req through a capturing server and returns the request it sent.
func send(t *testing.T, o provider.Options, req provider.Request) captured {
	t.Helper()
	url, reqs := server(t, providertest.Transcript(t, "text.sse"))
	o.Type, o.APIKey, o.BaseURL = Type, "sk-test", url
	if o.Model == "" {
		o.Model = "claude-sonnet-4-5-20250929"
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	if r := providertest.Collect(t.Context(), p, req); r.Err != nil {
		t.Fatal(r.Err)
	}
	return <-reqs
}

// decode round-trips want through JSON so it compares equal to a decoded body.
func decode(t *testing.T, want string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(want), &v); err != nil {
		t.Fatalf("bad want JSON: %v\n%s", err, want)
	}
	return v
}

var ephemeral = map[string]any{"type": "ephemeral"}

func TestToWire_RequestShape(t *testing.T) {
	c := send(t, provider.Options{}, providertest.Request())
	want := decode(t, `{
		"model": "test-model",
		"max_tokens": 4096,
		"stream": true,
		"system": [{"type": "text", "text": "You are one of several agents.", "cache_control": {"type": "ephemeral"}}],
		"messages": [{"role": "user", "content": [{"type": "text",
			"text": "<ORIGINAL MESSAGE>\nCapital of France?\n<END OF ORIGINAL MESSAGE>",
			"cache_control": {"type": "ephemeral"}}]}],
		"tools": [{"name": "vote", "description": "Vote for the best answer.",
			"cache_control": {"type": "ephemeral"},
			"input_schema": {"type": "object",
				"properties": {"agent_id": {"type": "string", "enum": ["agent1"]}, "reason": {"type": "string"}},
				"required": ["agent_id", "reason"]}}]
	}`)
	if diff := cmp.Diff(want, any(c.body)); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
}

func TestToWire_Conversation(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []provider.Message
		want string
	}{
		{
			name: "tool results and a following user message merge into one user turn",
			msgs: []provider.Message{
				{Role: provider.RoleUser, Content: "question"},
				{Role: provider.RoleAssistant, Content: "thinking aloud", ToolCalls: []provider.ToolCall{
					{ID: "toolu_1", Name: "vote", Arguments: `{"agent_id":"agent1","reason":"best"}`},
					{ID: "toolu_2", Name: "new_answer", Arguments: `{"content":"x"}`},
				}},
				{Role: provider.RoleTool, ToolCallID: "toolu_1", Content: "Error: only one call", IsError: true},
				{Role: provider.RoleTool, ToolCallID: "toolu_2", Content: "Error: only one call", IsError: true},
				{Role: provider.RoleUser, Content: "answers changed"},
			},
			want: `[
				{"role": "user", "content": [{"type": "text", "text": "question"}]},
				{"role": "assistant", "content": [
					{"type": "text", "text": "thinking aloud"},
					{"type": "tool_use", "id": "toolu_1", "name": "vote", "input": {"agent_id": "agent1", "reason": "best"}},
					{"type": "tool_use", "id": "toolu_2", "name": "new_answer", "input": {"content": "x"}}]},
				{"role": "user", "content": [
					{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "Error: only one call"}]},
					{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [{"type": "text", "text": "Error: only one call"}]},
					{"type": "text", "text": "answers changed", "cache_control": {"type": "ephemeral"}}]}
			]`,
		},
		{
			name: "malformed arguments are sent as {}",
			msgs: []provider.Message{
				{Role: provider.RoleUser, Content: "q"},
				{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{
					{ID: "toolu_1", Name: "vote", Arguments: `{"agent_id": "agent1"`},
					{ID: "toolu_2", Name: "vote", Arguments: `["not", "an", "object"]`},
					{ID: "toolu_3", Name: "vote", Arguments: ``},
				}},
				{Role: provider.RoleTool, ToolCallID: "toolu_1", Content: "Error: bad JSON", IsError: true},
				{Role: provider.RoleTool, ToolCallID: "toolu_2", Content: "Error: bad JSON", IsError: true},
				{Role: provider.RoleTool, ToolCallID: "toolu_3", Content: "", IsError: true},
			},
			want: `[
				{"role": "user", "content": [{"type": "text", "text": "q"}]},
				{"role": "assistant", "content": [
					{"type": "tool_use", "id": "toolu_1", "name": "vote", "input": {}},
					{"type": "tool_use", "id": "toolu_2", "name": "vote", "input": {}},
					{"type": "tool_use", "id": "toolu_3", "name": "vote", "input": {}}]},
				{"role": "user", "content": [
					{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": [{"type": "text", "text": "Error: bad JSON"}]},
					{"type": "tool_result", "tool_use_id": "toolu_2", "is_error": true, "content": [{"type": "text", "text": "Error: bad JSON"}]},
					{"type": "tool_result", "tool_use_id": "toolu_3", "is_error": true, "cache_control": {"type": "ephemeral"}}]}
			]`,
		},
		{
			name: "an empty assistant reply is dropped and the user turns around it merge",
			msgs: []provider.Message{
				{Role: provider.RoleUser, Content: "q"},
				{Role: provider.RoleAssistant},
				{Role: provider.RoleUser, Content: "Finish with new_answer or vote."},
			},
			want: `[
				{"role": "user", "content": [
					{"type": "text", "text": "q"},
					{"type": "text", "text": "Finish with new_answer or vote.", "cache_control": {"type": "ephemeral"}}]}
			]`,
		},
		{
			name: "a successful tool result keeps is_error off",
			msgs: []provider.Message{
				{Role: provider.RoleUser, Content: "q"},
				{Role: provider.RoleAssistant, Content: "a", ToolCalls: []provider.ToolCall{{ID: "toolu_9", Name: "vote", Arguments: `{}`}}},
				{Role: provider.RoleTool, ToolCallID: "toolu_9", Content: "new answers: ..."},
			},
			want: `[
				{"role": "user", "content": [{"type": "text", "text": "q"}]},
				{"role": "assistant", "content": [{"type": "text", "text": "a"},
					{"type": "tool_use", "id": "toolu_9", "name": "vote", "input": {}}]},
				{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9",
					"content": [{"type": "text", "text": "new answers: ..."}], "cache_control": {"type": "ephemeral"}}]}
			]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providertest.Request()
			req.Messages = tc.msgs
			c := send(t, provider.Options{}, req)
			if diff := cmp.Diff(decode(t, tc.want), c.body["messages"]); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToWire_NoSystemNoTools(t *testing.T) {
	req := providertest.Request()
	req.System, req.Tools = "", nil
	c := send(t, provider.Options{}, req)
	for _, k := range []string{"system", "tools"} {
		if v, ok := c.body[k]; ok {
			t.Errorf("%s = %v, want it left out", k, v)
		}
	}
}

func TestToWire_SchemaKeywordsKept(t *testing.T) {
	req := providertest.Request()
	req.Tools = []provider.ToolSpec{
		{Name: "a", Parameters: map[string]any{"type": "object"}},
		{Name: "b", Description: "B", Parameters: map[string]any{
			"type": "object", "additionalProperties": false,
			"properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/x"}},
			"$defs":      map[string]any{"x": map[string]any{"type": "integer"}},
		}},
	}
	c := send(t, provider.Options{}, req)
	want := decode(t, `[
		{"name": "a", "input_schema": {"type": "object", "properties": {}}},
		{"name": "b", "description": "B", "cache_control": {"type": "ephemeral"}, "input_schema": {
			"type": "object", "additionalProperties": false,
			"properties": {"x": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "integer"}}}}
	]`)
	if diff := cmp.Diff(want, c.body["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestToWire_Params(t *testing.T) {
	for _, tc := range []struct {
		name         string
		config, call map[string]any
		want         map[string]any // body keys to check; nil value means absent
		beta         string
	}{
		{
			name:   "pass-through params, the call's over the config's",
			config: map[string]any{"temperature": 0.2, "top_k": int64(40)},
			call:   map[string]any{"temperature": 0.7, "metadata": map[string]any{"user_id": "u1"}},
			want: map[string]any{"temperature": 0.7, "top_k": 40.0, "max_tokens": 4096.0,
				"metadata": map[string]any{"user_id": "u1"}},
		},
		{
			name:   "max_tokens from the config",
			config: map[string]any{"max_tokens": uint64(1000)},
			want:   map[string]any{"max_tokens": 1000.0},
		},
		{
			name:   "thinking passes through and max_tokens grows above its budget",
			config: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": int64(8000)}},
			want: map[string]any{"max_tokens": 12096.0,
				"thinking": map[string]any{"type": "enabled", "budget_tokens": 8000.0}},
		},
		{
			name: "an explicit max_tokens is kept even with thinking",
			config: map[string]any{"max_tokens": int64(9000),
				"thinking": map[string]any{"type": "enabled", "budget_tokens": int64(8000)}},
			want: map[string]any{"max_tokens": 9000.0},
		},
		{
			name:   "betas become the anthropic-beta header, not a body key",
			config: map[string]any{"betas": []any{"context-1m-2025-08-07", " interleaved-thinking-2025-05-14"}},
			want:   map[string]any{"betas": nil},
			beta:   "context-1m-2025-08-07,interleaved-thinking-2025-05-14",
		},
		{
			name:   "extra_body is merged into the body",
			config: map[string]any{"extra_body": map[string]any{"service_tier": "auto", "top_p": 0.5}, "top_p": 0.9},
			want:   map[string]any{"service_tier": "auto", "top_p": 0.9, "extra_body": nil},
		},
		{
			name:   "keys the translation owns cannot be replaced",
			config: map[string]any{"model": "other", "stream": false, "messages": "x", "system": "y", "tools": "z"},
			want:   map[string]any{"model": "test-model", "stream": true},
		},
		{
			name:   "dotted keys are top-level keys",
			config: map[string]any{"a.b": 1.0},
			want:   map[string]any{"a.b": 1.0, "a": nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providertest.Request()
			req.Params = tc.call
			c := send(t, provider.Options{Params: tc.config}, req)
			for k, want := range tc.want {
				got, ok := c.body[k]
				if want == nil {
					if ok {
						t.Errorf("%s = %v, want it absent", k, got)
					}
					continue
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", k, diff)
				}
			}
			if got := c.header.Get("Anthropic-Beta"); got != tc.beta {
				t.Errorf("anthropic-beta = %q, want %q", got, tc.beta)
			}
		})
	}
}

func TestToWire_ModelFromOptions(t *testing.T) {
	req := providertest.Request()
	req.Model = ""
	c := send(t, provider.Options{Model: "claude-opus-4-1"}, req)
	if c.body["model"] != "claude-opus-4-1" {
		t.Errorf("model = %v", c.body["model"])
	}
}

func TestToWire_AtMostFourBreakpoints(t *testing.T) {
	for _, stable := range []bool{false, true} {
		t.Run(fmt.Sprintf("stable=%v", stable), func(t *testing.T) { fourBreakpoints(t, stable) })
	}
}

// fourBreakpoints counts the breakpoints of a conversation; with a Stable first message the
// shared prefix gets the fourth, on that message's block.
func fourBreakpoints(t *testing.T, stable bool) {
	req := providertest.Request()
	req.Messages[0].Stable = stable
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: "a", ToolCalls: []provider.ToolCall{{ID: "t1", Name: "vote", Arguments: "{}"}}},
		provider.Message{Role: provider.RoleTool, ToolCallID: "t1", Content: "r"},
		provider.Message{Role: provider.RoleUser, Content: "u"},
	)
	c := send(t, provider.Options{}, req)
	raw, _ := json.Marshal(c.body)
	var n int
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if cc, ok := x["cache_control"]; ok {
				n++
				if diff := cmp.Diff(any(ephemeral), cc); diff != "" {
					t.Errorf("cache_control (-want +got):\n%s", diff)
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(c.body)
	want := 3
	if stable {
		want = 4
		first := c.body["messages"].([]any)[0].(map[string]any)["content"].([]any)
		if _, ok := first[len(first)-1].(map[string]any)["cache_control"]; !ok {
			t.Errorf("the stable message carries no breakpoint:\n%s", raw)
		}
	}
	if n != want {
		t.Errorf("%d cache breakpoints, want %d (system, last tool, last block, and the stable prefix when marked):\n%s", n, want, raw)
	}
}
