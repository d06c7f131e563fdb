package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// voteTool is providertest.Request's tool as the body carries it.
const voteTool = `{"type": "function", "name": "vote", "description": "Vote for the best answer.", "strict": false,
	"parameters": {"type": "object", "properties": {"agent_id": {"type": "string", "enum": ["agent1"]}, "reason": {"type": "string"}},
	"required": ["agent_id", "reason"]}}`

func TestToWire_HostedTools(t *testing.T) {
	for _, tc := range []struct {
		name                string
		webSearch, code     bool
		params              map[string]any
		wantTools           string
		wantInclude         string // "" when include must be absent
		wantOtherParamsSent map[string]any
	}{
		{
			name:      "off: nothing added",
			wantTools: `[` + voteTool + `]`,
		},
		{
			name:        "web search",
			webSearch:   true,
			wantTools:   `[` + voteTool + `, {"type": "web_search"}]`,
			wantInclude: `["web_search_call.action.sources"]`,
		},
		{
			name:        "code interpreter",
			code:        true,
			wantTools:   `[` + voteTool + `, {"type": "code_interpreter", "container": {"type": "auto"}}]`,
			wantInclude: `["code_interpreter_call.outputs"]`,
		},
		{
			name:        "both, in a stable order after the function tools",
			webSearch:   true,
			code:        true,
			wantTools:   `[` + voteTool + `, {"type": "web_search"}, {"type": "code_interpreter", "container": {"type": "auto"}}]`,
			wantInclude: `["web_search_call.action.sources", "code_interpreter_call.outputs"]`,
		},
		{
			name:      "the user's include is merged without repeats",
			webSearch: true,
			code:      true,
			params: map[string]any{
				"include":     []any{"reasoning.encrypted_content", "code_interpreter_call.outputs"},
				"temperature": 0.5,
			},
			wantTools:           `[` + voteTool + `, {"type": "web_search"}, {"type": "code_interpreter", "container": {"type": "auto"}}]`,
			wantInclude:         `["web_search_call.action.sources", "code_interpreter_call.outputs", "reasoning.encrypted_content"]`,
			wantOtherParamsSent: map[string]any{"temperature": 0.5},
		},
		{
			name:        "the user's include passes through with the tools off",
			params:      map[string]any{"include": []string{"message.output_text.logprobs"}},
			wantTools:   `[` + voteTool + `]`,
			wantInclude: `["message.output_text.logprobs"]`,
		},
		{
			name:      "the user's own search and container replace ours; other hosted tools are appended",
			webSearch: true,
			code:      true,
			params: map[string]any{"tools": []any{
				map[string]any{"type": "web_search", "filters": map[string]any{"allowed_domains": []any{"pubmed.ncbi.nlm.nih.gov"}}},
				map[string]any{"type": "code_interpreter", "container": "cntr_abc"},
				map[string]any{"type": "file_search", "vector_store_ids": []any{"vs_1"}},
			}},
			wantTools: `[` + voteTool + `,
				{"type": "web_search", "filters": {"allowed_domains": ["pubmed.ncbi.nlm.nih.gov"]}},
				{"type": "code_interpreter", "container": "cntr_abc"},
				{"type": "file_search", "vector_store_ids": ["vs_1"]}]`,
			wantInclude: `["web_search_call.action.sources", "code_interpreter_call.outputs"]`,
		},
		{
			name:        "a preview search tool in the params also replaces ours",
			webSearch:   true,
			params:      map[string]any{"extra_body": map[string]any{"tools": []any{map[string]any{"type": "web_search_preview"}}}},
			wantTools:   `[` + voteTool + `, {"type": "web_search_preview"}]`,
			wantInclude: `["web_search_call.action.sources"]`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := captureBody(t, provider.Options{WebSearch: tc.webSearch, CodeExecution: tc.code, Params: tc.params}, providertest.Request())
			if d := cmp.Diff(jsonValue(t, tc.wantTools), got["tools"]); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
			inc, sent := got["include"]
			switch {
			case tc.wantInclude == "" && sent:
				t.Errorf("include %v was sent", inc)
			case tc.wantInclude != "":
				if d := cmp.Diff(jsonValue(t, tc.wantInclude), inc); d != "" {
					t.Errorf("include (-want +got):\n%s", d)
				}
			}
			for k, v := range tc.wantOtherParamsSent {
				if d := cmp.Diff(v, got[k]); d != "" {
					t.Errorf("%s (-want +got):\n%s", k, d)
				}
			}
		})
	}
}

