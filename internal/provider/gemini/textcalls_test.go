package gemini

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// textRequest is providertest.Request with both workflow tools, as coordination sends them.
func textRequest() provider.Request {
	req := providertest.Request()
	req.Model = ""
	req.Tools = append(req.Tools, provider.ToolSpec{
		Name: "new_answer", Description: "Provide an improved answer.\nUse it when yours is better.",
		Parameters: map[string]any{"type": "object", "required": []any{"content"},
			"properties": map[string]any{"content": map[string]any{"type": "string", "description": "Answer <text> & notes"}}},
	})
	return req
}

// sse builds a Gemini stream body from response chunk JSON.
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\r\n\r\n")
	}
	return b.String()
}

// textChunk is a response chunk with one text part.
func textChunk(text, finish string) string {
	c := `{"candidates":[{"content":{"parts":[{"text":` + mustJSON(text) + `}],"role":"model"},"index":0`
	if finish != "" {
		c += `,"finishReason":"` + finish + `"`
	}
	return c + `}],"usageMetadata":{"promptTokenCount":50,"candidatesTokenCount":9}}`
}

func mustJSON(v any) string {
	s, err := compactJSON(v)
	if err != nil {
		panic(err)
	}
	return s
}

const wantProtocol = "You are one of several agents.\n\n" +
	"# Tools\n" +
	"Function calling is unavailable here: call the tools below by writing tool_call blocks. " +
	"Each tool is listed with what it does and the JSON Schema of its arguments.\n" +
	`- vote: Vote for the best answer.` + "\n" +
	`  arguments: {"properties":{"agent_id":{"enum":["agent1"],"type":"string"},"reason":{"type":"string"}},"required":["agent_id","reason"],"type":"object"}` + "\n" +
	"- new_answer: Provide an improved answer.\n  Use it when yours is better.\n" +
	`  arguments: {"properties":{"content":{"description":"Answer <text> & notes","type":"string"}},"required":["content"],"type":"object"}` + "\n" +
	"To call tools, end your reply with one block per call, each exactly:\n" +
	"```tool_call\n" +
	`{"name": "<tool name>", "arguments": {<arguments matching its schema>}}` + "\n" +
	"```\n" +
	"Several blocks are allowed; write nothing after the last one. Each block must be valid JSON: " +
	`inside strings, escape quotes and write line breaks as \n. ` +
	"Your text before the first block is the reply shown to the user; the blocks are not shown. " +
	`Each result comes back in the next user message as "Result of <tool> (call <id>)".`

func TestStream_TextCallsRequest(t *testing.T) {
	search := map[string]any{"googleSearch": map[string]any{}}
	code := map[string]any{"codeExecution": map[string]any{}}
	for _, tc := range []struct {
		name       string
		web, exec  bool
		noTools    bool
		wantTools  []any
		wantSystem string
	}{{
		name: "web search", web: true, wantTools: []any{search},
		wantSystem: wantProtocol + "\nGoogle Search is built in: use it directly, never through a tool_call block.",
	}, {
		name: "code execution", exec: true, wantTools: []any{code},
		wantSystem: wantProtocol + "\nCode execution is built in: use it directly, never through a tool_call block.",
	}, {
		name: "both", web: true, exec: true, wantTools: []any{search, code},
		wantSystem: wantProtocol + "\nGoogle Search and code execution are built in: use them directly, never through a tool_call block.",
	}, {
		name: "hosted tools without function tools need no protocol", web: true, noTools: true, wantTools: []any{search},
		wantSystem: "You are one of several agents.",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			url, reqs := captureServer(t, providertest.Transcript(t, "text.sse"))
			p := newTest(t, provider.Options{BaseURL: url, Model: "gemini-2.5-flash", WebSearch: tc.web, CodeExecution: tc.exec,
				Params: map[string]any{"tool_config": map[string]any{
					"function_calling_config": map[string]any{"mode": "ANY"},
					"retrieval_config":        map[string]any{"language_code": "en"},
				}}})
			req := textRequest()
			if tc.noTools {
				req.Tools = nil
			}
			body := sent(t, p, reqs, req).Body
			if d := cmp.Diff(tc.wantTools, body["tools"]); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			system := body["systemInstruction"].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"]
			if d := cmp.Diff(tc.wantSystem, system); d != "" {
				t.Errorf("system instruction (-want +got):\n%s", d)
			}
			// The text protocol drops the function calling config, which needs declarations;
			// native mode sends it as configured.
			wantConfig := map[string]any{"retrievalConfig": map[string]any{"languageCode": "en"}}
			if tc.noTools {
				wantConfig["functionCallingConfig"] = map[string]any{"mode": "ANY"}
			}
			if d := cmp.Diff(wantConfig, body["toolConfig"]); d != "" {
				t.Errorf("toolConfig (-want +got):\n%s", d)
			}
		})
	}
}

