package openai

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/provider"
)

// translate feeds one JSON event per line to a fresh translator, stopping after a terminal
// event as Stream does.
func translate(t *testing.T, lines string) ([]provider.Chunk, bool, error) {
	t.Helper()
	var tr translator
	var out []provider.Chunk
	for _, line := range strings.Split(strings.TrimSpace(lines), "\n") {
		var ev responses.ResponseStreamEventUnion
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v in %s", err, line)
		}
		chunks, err := tr.event(ev)
		out = append(out, withoutProgress(chunks)...)
		if err != nil || tr.finished {
			return out, tr.finished, err
		}
	}
	return out, tr.finished, nil
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

const completed = `{"type":"response.completed","response":{"status":"completed","output":[],"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":6,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":16}}}`

var usage10 = provider.UsageChunk{Usage: provider.Usage{InputTokens: 10, CachedInputTokens: 4, OutputTokens: 6, ReasoningTokens: 2}}

func call(id, name, args string) provider.ToolCallChunk {
	return provider.ToolCallChunk{Call: provider.ToolCall{ID: id, Name: name, Arguments: args}}
}

func TestTranslator(t *testing.T) {
	for _, tc := range []struct {
		name    string
		events  string
		want    []provider.Chunk
		wantErr string
		open    bool // no terminal event
	}{
		{
			name: "text; bookkeeping events are ignored",
			events: `{"type":"response.created","response":{"status":"in_progress","usage":null}}
{"type":"response.in_progress","response":{"status":"in_progress"}}
{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}
{"type":"response.content_part.added","item_id":"msg_1","output_index":0,"part":{"type":"output_text","text":""}}
{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":"Hi"}
{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":""}
{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":" there"}
{"type":"response.output_text.done","item_id":"msg_1","output_index":0,"text":"Hi there"}
{"type":"response.output_item.done","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"output_text","text":"Hi there"}]}}
` + completed,
			want: []provider.Chunk{provider.TextDelta{Text: "Hi"}, provider.TextDelta{Text: " there"}, usage10, provider.Done{StopReason: "stop"}},
		},
		{
			name: "reasoning summary parts and raw reasoning text",
			events: `{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":0}
{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"First."}
{"type":"response.reasoning_summary_part.added","output_index":0,"summary_index":1}
{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":1,"delta":"Second."}
{"type":"response.reasoning_text.delta","output_index":0,"delta":"raw"}
{"type":"response.refusal.delta","output_index":1,"delta":"I can't."}
` + completed,
			want: []provider.Chunk{
				provider.ReasoningDelta{Text: "First."}, provider.ReasoningDelta{Text: "\n\n"}, provider.ReasoningDelta{Text: "Second."},
				provider.ReasoningDelta{Text: "raw"}, provider.TextDelta{Text: "I can't."}, usage10, provider.Done{StopReason: "stop"},
			},
		},
		{
			name: "two calls interleaved, each emitted when its item is done",
			events: `{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"vote","arguments":""}}
{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_2","type":"function_call","call_id":"call_2","name":"new_answer","arguments":""}}
{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":2,"delta":"{\"content\":"}
{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"{\"agent_id\":"}
{"type":"response.function_call_arguments.delta","item_id":"fc_2","output_index":2,"delta":"\"x\"}"}
{"type":"response.output_item.done","output_index":2,"item":{"id":"fc_2","type":"function_call","call_id":"call_2","name":"new_answer","arguments":""}}
{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":"\"agent1\"}"}
{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":"{\"agent_id\":\"agent1\"}"}
{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"vote","arguments":"{\"agent_id\":\"agent1\"}"}}
` + completed,
			want: []provider.Chunk{
				call("call_2", "new_answer", `{"content":"x"}`), call("call_1", "vote", `{"agent_id":"agent1"}`),
				usage10, provider.Done{StopReason: "tool_calls"},
			},
		},
		{
			name: "a call whose item.done never came is flushed at completion",
			events: `{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"vote"}}
{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{}"}
` + completed,
			want: []provider.Chunk{call("call_1", "vote", "{}"), usage10, provider.Done{StopReason: "tool_calls"}},
		},
		{
			name:   "a call listed only in the final response",
			events: `{"type":"response.completed","response":{"status":"completed","output":[{"type":"message","role":"assistant","content":[]},{"type":"function_call","call_id":"call_9","name":"vote","arguments":"{\"a\":1}"}]}}`,
			want:   []provider.Chunk{call("call_9", "vote", `{"a":1}`), provider.Done{StopReason: "tool_calls"}},
		},
		{
			name: "a call already emitted is not repeated from the final response",
			events: `{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","call_id":"call_1","name":"vote","arguments":"{}"}}
{"type":"response.completed","response":{"status":"completed","output":[{"type":"function_call","call_id":"call_1","name":"vote","arguments":"{}"}]}}`,
			want: []provider.Chunk{call("call_1", "vote", "{}"), provider.Done{StopReason: "tool_calls"}},
		},
		{
			name: "incomplete for max_output_tokens ends truncated but successful",
			events: `{"type":"response.output_text.delta","delta":"Partial"}
{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","call_id":"call_1","name":"vote"}}
{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"agent"}
{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":6,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":16}}}`,
			want: []provider.Chunk{provider.TextDelta{Text: "Partial"}, usage10, provider.Done{StopReason: "length"}},
		},
		{
			name:    "incomplete for content_filter is an error, usage first",
			events:  `{"type":"response.incomplete","response":{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":4},"output_tokens":6,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":16}}}`,
			want:    []provider.Chunk{usage10},
			wantErr: "response incomplete: content_filter",
		},
		{
			name:    "failed",
			events:  `{"type":"response.failed","response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Slow down."},"usage":null}}`,
			wantErr: "response failed: Slow down. (rate_limit_exceeded)",
		},
		{
			name:    "error event",
			events:  `{"type":"error","code":"invalid_prompt","message":"Bad prompt.","param":null}`,
			wantErr: "error event: Bad prompt. (invalid_prompt)",
		},
		{
			name:   "no terminal event",
			events: `{"type":"response.output_text.delta","delta":"Hi"}`,
			want:   []provider.Chunk{provider.TextDelta{Text: "Hi"}},
			open:   true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, finished, err := translate(t, tc.events)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("chunks (-want +got):\n%s", d)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
			if finished == tc.open {
				t.Errorf("finished = %v", finished)
			}
		})
	}
}

// TestTranslator_Progress: a long new_answer streaming its arguments reports how far it got,
// on its first fragment and at every ProgressStep, before the call itself.
func TestTranslator_Progress(t *testing.T) {
	var tr translator
	feed := func(line string) []provider.Chunk {
		var ev responses.ResponseStreamEventUnion
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		out, err := tr.event(ev)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	feed(`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"new_answer","arguments":""}}`)
	var got []int
	piece := strings.Repeat("x", 100)
	for range 25 {
		for _, c := range feed(`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"` + piece + `"}`) {
			p := c.(provider.ToolCallProgress)
			if p.ID != "call_1" || p.Name != "new_answer" {
				t.Errorf("progress %+v", p)
			}
			got = append(got, p.Bytes)
		}
	}
	if want := []int{100, 1100, 2100}; !slices.Equal(got, want) {
		t.Errorf("progress at %v bytes, want %v", got, want)
	}
}
