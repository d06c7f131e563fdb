package anthropic

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// translate feeds the events (one JSON object per line) to a fresh translator.
func translate(t *testing.T, events string) ([]provider.Chunk, *translator, error) {
	t.Helper()
	tr := newTranslator()
	var out []provider.Chunk
	for line := range strings.Lines(events) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var ev sdk.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad event %s: %v", line, err)
		}
		chunks, err := tr.event(ev)
		out = append(out, withoutProgress(chunks)...)
		if err != nil {
			return out, tr, err
		}
	}
	return out, tr, nil
}

// withoutProgress drops ToolCallProgress chunks, which only views use: the translation tests
// compare what the engine acts on; TestTranslator_Progress checks the progress.
func withoutProgress(chunks []provider.Chunk) []provider.Chunk {
	var out []provider.Chunk
	for _, c := range chunks {
		if _, ok := c.(provider.ToolCallProgress); !ok {
			out = append(out, c)
		}
	}
	return out
}

const start = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":2,"output_tokens":1}}}`

func TestTranslator(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events string
		want   []provider.Chunk
	}{
		{
			name: "cache reads and writes count as input; message_delta without them keeps message_start's",
			events: start + `
				{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}
				{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" there"}}
				{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"x","document_index":0,"start_char_index":0,"end_char_index":1}}}
				{"type":"content_block_stop","index":0}
				{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4}}
				{"type":"message_stop"}`,
			want: []provider.Chunk{
				provider.TextDelta{Text: "Hi"}, provider.TextDelta{Text: " there"},
				provider.UsageChunk{Usage: provider.Usage{InputTokens: 15, CachedInputTokens: 2, CacheWriteTokens: 3, OutputTokens: 4}},
				provider.Done{StopReason: "end_turn"},
			},
		},
		{
			name: "a tool call without input deltas has {} arguments",
			events: start + `
				{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"vote","input":{}}}
				{"type":"content_block_stop","index":0}
				{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}
				{"type":"message_stop"}`,
			want: []provider.Chunk{
				provider.ToolCallChunk{Call: provider.ToolCall{ID: "toolu_1", Name: "vote", Arguments: "{}"}},
				provider.UsageChunk{Usage: provider.Usage{InputTokens: 15, CachedInputTokens: 2, CacheWriteTokens: 3, OutputTokens: 5}},
				provider.Done{StopReason: "tool_use"},
			},
		},
		{
			name: "an input given whole in content_block_start stands",
			events: start + `
				{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"vote","input":{"agent_id":"agent2"}}}
				{"type":"content_block_stop","index":0}`,
			want: []provider.Chunk{
				provider.ToolCallChunk{Call: provider.ToolCall{ID: "toolu_1", Name: "vote", Arguments: `{"agent_id":"agent2"}`}},
			},
		},
		{
			name: "malformed arguments are passed on for the caller to reject",
			events: start + `
				{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"vote","input":{}}}
				{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"agent_id\": "}}
				{"type":"content_block_stop","index":0}`,
			want: []provider.Chunk{
				provider.ToolCallChunk{Call: provider.ToolCall{ID: "toolu_1", Name: "vote", Arguments: `{"agent_id": `}},
			},
		},
		{
			name: "server tool blocks are not calls for the engine",
			events: start + `
				{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}
				{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"query\":\"paris\"}"}}
				{"type":"content_block_stop","index":0}
				{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}
				{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Paris."}}
				{"type":"content_block_stop","index":1}`,
			want: []provider.Chunk{provider.TextDelta{Text: "Paris."}},
		},
		{
			name: "thinking, then reasoning tokens from output_tokens_details",
			events: start + `
				{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}
				{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Hm."}}
				{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}
				{"type":"content_block_stop","index":0}
				{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"input_tokens":11,"cache_read_input_tokens":0,"output_tokens":30,"output_tokens_details":{"thinking_tokens":25}}}
				{"type":"message_stop"}`,
			want: []provider.Chunk{
				provider.ReasoningDelta{Text: "Hm."},
				provider.UsageChunk{Usage: provider.Usage{InputTokens: 14, CacheWriteTokens: 3, OutputTokens: 30, ReasoningTokens: 25}},
				provider.Done{StopReason: "max_tokens"},
			},
		},
		{
			name:   "unknown event types are ignored",
			events: start + "\n" + `{"type":"message_annotation","foo":1}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := translate(t, tc.events)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTranslator_Malformed(t *testing.T) {
	for name, events := range map[string]string{
		"delta for an unknown block": start + "\n" +
			`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`,
		"stop for an unknown block": start + "\n" + `{"type":"content_block_stop","index":0}`,
		"block started twice": start + "\n" +
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n" +
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		"tool_use without id": start + "\n" +
			`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"vote","input":{}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := translate(t, events); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestStream_ThinkingReturnsWithItsToolCall(t *testing.T) {
	url, reqs := server(t, providertest.Transcript(t, "thinking_tool.sse"))
	p := newTest(t, url, "k")
	req := providertest.Request()
	req.Params = map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}}
	r := providertest.Collect(t.Context(), p, req)
	if r.Err != nil || len(r.Calls) != 1 {
		t.Fatalf("got %+v", r)
	}
	if want := (provider.Usage{InputTokens: 2300, CacheWriteTokens: 1100, OutputTokens: 80, ReasoningTokens: 50}); r.Usage != want {
		t.Errorf("usage = %+v, want %+v", r.Usage, want)
	}
	<-reqs

	// The engine continues the turn: the assistant message and the call's result.
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: r.Calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: r.Calls[0].ID, Content: "vote recorded"},
	)
	if r := providertest.Collect(t.Context(), p, req); r.Err != nil {
		t.Fatal(r.Err)
	}
	c := <-reqs
	msgs := c.body["messages"].([]any)
	want := decode(t, `{"role": "assistant", "content": [
		{"type": "thinking", "thinking": "Agent1's answer is right.", "signature": "EuYBCkQYAiJA"},
		{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
		{"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "vote", "input": {"agent_id": "agent1", "reason": "right"}}
	]}`)
	if diff := cmp.Diff(want, msgs[1]); diff != "" {
		t.Errorf("assistant turn (-want +got):\n%s", diff)
	}
}

