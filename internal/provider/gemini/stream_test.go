package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genai"

	"massgen/internal/provider"
)

// translate feeds inline JSON chunks to a fresh translator and returns what it produced; the
// stream's error, if any, is appended as "error: ...".
func translate(t *testing.T, remembered map[string]callMeta, chunks ...string) []any {
	t.Helper()
	return translateWith(t, newTranslator(remembered, false), chunks...)
}

// newTranslator numbers calls and hosted runs from 1, as a fresh Provider does.
func newTranslator(remembered map[string]callMeta, perQuery bool) *translator {
	n := 0
	return &translator{
		nextID:   func() string { n++; return fmt.Sprintf("call_%d", n) },
		hostedID: func(name string) string { n++; return fmt.Sprintf("%s_%d", name, n) },
		remember: func(id string, m callMeta) { remembered[id] = m },
		perQuery: perQuery,
	}
}

// translateWith is translate with a translator of the caller's.
func translateWith(t *testing.T, tr *translator, chunks ...string) []any {
	t.Helper()
	var out []any
	for _, c := range chunks {
		var resp genai.GenerateContentResponse
		if err := json.Unmarshal([]byte(c), &resp); err != nil {
			t.Fatalf("chunk %s: %v", c, err)
		}
		for _, ch := range tr.chunk(&resp) {
			out = append(out, ch)
		}
	}
	end, err := tr.end()
	for _, ch := range end {
		out = append(out, ch)
	}
	if err != nil {
		out = append(out, "error: "+err.Error())
	}
	return out
}