func TestToWire_HostedParamErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"a function tool in the params", map[string]any{"tools": []any{map[string]any{"type": "function", "name": "f"}}},
			`tools[0] has type "function"`},
		{"a tool without a type", map[string]any{"tools": []any{map[string]any{"name": "x"}}}, `tools[0] has type ""`},
		{"tools not a list", map[string]any{"tools": "web_search"}, "tools must be a list of tool objects"},
		{"include not a list of strings", map[string]any{"include": []any{1}}, "include must be a list of strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, provider.Options{APIKey: "k", BaseURL: "http://127.0.0.1:1/v1", WebSearch: true, Params: tc.params})
			r := providertest.Collect(t.Context(), p, providertest.Request())
			if !provider.IsFatal(r.Err) || !strings.Contains(r.Err.Error(), tc.want) {
				t.Fatalf("err = %v, want a fatal error saying %q", r.Err, tc.want)
			}
		})
	}
}

func TestToWireInput_HostedCallsAreNotSentBack(t *testing.T) {
	items, err := toWireInput([]provider.Message{
		{Role: provider.RoleUser, Content: "q"},
		{Role: provider.RoleAssistant, Content: "Paris.", ToolCalls: []provider.ToolCall{
			{ID: "ws_1", Name: provider.HostedWebSearch, Arguments: `{"query":"capital of France"}`},
			{ID: "ci_1", Name: provider.HostedCodeExecution, Arguments: `{"code":"1+1"}`},
			{ID: "call_1", Name: "web_search", Arguments: `{"q":"x"}`}, // an MCP tool of that name
		}},
		{Role: provider.RoleTool, ToolCallID: "ws_1", Content: "4 sources"},
		{Role: provider.RoleTool, ToolCallID: "call_1", Content: "result"},
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(items)
	want := jsonValue(t, `[
		{"role": "user", "content": "q"},
		{"role": "assistant", "content": "Paris."},
		{"type": "function_call", "call_id": "call_1", "name": "web_search", "arguments": "{\"q\":\"x\"}"},
		{"type": "function_call_output", "call_id": "call_1", "output": "result"}
	]`)
	if d := cmp.Diff(want, jsonValue(t, string(b))); d != "" {
		t.Errorf("items (-want +got):\n%s", d)
	}
}

func hostedChunk(id, name, args, result string, failed bool) provider.HostedToolChunk {
	return provider.HostedToolChunk{Call: provider.ToolCall{ID: id, Name: name, Arguments: args}, Result: result, Failed: failed}
}

// streamResult is everything one Stream call yielded, text joined.
type streamResult struct {
	Hosted []provider.HostedToolChunk
	Calls  []provider.ToolCall
	Text   string
	Usage  provider.Usage
	Stop   string
	Order  []string // chunk kinds as they came, runs of text collapsed
}

func TestStream_HostedTools(t *testing.T) {
	for _, tc := range []struct {
		transcript string
		want       streamResult
	}{
		{
			transcript: "web_search.sse",
			want: streamResult{
				Hosted: []provider.HostedToolChunk{
					hostedChunk("ws_68c1a1", provider.HostedWebSearch, `{"query":"capital of France"}`,
						"4 sources:\n- https://en.wikipedia.org/wiki/Paris\n- https://www.britannica.com/place/Paris\n- https://www.france.fr/en/paris\n- and 1 more", false),
					hostedChunk("ws_68c1a2", provider.HostedWebSearch, `{"url":"https://en.wikipedia.org/wiki/Paris"}`, "", false),
					hostedChunk("ws_68c1a3", provider.HostedWebSearch, `{"pattern":"capital","url":"https://en.wikipedia.org/wiki/Paris"}`, "", false),
				},
				Text:  "The capital of France is Paris ([en.wikipedia.org](https://en.wikipedia.org/wiki/Paris?utm_source=openai)).",
				Usage: provider.Usage{InputTokens: 8412, CachedInputTokens: 1024, OutputTokens: 187, ReasoningTokens: 64, WebSearches: 1},
				Stop:  "stop",
				Order: []string{"hosted", "hosted", "hosted", "text", "usage", "done"},
			},
		},
		{
			transcript: "code_interpreter.sse",
			want: streamResult{
				Hosted: []provider.HostedToolChunk{
					hostedChunk("ci_68d1a1", provider.HostedCodeExecution, `{"code":"import math\nx = math.log2(10)\nprint(x, x < 4)"}`,
						"3.321928094887362 True", false),
					hostedChunk("ci_68d1a2", provider.HostedCodeExecution, `{"code":"import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [1, 4, 9])\nplt.show()"}`,
						"image output", false),
				},
				Text:  "log2(10) ≈ 3.3219, and the plot is above.",
				Usage: provider.Usage{InputTokens: 1312, CachedInputTokens: 1024, OutputTokens: 96},
				Stop:  "stop",
				Order: []string{"hosted", "hosted", "text", "usage", "done"},
			},
		},
	} {
		t.Run(tc.transcript, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
				_, _ = w.Write([]byte(providertest.Transcript(t, tc.transcript)))
			}))
			defer srv.Close()
			p := newProvider(t, provider.Options{APIKey: "k", BaseURL: srv.URL + "/v1", WebSearch: true, CodeExecution: true})
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var got streamResult
			kind := func(k string) {
				if n := len(got.Order); n == 0 || k != "text" || got.Order[n-1] != "text" {
					got.Order = append(got.Order, k)
				}
			}
			for c, err := range p.Stream(ctx, providertest.Request()) {
				if err != nil {
					t.Fatal(err)
				}
				switch v := c.(type) {
				case provider.HostedToolChunk:
					got.Hosted = append(got.Hosted, v)
					kind("hosted")
				case provider.ToolCallChunk:
					got.Calls = append(got.Calls, v.Call)
					kind("call")
				case provider.TextDelta:
					got.Text += v.Text
					kind("text")
				case provider.UsageChunk:
					got.Usage = got.Usage.Add(v.Usage)
					kind("usage")
				case provider.Done:
					got.Stop = v.StopReason
					kind("done")
				default:
					kind("other")
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("stream (-want +got):\n%s", d)
			}
			for _, h := range got.Hosted {
				if !json.Valid([]byte(h.Call.Arguments)) {
					t.Errorf("arguments %q are not JSON", h.Call.Arguments)
				}
			}
		})
	}
}