func TestThinkingMemo_Bounded(t *testing.T) {
	m := newThinkingMemo()
	for i := range memoSize + 10 {
		m.remember([]thought{{text: "t", signature: "s"}}, []string{string(rune('a' + i))})
	}
	if n := m.calls.Len(); n != memoSize {
		t.Fatalf("memo holds %d entries, want %d", n, memoSize)
	}
	if got := m.lookup("a"); len(got) != 0 {
		t.Errorf("oldest entry kept: %v", got)
	}
	if got := m.lookup(string(rune('a' + memoSize + 9))); len(got) != 1 {
		t.Errorf("newest entry lost")
	}
}

// TestTranslator_Progress: a long new_answer streaming its input reports how far it got, on
// its first fragment and at every ProgressStep.
func TestTranslator_Progress(t *testing.T) {
	tr := newTranslator()
	var got []provider.ToolCallProgress
	piece := strings.Repeat("x", 100)
	lines := []string{start, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"new_answer","input":{}}}`}
	for range 25 {
		lines = append(lines, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"`+piece+`"}}`)
	}
	for _, line := range lines {
		var ev sdk.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		out, err := tr.event(ev)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range out {
			if p, ok := c.(provider.ToolCallProgress); ok {
				got = append(got, p)
			}
		}
	}
	want := []provider.ToolCallProgress{{ID: "toolu_1", Name: "new_answer", Bytes: 100}, {ID: "toolu_1", Name: "new_answer", Bytes: 1100}, {ID: "toolu_1", Name: "new_answer", Bytes: 2100}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}
