package chat

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"

	"massgen/internal/provider"
)

// translate feeds the chunks (JSON, one per event) to a translator and ends the stream.
func translate(t *testing.T, events ...string) ([]provider.Chunk, error) {
	t.Helper()
	var tr translator
	var out []provider.Chunk
	for _, e := range events {
		var c openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			t.Fatalf("%v in %s", err, e)
		}
		got, err := tr.add(c)
		out = append(out, withoutProgress(got)...)
		if err != nil {
			return out, err
		}
	}
	got, err := tr.end()
	return append(out, got...), err
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

func txt(s string) provider.Chunk         { return provider.TextDelta{Text: s} }
func thk(s string) provider.Chunk         { return provider.ReasoningDelta{Text: s} }
func use(u provider.Usage) provider.Chunk { return provider.UsageChunk{Usage: u} }
func fin(reason string) provider.Chunk    { return provider.Done{StopReason: reason} }
func tc(id, name, args string) provider.Chunk {
	return provider.ToolCallChunk{Call: provider.ToolCall{ID: id, Name: name, Arguments: args}}
}

func TestTranslator(t *testing.T) {
	for _, tt := range []struct {
		name   string
		events []string
		want   []provider.Chunk
	}{
		{"role-only first delta and empty content strings send nothing",
			[]string{
				`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
				`{"id":"c","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`,
				`{"id":"c","choices":[{"index":0,"delta":{"content":null},"finish_reason":null}]}`,
				`{"id":"c","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}`,
			},
			[]provider.Chunk{txt("Hi"), fin("stop")}},
		{"reasoning_content (DeepSeek, vLLM, Qwen) and reasoning (OpenRouter, Groq)",
			[]string{
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning_content":"Let me"}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning":" think","reasoning_details":[{"type":"reasoning.text","text":" think"}]}}]}`,
				`{"choices":[{"index":0,"delta":{"reasoning":".","reasoning_content":"."}}]}`,
				`{"choices":[{"index":0,"delta":{"content":"Paris.","reasoning_content":null,"reasoning":null}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			[]provider.Chunk{thk("Let me"), thk(" think"), thk("."), txt("Paris."), fin("stop")}},
		{"arguments split, finish_reason with the last fragment, usage-only last chunk",
			[]string{
				`{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"vote","arguments":""}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"agent_id\":"}}]},"finish_reason":null}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"agent1\"}"}}]},"finish_reason":"tool_calls"}]}`,
				`{"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}}`,
			},
			[]provider.Chunk{tc("call_1", "vote", `{"agent_id":"agent1"}`),
				use(provider.Usage{InputTokens: 30, OutputTokens: 12}), fin("tool_calls")}},
		{"parallel calls interleaved by index, in order of appearance",
			[]string{
				`{"choices":[{"index":0,"delta":{"content":"Two calls.","tool_calls":[{"index":0,"id":"a","function":{"name":"vote","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"new_answer","arguments":"{\"content\""}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}},{"index":1,"function":{"arguments":":\"y\"}"}}]},"finish_reason":"tool_calls"}]}`,
			},
			[]provider.Chunk{txt("Two calls."), tc("a", "vote", `{"x":1}`), tc("b", "new_answer", `{"content":"y"}`), fin("tool_calls")}},
		{"every call at index 0 with its own ID, name repeated in each fragment",
			[]string{
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"vote","arguments":"{}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"new_answer","arguments":"{\"content\":"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"new_answer","arguments":"\"z\"}"}}]}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			[]provider.Chunk{tc("a", "vote", "{}"), tc("b", "new_answer", `{"content":"z"}`), fin("stop")}},
		{"usage on the last choice chunk (OpenRouter), cached and reasoning tokens",
			[]string{
				`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop","native_finish_reason":"stop"}]}`,
				`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":{"prompt_tokens":25,"completion_tokens":15,"total_tokens":40,"cost":0.1,"prompt_tokens_details":{"cached_tokens":5,"cache_write_tokens":3},"completion_tokens_details":{"reasoning_tokens":9}}}`,
			},
			[]provider.Chunk{txt("ok"), use(provider.Usage{InputTokens: 25, CachedInputTokens: 5, CacheWriteTokens: 3, OutputTokens: 15, ReasoningTokens: 9}), fin("stop")}},
		{"usage with the finish reason in one chunk, null usage before",
			[]string{
				`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":null}],"usage":null}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"length"}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}`,
			},
			[]provider.Chunk{txt("ok"), use(provider.Usage{InputTokens: 4, OutputTokens: 1}), fin("length")}},
		{"cumulative usage on every chunk counts once, the last",
			[]string{
				`{"choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":4,"completion_tokens":1,"total_tokens":5}}`,
				`{"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}`,
			},
			[]provider.Chunk{txt("a"), txt("b"), use(provider.Usage{InputTokens: 4, OutputTokens: 2}), fin("stop")}},
		{"Groq's x_groq usage when no standard usage comes",
			[]string{
				`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"queue_time":0.1,"prompt_tokens":11,"completion_tokens":2,"total_tokens":13}}}`,
			},
			[]provider.Chunk{txt("ok"), use(provider.Usage{InputTokens: 11, OutputTokens: 2}), fin("stop")}},
		{"standard usage wins over x_groq",
			[]string{
				`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"prompt_tokens":11,"completion_tokens":2}}}`,
				`{"choices":[],"usage":{"prompt_tokens":11,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":8}},"x_groq":{"id":"req_1"}}`,
			},
			[]provider.Chunk{use(provider.Usage{InputTokens: 11, CachedInputTokens: 8, OutputTokens: 2}), fin("stop")}},
		{"DeepSeek's prompt_cache_hit_tokens",
			[]string{
				`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}],"usage":null}`,
				`{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":3,"total_tokens":103,"prompt_cache_hit_tokens":64,"prompt_cache_miss_tokens":36}}`,
			},
			[]provider.Chunk{txt("ok"), use(provider.Usage{InputTokens: 100, CachedInputTokens: 64, OutputTokens: 3}), fin("stop")}},
		{"refusals are text; other choices are ignored",
			[]string{
				`{"choices":[{"index":1,"delta":{"content":"other"}},{"index":0,"delta":{"refusal":"I can't."}}]}`,
				`{"choices":[{"index":0,"delta":{},"finish_reason":"content_filter"}]}`,
			},
			[]provider.Chunk{txt("I can't."), fin("content_filter")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate(t, tt.events...)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestTranslator_NoFinishReason(t *testing.T) {
	got, err := translate(t,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"vote","arguments":"{\"agent"}}]}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	if !errors.Is(err, errNoFinish) {
		t.Fatalf("err = %v, want errNoFinish", err)
	}
	if len(got) != 0 {
		t.Errorf("an incomplete stream emitted %v", got)
	}
}

// TestTranslator_Progress: a long new_answer streaming its arguments reports how far it got,
// on its first fragment and at every ProgressStep.
func TestTranslator_Progress(t *testing.T) {
	var tr translator
	var got []provider.ToolCallProgress
	piece := strings.Repeat("x", 100)
	for i := range 25 {
		ev := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + piece + `"}}]}}]}`
		if i == 0 {
			ev = `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"new_answer","arguments":"` + piece + `"}}]}}]}`
		}
		var c openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatal(err)
		}
		out, err := tr.add(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, ch := range out {
			got = append(got, ch.(provider.ToolCallProgress))
		}
	}
	want := []provider.ToolCallProgress{{ID: "call_1", Name: "new_answer", Bytes: 100}, {ID: "call_1", Name: "new_answer", Bytes: 1100}, {ID: "call_1", Name: "new_answer", Bytes: 2100}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}