// Items as the output_item.done events carry them.
const (
	wsFailed   = `{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_f","type":"web_search_call","status":"failed","action":{"type":"search","query":"paris weather"}}}`
	wsNoAction = `{"type":"response.output_item.done","output_index":0,"item":{"id":"ws_n","type":"web_search_call","status":"incomplete"}}`
	wsQueries  = `{"type":"response.output_item.done","output_index":1,"item":{"id":"ws_q","type":"web_search_call","status":"completed","action":{"type":"search","queries":["a","b"],"sources":[{"type":"url","url":"https://a.example"}]}}}`
	wsNoSource = `{"type":"response.output_item.done","output_index":2,"item":{"id":"ws_s","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}}}`
	wsOldFind  = `{"type":"response.output_item.done","output_index":3,"item":{"id":"ws_o","type":"web_search_call","status":"completed","action":{"type":"find","pattern":"p","url":"https://a.example"}}}`
)

func TestTranslator_Hosted(t *testing.T) {
	longLogs := strings.Repeat("é", 1500) // 3000 bytes
	for _, tc := range []struct {
		name    string
		events  string
		want    []provider.Chunk
		wantErr string
	}{
		{
			name:   "a failed search is reported failed and not counted",
			events: wsFailed + "\n" + completed,
			want: []provider.Chunk{
				hostedChunk("ws_f", provider.HostedWebSearch, `{"query":"paris weather"}`, "", true),
				usage10, provider.Done{StopReason: "stop"},
			},
		},
		{
			name:   "an incomplete item without an action",
			events: wsNoAction + "\n" + completed,
			want:   []provider.Chunk{hostedChunk("ws_n", provider.HostedWebSearch, `{}`, "", true), usage10, provider.Done{StopReason: "stop"}},
		},
		{
			name:   "several queries, no sources asked for, the older find",
			events: wsQueries + "\n" + wsNoSource + "\n" + wsOldFind + "\n" + completed,
			want: []provider.Chunk{
				hostedChunk("ws_q", provider.HostedWebSearch, `{"query":"a","queries":["a","b"]}`, "1 source:\n- https://a.example", false),
				hostedChunk("ws_s", provider.HostedWebSearch, `{"query":"q"}`, "", false),
				hostedChunk("ws_o", provider.HostedWebSearch, `{"pattern":"p","url":"https://a.example"}`, "", false),
				provider.UsageChunk{Usage: provider.Usage{InputTokens: 10, CachedInputTokens: 4, OutputTokens: 6, ReasoningTokens: 2, WebSearches: 2}},
				provider.Done{StopReason: "stop"},
			},
		},
		{
			name: "an item repeated in the final response is sent once; one only listed there is sent then",
			events: wsNoSource + "\n" +
				`{"type":"response.completed","response":{"status":"completed","output":[{"id":"ws_s","type":"web_search_call","status":"completed","action":{"type":"search","query":"q"}},{"id":"ws_late","type":"web_search_call","status":"completed","action":{"type":"search","query":"late"}}]}}`,
			want: []provider.Chunk{
				hostedChunk("ws_s", provider.HostedWebSearch, `{"query":"q"}`, "", false),
				hostedChunk("ws_late", provider.HostedWebSearch, `{"query":"late"}`, "", false),
				provider.UsageChunk{Usage: provider.Usage{WebSearches: 2}},
				provider.Done{StopReason: "stop"},
			},
		},
		{
			name: "code from the code.done event when the item lacks it; long logs are cut; a failed run",
			events: `{"type":"response.code_interpreter_call_code.delta","output_index":0,"item_id":"ci_1","delta":"print('é'*1500)"}
{"type":"response.code_interpreter_call_code.done","output_index":0,"item_id":"ci_1","code":"print('é'*1500)"}
{"type":"response.output_item.done","output_index":0,"item":{"id":"ci_1","type":"code_interpreter_call","status":"failed","code":null,"container_id":"cntr_1","outputs":[{"type":"logs","logs":"` + longLogs + `\n"}]}}
` + completed,
			want: []provider.Chunk{
				hostedChunk("ci_1", provider.HostedCodeExecution, `{"code":"print('é'*1500)"}`, strings.Repeat("é", 1024)+"\n... (952 more bytes)", true),
				usage10, provider.Done{StopReason: "stop"},
			},
		},
		{
			name: "code outputs: none asked for, an empty list, logs and an image",
			events: `{"type":"response.output_item.done","output_index":0,"item":{"id":"ci_1","type":"code_interpreter_call","status":"completed","code":"x = 1","container_id":"c","outputs":null}}
{"type":"response.output_item.done","output_index":1,"item":{"id":"ci_2","type":"code_interpreter_call","status":"completed","code":"x = 2","container_id":"c","outputs":[]}}
{"type":"response.output_item.done","output_index":2,"item":{"id":"ci_3","type":"code_interpreter_call","status":"completed","code":"plot()","container_id":"c","outputs":[{"type":"logs","logs":"ok\n"},{"type":"image","url":"data:image/png;base64,AAAA"}]}}
` + completed,
			want: []provider.Chunk{
				hostedChunk("ci_1", provider.HostedCodeExecution, `{"code":"x = 1"}`, "", false),
				hostedChunk("ci_2", provider.HostedCodeExecution, `{"code":"x = 2"}`, "no output", false),
				hostedChunk("ci_3", provider.HostedCodeExecution, `{"code":"plot()"}`, "ok\nimage output", false),
				usage10, provider.Done{StopReason: "stop"},
			},
		},
		{
			name: "hosted items beside a function call: only the call makes a tool_calls stop",
			events: wsNoSource + `
{"type":"response.output_item.done","output_index":3,"item":{"type":"function_call","call_id":"call_1","name":"vote","arguments":"{}"}}
` + completed,
			want: []provider.Chunk{
				hostedChunk("ws_s", provider.HostedWebSearch, `{"query":"q"}`, "", false),
				call("call_1", "vote", "{}"),
				provider.UsageChunk{Usage: provider.Usage{InputTokens: 10, CachedInputTokens: 4, OutputTokens: 6, ReasoningTokens: 2, WebSearches: 1}},
				provider.Done{StopReason: "tool_calls"},
			},
		},
		{
			name:    "searches done before a failure are still billed",
			events:  wsNoSource + "\n" + `{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"Oops."},"usage":null}}`,
			want:    []provider.Chunk{hostedChunk("ws_s", provider.HostedWebSearch, `{"query":"q"}`, "", false), provider.UsageChunk{Usage: provider.Usage{WebSearches: 1}}},
			wantErr: "response failed: Oops. (server_error)",
		},
		{
			name: "progress, code deltas and annotations yield nothing",
			events: `{"type":"response.output_item.added","output_index":0,"item":{"id":"ws_1","type":"web_search_call","status":"in_progress","action":{"type":"search"}}}
{"type":"response.web_search_call.in_progress","output_index":0,"item_id":"ws_1"}
{"type":"response.web_search_call.searching","output_index":0,"item_id":"ws_1"}
{"type":"response.web_search_call.completed","output_index":0,"item_id":"ws_1"}
{"type":"response.code_interpreter_call.in_progress","output_index":1,"item_id":"ci_1"}
{"type":"response.code_interpreter_call_code.delta","output_index":1,"item_id":"ci_1","delta":"1+1"}
{"type":"response.code_interpreter_call.interpreting","output_index":1,"item_id":"ci_1"}
{"type":"response.code_interpreter_call.completed","output_index":1,"item_id":"ci_1"}
{"type":"response.output_text.annotation.added","item_id":"msg_1","output_index":2,"content_index":0,"annotation_index":0,"annotation":{"type":"url_citation","start_index":0,"end_index":5,"title":"T","url":"https://a.example"}}
` + completed,
			want: []provider.Chunk{usage10, provider.Done{StopReason: "stop"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := translate(t, tc.events)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("chunks (-want +got):\n%s", d)
			}
			if (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
				t.Errorf("err = %v, want %q", err, tc.wantErr)
			}
		})
	}
}