func TestTranslator(t *testing.T) {
	usage := func(in, cached, out, reasoning int64) provider.UsageChunk {
		return provider.UsageChunk{Usage: provider.Usage{InputTokens: in, CachedInputTokens: cached, OutputTokens: out, ReasoningTokens: reasoning}}
	}
	for _, tc := range []struct {
		name   string
		chunks []string
		want   []any
	}{{
		name: "text with usage repeated on every chunk, counted once",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":10,"cachedContentTokenCount":4}}`,
			`{"candidates":[{"content":{"parts":[{"text":"lo"}],"role":"model"}}],"usageMetadata":{"promptTokenCount":10,"cachedContentTokenCount":4,"candidatesTokenCount":1}}`,
			`{"candidates":[{"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"cachedContentTokenCount":4,"candidatesTokenCount":2}}`,
		},
		want: []any{provider.TextDelta{Text: "Hel"}, provider.TextDelta{Text: "lo"}, usage(10, 4, 2, 0), provider.Done{StopReason: "stop"}},
	}, {
		name: "thoughts are reasoning; output counts thoughts; tool-use prompt is input",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Hmm.","thought":true}],"role":"model"}}]}`,
			`{"candidates":[{"content":{"parts":[{"text":"","thoughtSignature":"c2ln"},{"text":"Yes."}],"role":"model"},"finishReason":"STOP"}],` +
				`"usageMetadata":{"promptTokenCount":10,"toolUsePromptTokenCount":5,"candidatesTokenCount":2,"thoughtsTokenCount":30}}`,
		},
		want: []any{provider.ReasoningDelta{Text: "Hmm."}, provider.TextDelta{Text: "Yes."}, usage(15, 0, 32, 30), provider.Done{StopReason: "stop"}},
	}, {
		name: "function calls arrive whole; missing IDs are generated",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Voting."},{"functionCall":{"name":"vote","args":{"agent_id":"agent2","reason":"r"}}},{"functionCall":{"name":"noop"}}],"role":"model"}}]}`,
			`{"candidates":[{"content":{"parts":[{"functionCall":{"id":"abc","name":"new_answer","args":{"content":"x"}}}],"role":"model"},"finishReason":"STOP"}]}`,
		},
		want: []any{provider.TextDelta{Text: "Voting."},
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "call_1", Name: "vote", Arguments: `{"agent_id":"agent2","reason":"r"}`}},
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "call_2", Name: "noop", Arguments: `{}`}},
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "abc", Name: "new_answer", Arguments: `{"content":"x"}`}},
			provider.Done{StopReason: "tool_calls"}},
	}, {
		name:   "max tokens is a truncated success",
		chunks: []string{`{"candidates":[{"content":{"parts":[{"text":"Par"}]},"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}}`},
		want:   []any{provider.TextDelta{Text: "Par"}, usage(1, 0, 1, 0), provider.Done{StopReason: "max_tokens"}},
	}, {
		name:   "other candidates are ignored",
		chunks: []string{`{"candidates":[{"content":{"parts":[{"text":"A"}]},"finishReason":"STOP"},{"index":1,"content":{"parts":[{"text":"B"}]},"finishReason":"STOP"}]}`},
		want:   []any{provider.TextDelta{Text: "A"}, provider.Done{StopReason: "stop"}},
	}, {
		name:   "a stream without a finish reason is an error",
		chunks: []string{`{"candidates":[{"content":{"parts":[{"text":"Hel"}]}}],"usageMetadata":{"promptTokenCount":3}}`},
		want:   []any{provider.TextDelta{Text: "Hel"}, usage(3, 0, 0, 0), "error: stream ended before the finish reason"},
	}, {
		name: "safety block is an error after the usage",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Well"}]}}]}`,
			`{"candidates":[{"finishReason":"SAFETY","safetyRatings":[{"category":"HARM_CATEGORY_DANGEROUS_CONTENT","probability":"HIGH","blocked":true},{"category":"HARM_CATEGORY_HARASSMENT","probability":"NEGLIGIBLE"}]}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":1}}`,
		},
		want: []any{provider.TextDelta{Text: "Well"}, usage(8, 0, 1, 0), "error: response blocked (SAFETY): HARM_CATEGORY_DANGEROUS_CONTENT HIGH"},
	}, {
		name:   "recitation is an error",
		chunks: []string{`{"candidates":[{"finishReason":"RECITATION"}]}`},
		want:   []any{"error: response blocked (RECITATION)"},
	}, {
		name:   "a malformed function call is an error with the service's message",
		chunks: []string{`{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"Malformed function call: vote(agent_id=)"}]}`},
		want:   []any{"error: generation stopped (MALFORMED_FUNCTION_CALL): Malformed function call: vote(agent_id=)"},
	}, {
		name:   "a blocked prompt is an error",
		chunks: []string{`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":12,"totalTokenCount":12}}`},
		want:   []any{usage(12, 0, 0, 0), "error: prompt blocked (PROHIBITED_CONTENT)"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := translate(t, map[string]callMeta{}, tc.chunks...)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestTranslator_RemembersSignaturesAndAPIIDs(t *testing.T) {
	mem := map[string]callMeta{}
	translate(t, mem,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"vote","args":{}},"thoughtSignature":"c2lnLTE="},{"functionCall":{"id":"x9","name":"vote"}}]},"finishReason":"STOP"}]}`)
	want := map[string]callMeta{"call_1": {signature: []byte("sig-1")}, "x9": {apiID: true}}
	if d := cmp.Diff(want, mem, cmp.AllowUnexported(callMeta{})); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestCallMemory_IsBounded(t *testing.T) {
	p := &Provider{calls: provider.CallMemo[callMeta]{Size: maxCalls}}
	for i := range maxCalls + 10 {
		p.rememberCall(fmt.Sprintf("call_%d", i), callMeta{apiID: true})
	}
	p.rememberCall("plain", callMeta{}) // nothing to remember
	if n := p.calls.Len(); n != maxCalls {
		t.Fatalf("kept %d", n)
	}
	if p.calls.Get("call_0").apiID || !p.calls.Get(fmt.Sprintf("call_%d", maxCalls+9)).apiID {
		t.Error("the oldest entries must go first")
	}
}

func TestCamel(t *testing.T) {
	for in, want := range map[string]string{
		"max_output_tokens": "maxOutputTokens", "topP": "topP", "top_p": "topP", "seed": "seed", "_x": "_x",
	} {
		if got := camel(in); got != want {
			t.Errorf("camel(%q) = %q, want %q", in, got, want)
		}
	}
	if !strings.Contains(fmt.Sprint(camelValue("x", []any{map[string]any{"a_b": 1}})), "aB") {
		t.Error("camelValue must rename keys inside lists")
	}
}