func TestStream_TextCallsHistory(t *testing.T) {
	url, reqs := captureServer(t, providertest.Transcript(t, "text.sse"))
	p := newTest(t, provider.Options{BaseURL: url, Model: "gemini-2.5-flash", WebSearch: true})
	req := textRequest()
	req.Messages = []provider.Message{
		{Role: provider.RoleUser, Content: "Question?"},
		{Role: provider.RoleAssistant, Content: "Let me answer.\n\n", ToolCalls: []provider.ToolCall{
			{ID: "c1", Name: "new_answer", Arguments: `{ "content": "Paris <b>" }`},
			{ID: "c2", Name: "vote", Arguments: `{"agent_id":"agent9"`}, // not JSON: replayed as it is
		}},
		{Role: provider.RoleTool, ToolCallID: "c1", Content: "ok"},
		{Role: provider.RoleTool, ToolCallID: "c2", Content: "Error: unknown agent", IsError: true},
		{Role: provider.RoleUser, Content: "Please vote again."},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c3", Name: "vote", Arguments: ""}}},
		{Role: provider.RoleTool, ToolCallID: "c3", Content: "recorded"},
	}
	got := sent(t, p, reqs, req).Body["contents"]
	text := func(s string) map[string]any { return map[string]any{"text": s} }
	want := []any{
		map[string]any{"role": "user", "parts": []any{text("Question?")}},
		map[string]any{"role": "model", "parts": []any{text("Let me answer.\n\n" +
			"```tool_call\n" + `{"name":"new_answer","arguments":{"content":"Paris <b>"}}` + "\n```\n\n" +
			"```tool_call\n" + `{"agent_id":"agent9"` + "\n```")}},
		map[string]any{"role": "user", "parts": []any{
			text("Result of new_answer (call c1):\nok"),
			text("Result of vote (call c2) [error]:\nError: unknown agent"),
			text("Please vote again."),
		}},
		map[string]any{"role": "model", "parts": []any{text("```tool_call\n" + `{"name":"vote","arguments":{}}` + "\n```")}},
		map[string]any{"role": "user", "parts": []any{text("Result of vote (call c3):\nrecorded")}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("contents (-want +got):\n%s", d)
	}
	for _, bad := range [][]provider.Message{
		{{Role: provider.RoleUser, Content: "q"}, {Role: provider.RoleTool, ToolCallID: "x", Content: "r"}},
		{{Role: "system", Content: "s"}},
		{{Role: provider.RoleUser}},
		nil,
	} {
		if _, err := toTextContents(bad, func(string) callMeta { return callMeta{} }); err == nil {
			t.Errorf("toTextContents(%v) accepted", bad)
		}
	}
}

// A block that did not parse goes back exactly as the model wrote it, even when it is a JSON
// object, so that the engine's error about it makes sense to the model.
func TestStream_TextCallsReplayed(t *testing.T) {
	wrong := `{"name": "vote", "arguments": "agent1"}`
	first := sse(
		textChunk("Voting.\n```tool_call\n"+wrong+"\n```\n```tool_call\n"+`{"name": "new_answer", "arguments": {"content": "x"}}`+"\n```", "STOP"))
	url, reqs := captureServer(t, first)
	p := newTest(t, provider.Options{BaseURL: url, Model: "gemini-2.5-flash", WebSearch: true})
	req := textRequest()
	r := providertest.Collect(t.Context(), p, req)
	<-reqs
	wantCalls := []provider.ToolCall{{ID: "call_1", Name: "vote", Arguments: wrong}, {ID: "call_2", Name: "new_answer", Arguments: `{"content":"x"}`}}
	if r.Err != nil || r.Text != "Voting.\n" || !cmp.Equal(wantCalls, r.Calls) {
		t.Fatalf("got %+v", r)
	}
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: r.Text, ToolCalls: r.Calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: "call_1", Content: "arguments must be an object", IsError: true},
		provider.Message{Role: provider.RoleTool, ToolCallID: "call_2", Content: "ok"})
	got := sent(t, p, reqs, req).Body["contents"].([]any)
	want := map[string]any{"role": "model", "parts": []any{map[string]any{"text": "Voting.\n\n" +
		"```tool_call\n" + wrong + "\n```\n\n" +
		"```tool_call\n" + `{"name":"new_answer","arguments":{"content":"x"}}` + "\n```"}}}
	if len(got) != 3 {
		t.Fatalf("contents: %s", toJSON(t, got))
	}
	if d := cmp.Diff(want, got[1]); d != "" {
		t.Errorf("model turn (-want +got):\n%s", d)
	}
}

func TestStream_TextCalls(t *testing.T) {
	const redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
	usage := provider.UsageChunk{Usage: provider.Usage{InputTokens: 50, OutputTokens: 9}}
	for _, tc := range []struct {
		name string
		body string
		want []any
	}{{
		name: "a search, then a new_answer block split mid-fence",
		body: providertest.Transcript(t, "web_search_tool_call.sse"),
		want: []any{
			provider.TextDelta{Text: "I searched for the 2024 laureates. John J. Hopfield and Geoffrey E. Hinton won the 2024 Nobel Prize in Physics"},
			provider.TextDelta{Text: " for foundational work on artificial neural networks.\n\n"},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "web_search_1", Name: provider.HostedWebSearch,
				Arguments: `{"query":"2024 Nobel Prize in Physics winners"}`},
				Result: "2 sources:\n- nobelprize.org <" + redirect + "AUZIYQGq2nQ0c5Jm1wq7v6dX3WmYbKp8lqK0t4n2Z8cR>" +
					"\n- wikipedia.org <" + redirect + "AUZIYQHf7sX1u9Vb0kO2eP4rT6yL3aN8mQ5wJ1cD7gE>"},
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "call_2", Name: "new_answer",
				Arguments: `{"content":"The 2024 Nobel Prize in Physics went to John J. Hopfield and Geoffrey E. Hinton ` +
					`\"for foundational discoveries and inventions that enable machine learning with artificial neural networks\"."}`}},
			provider.UsageChunk{Usage: provider.Usage{InputTokens: 412 + 280, OutputTokens: 96 + 64, ReasoningTokens: 64, WebSearches: 1}},
			provider.Done{StopReason: "tool_calls"},
		},
	}, {
		name: "two blocks are two calls",
		body: sse(
			textChunk("Both.\n```tool_call\n"+`{"name": "new_answer", "arguments": {"content": "A"}}`+"\n```\n", ""),
			textChunk("```tool_call\n"+`{"name": "vote", "arguments": {"agent_id": "agent1", "reason": "r"}}`+"\n```\n", "STOP")),
		want: []any{
			provider.TextDelta{Text: "Both.\n"},
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "call_1", Name: "new_answer", Arguments: `{"content":"A"}`}},
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "call_2", Name: "vote", Arguments: `{"agent_id":"agent1","reason":"r"}`}},
			usage, provider.Done{StopReason: "tool_calls"},
		},
	}, {
		name: "malformed JSON is still a call, which the engine rejects with a fixable error",
		body: sse(textChunk("Here.\n```tool_call\n"+`{"name": "new_answer", "arguments": {"content": "A",}}`+"\n```", "STOP")),
		want: []any{
			provider.TextDelta{Text: "Here.\n"},
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "call_1", Name: "new_answer", Arguments: `{"name": "new_answer", "arguments": {"content": "A",}}`}},
			usage, provider.Done{StopReason: "tool_calls"},
		},
	}, {
		name: "a block without a name is an invalid_tool_call",
		body: sse(textChunk("```tool_call\n{content: A}\n```", "STOP")),
		want: []any{
			provider.ToolCallChunk{Call: provider.ToolCall{ID: "call_1", Name: "invalid_tool_call", Arguments: `{content: A}`}},
			usage, provider.Done{StopReason: "tool_calls"},
		},
	}, {
		name: "a reply without a block is text",
		body: sse(textChunk("Paris is the capital.\n```python\nprint(1)\n```", ""), textChunk("\nDone.", "STOP")),
		want: []any{
			provider.TextDelta{Text: "Paris is the capital.\n```python\nprint(1)\n"},
			provider.TextDelta{Text: "```\nDone."}, // a line that may open a fence waits for its end
			usage, provider.Done{StopReason: "stop"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			url, reqs := captureServer(t, tc.body)
			p := newTest(t, provider.Options{BaseURL: url, Model: "gemini-2.5-flash", WebSearch: true})
			got := all(t, p, textRequest())
			<-reqs
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// textTranslator is newTranslator in text mode.
func textTranslator() *translator {
	tr := newTranslator(map[string]callMeta{}, false)
	tr.text = &textCalls{}
	return tr
}

func TestTranslator_TextCalls(t *testing.T) {
	call := func(id, name, args string) provider.ToolCallChunk {
		return provider.ToolCallChunk{Call: provider.ToolCall{ID: id, Name: name, Arguments: args}}
	}
	text := func(s string) provider.TextDelta { return provider.TextDelta{Text: s} }
	done := provider.Done{StopReason: "tool_calls"}
	part := func(p string) string { return `{"candidates":[{"content":{"parts":[` + p + `],"role":"model"}}]}` }
	last := `{"candidates":[{"finishReason":"STOP"}]}`
	for _, tc := range []struct {
		name   string
		chunks []string
		want   []any
	}{{
		name:   "CRLF, a label with spaces and words, no closing fence at the end",
		chunks: []string{textChunk("OK.\r\n\r\n```json  tool_call \r\n", ""), textChunk(`{"name": "vote",`+"\r\n"+` "arguments": {"agent_id": "agent1"}}`+"\r\n", "STOP")},
		want:   []any{text("OK.\r\n\r\n"), call("call_1", "vote", `{"agent_id":"agent1"}`), provider.UsageChunk{Usage: provider.Usage{InputTokens: 50, OutputTokens: 9}}, done},
	}, {
		name:   "an indented fence of four backticks, and a block on one line",
		chunks: []string{textChunk("A\n  ````tool_call\n{\"name\":\"a\",\"arguments\":{}}\n````\n```tool_call {\"name\":\"b\"}```", "STOP")},
		want:   []any{text("A\n"), call("call_1", "a", `{}`), call("call_2", "b", `{}`), provider.UsageChunk{Usage: provider.Usage{InputTokens: 50, OutputTokens: 9}}, done},
	}, {
		name: "line breaks inside a JSON string, and a code fence inside the answer",
		chunks: []string{part(`{"text":"Done.\n` + "```tool_call" + `\n{\"name\": \"new_answer\", \"arguments\": {\"content\": \"Code:\n` +
			"```go" + `\nx := 1\n` + "```" + `\nEnd.\"}}\n` + "```" + `\n"}`), last},
		want: []any{text("Done.\n"), call("call_1", "new_answer", `{"content":"Code:\n`+"```go"+`\nx := 1\n`+"```"+`\nEnd."}`), done},
	}, {
		name:   "text after the block is kept; arguments that are not an object are rejected",
		chunks: []string{textChunk("```tool_call\n"+`{"name": "vote", "arguments": ["agent1"]}`+"\n```\nThanks!", "STOP")},
		want: []any{text("Thanks!"), call("call_1", "vote", `{"name": "vote", "arguments": ["agent1"]}`),
			provider.UsageChunk{Usage: provider.Usage{InputTokens: 50, OutputTokens: 9}}, done},
	}, {
		name:   "a fence inside a line, and backticks at the very end, are text",
		chunks: []string{part(`{"text":"Write ` + "```tool_call" + ` blocks.\n` + "``" + `"}`), last},
		want:   []any{text("Write ```tool_call blocks.\n"), text("``"), provider.Done{StopReason: "stop"}},
	}, {
		name: "a fence may open right after code execution; reasoning is never parsed",
		chunks: []string{
			part(`{"text":"` + "```tool_call" + `\n{}\n` + "```" + `","thought":true},{"text":"Computed"}`),
			part(`{"executableCode":{"language":"PYTHON","code":"print(1)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1\n"}}`),
			part(`{"text":"` + "```tool_call" + `\n{\"name\":\"vote\",\"arguments\":{\"agent_id\":\"agent1\"}}\n` + "```" + `"}`), last,
		},
		want: []any{provider.ReasoningDelta{Text: "```tool_call\n{}\n```"}, text("Computed"),
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "code_execution_1", Name: "code_execution", Arguments: `{"code":"print(1)"}`}, Result: "1\n"},
			call("call_2", "vote", `{"agent_id":"agent1"}`), done},
	}, {
		name:   "a block cut off by the token limit is a call the engine rejects",
		chunks: []string{textChunk("```tool_call\n"+`{"name": "new_answer", "arguments": {"content": "Long`, "MAX_TOKENS")},
		want: []any{call("call_1", "new_answer", `{"name": "new_answer", "arguments": {"content": "Long`),
			provider.UsageChunk{Usage: provider.Usage{InputTokens: 50, OutputTokens: 9}}, provider.Done{StopReason: "max_tokens"}},
	}, {
		name:   "a broken stream yields no calls",
		chunks: []string{textChunk("Hi\n```tool_call\n"+`{"name": "vote", "arguments": {}}`+"\n```", "")},
		want:   []any{text("Hi\n"), provider.UsageChunk{Usage: provider.Usage{InputTokens: 50, OutputTokens: 9}}, "error: stream ended before the finish reason"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := translateWith(t, textTranslator(), tc.chunks...)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// However the model's text is cut into chunks, the same text is shown and the same blocks found.
func TestTextCalls_AnySplit(t *testing.T) {
	for _, reply := range []string{
		"Paris.\n\n```tool_call\n{\"name\": \"new_answer\", \"arguments\": {\"content\": \"Paris\"}}\n```\n",
		"Intro\r\n```python\r\nx = 1\r\n```\r\n  ``` tool_call\r\n{\"name\":\"vote\",\"arguments\":{}}\r\n```",
		"``not a fence`` and ` ticks\n```\n````tool_call\n{\"name\":\"a\"}\n````\n```tool_call\n{\"name\":\"b\"}",
		"No calls at all, ending in ``",
	} {
		whole := &textCalls{}
		wantText := whole.feed(reply) + whole.tail()
		if strings.Contains(wantText, "tool_call\n") || strings.Contains(wantText, "tool_call\r") {
			t.Errorf("block shown as text: %q", wantText)
		}
		for split := range len(reply) + 1 {
			for _, pieces := range [][]string{{reply[:split], reply[split:]}, strings.SplitAfter(reply, "")} {
				s := &textCalls{}
				var got strings.Builder
				for _, p := range pieces {
					got.WriteString(s.feed(p))
				}
				got.WriteString(s.tail())
				if got.String() != wantText || !cmp.Equal(s.blocks, whole.blocks) {
					t.Fatalf("split %q: text %q, blocks %q; want %q, %q", pieces, got.String(), s.blocks, wantText, whole.blocks)
				}
			}
		}
	}
}

func TestParseCall(t *testing.T) {
	for _, tc := range []struct{ body, name, args string }{
		{`{"name":"vote","arguments":{"agent_id":"a1"}}`, "vote", `{"agent_id":"a1"}`},
		{` {"arguments": { "x" : [1, 2] }, "name": "t"} `, "t", `{"x":[1,2]}`},
		{`{"name":"t","arguments":null}`, "t", `{}`},
		{"{\"name\":\"t\",\"arguments\":{\"s\":\"a\tb\"}}", "t", `{"s":"a\tb"}`},
		{`{"name":"","arguments":{}}`, invalidToolCall, `{"name":"","arguments":{}}`},
		{`{"name":7}`, invalidToolCall, `{"name":7}`},
		{`[{"name":"vote","arguments":{}}]`, "vote", `[{"name":"vote","arguments":{}}]`},
		{``, invalidToolCall, ``},
	} {
		name, args, _ := parseCall(tc.body)
		if name != tc.name || args != tc.args {
			t.Errorf("parseCall(%q) = %q, %q; want %q, %q", tc.body, name, args, tc.name, tc.args)
		}
	}
}

func TestWithToolProtocol_BadSchema(t *testing.T) {
	_, err := withToolProtocol("", []provider.ToolSpec{{Name: "t", Parameters: map[string]any{"f": func() {}}}}, provider.Options{WebSearch: true})
	if err == nil || !strings.Contains(err.Error(), `tool "t"`) || errors.Unwrap(err) == nil {
		t.Errorf("err = %v", err)
	}
}

// FuzzTextCalls: any reply, split anywhere, shows the same text and finds the same blocks as
// the whole reply, and every block parses to a name and arguments without panicking.
func FuzzTextCalls(f *testing.F) {
	f.Add("Paris.\n\n```tool_call\n{\"name\": \"new_answer\", \"arguments\": {\"content\": \"Paris\"}}\n```\n", 9)
	f.Add("```tool_call {\"name\":\"vote\"}\n", 3)
	f.Add("a\n```\n```tool_call\n{\"name\":\"b\",\"arguments\":{\"s\":\"x\ny\"}}\n````", 20)
	f.Fuzz(func(t *testing.T, reply string, split int) {
		if split < 0 || split > len(reply) {
			split = len(reply) / 2
		}
		whole := &textCalls{}
		wantText := whole.feed(reply) + whole.tail()
		s := &textCalls{}
		got := s.feed(reply[:split]) + s.feed(reply[split:]) + s.tail()
		if got != wantText || !cmp.Equal(s.blocks, whole.blocks) {
			t.Fatalf("split at %d: text %q, blocks %q; whole: %q, %q", split, got, s.blocks, wantText, whole.blocks)
		}
		for _, b := range s.blocks {
			name, args, ok := parseCall(b)
			if name == "" || ok && !json.Valid([]byte(args)) {
				t.Fatalf("block %q: name %q args %q ok %v", b, name, args, ok)
			}
		}
	})
}
