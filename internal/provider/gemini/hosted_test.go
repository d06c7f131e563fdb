package gemini

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

func TestStream_HostedToolsRequest(t *testing.T) {
	vote := map[string]any{"functionDeclarations": []any{map[string]any{
		"name": "vote", "description": "Vote for the best answer.",
		"parametersJsonSchema": asJSON(t, providertest.Request().Tools[0].Parameters),
	}}}
	search := map[string]any{"googleSearch": map[string]any{}}
	code := map[string]any{"codeExecution": map[string]any{}}
	for _, tc := range []struct {
		name              string
		web, exec, noDecl bool
		want              any // nil: no "tools" key at all
	}{
		{name: "off: only the function declarations", want: []any{vote}},
		// With function tools, the declarations move to the system instruction (textcalls.go).
		{name: "web search", web: true, want: []any{search}},
		{name: "code execution", exec: true, want: []any{code}},
		{name: "both", web: true, exec: true, want: []any{search, code}},
		{name: "both without function tools", web: true, exec: true, noDecl: true, want: []any{search, code}},
		{name: "off without function tools", noDecl: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, reqs := captureServer(t, providertest.Transcript(t, "text.sse"))
			p := newTest(t, provider.Options{BaseURL: url, Model: "gemini-2.5-flash", WebSearch: tc.web, CodeExecution: tc.exec})
			req := providertest.Request()
			if tc.noDecl {
				req.Tools = nil
			}
			got, ok := sent(t, p, reqs, req).Body["tools"]
			if tc.want == nil {
				if ok {
					t.Errorf("tools sent: %v", got)
				}
				return
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("tools (-want +got):\n%s", d)
			}
		})
	}
}

// all runs one Stream call and returns every chunk, the error last if there is one.
func all(t *testing.T, p provider.Provider, req provider.Request) []any {
	t.Helper()
	var out []any
	for c, err := range p.Stream(t.Context(), req) {
		if err != nil {
			out = append(out, "error: "+err.Error())
			break
		}
		out = append(out, c)
	}
	return out
}

func TestStream_HostedTools(t *testing.T) {
	const redirect = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
	sources := "4 sources:" +
		"\n- nobelprize.org <" + redirect + "AUZIYQGq2nQ0c5Jm1wq7v6dX3WmYbKp8lqK0t4n2Z8cR>" +
		"\n- wikipedia.org <" + redirect + "AUZIYQHf7sX1u9Vb0kO2eP4rT6yL3aN8mQ5wJ1cD7gE>" +
		"\n- reuters.com <" + redirect + "AUZIYQE3pR8tY1uI6oP9aS2dF5gH4jK7lZ0xC3vB6nM>" +
		"\n- and 1 more"
	searches := []any{
		provider.TextDelta{Text: "The 2024 Nobel Prize in Physics was awarded to John J. Hopfield and Geoffrey E. Hinton "},
		provider.TextDelta{Text: `"for foundational discoveries and inventions that enable machine learning with artificial neural networks".`},
		provider.HostedToolChunk{Call: provider.ToolCall{ID: "web_search_1", Name: provider.HostedWebSearch,
			Arguments: `{"query":"2024 Nobel Prize in Physics winners"}`}, Result: sources},
		provider.HostedToolChunk{Call: provider.ToolCall{ID: "web_search_2", Name: provider.HostedWebSearch,
			Arguments: `{"query":"Nobel Prize physics 2024 Hopfield Hinton citation"}`}, Result: sources},
	}
	// The search results fed to the model are input; thoughts are output.
	searchUsage := provider.Usage{InputTokens: 14 + 312, OutputTokens: 38 + 106, ReasoningTokens: 106}
	withSearches := func(u provider.Usage, n int64) provider.Usage { u.WebSearches = n; return u }

	// The code as JSON, with its < left as it is.
	failedArgs := `{"code":"primes = []\nn = 2\nwhile len(primes) < 50:\n    if all(n % p for p in primes if p * p <= n):\n` +
		`        primes.append(n)\n    n += 1\nprint(sum(primes[:50]), prims[-1])\n"}`
	fixedArgs := strings.Replace(strings.Replace(failedArgs, "prims[-1]", "primes[-1]", 1), "primes[:50]", "primes", 1)

	for _, tc := range []struct {
		name, transcript, model string
		want                    []any
	}{{
		name: "grounding before Gemini 3 bills one search per response", transcript: "web_search.sse", model: "gemini-2.5-flash",
		want: append(searches, provider.UsageChunk{Usage: withSearches(searchUsage, 1)}, provider.Done{StopReason: "stop"}),
	}, {
		name: "grounding from Gemini 3 bills each query", transcript: "web_search.sse", model: "gemini-3-pro-preview",
		want: append(searches, provider.UsageChunk{Usage: withSearches(searchUsage, 2)}, provider.Done{StopReason: "stop"}),
	}, {
		name: "code and its output are hosted runs, never text", transcript: "code_execution.sse", model: "gemini-2.5-flash",
		want: []any{
			provider.TextDelta{Text: "I'll compute the sum of the first 50 prime numbers with code."},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "code_execution_1", Name: provider.HostedCodeExecution, Arguments: failedArgs},
				Result: "Traceback (most recent call last):\n  File \"<string>\", line 7, in <module>\n" +
					"NameError: name 'prims' is not defined. Did you mean: 'primes'?\n", Failed: true},
			provider.TextDelta{Text: "There was a typo; let me fix it."},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "code_execution_2", Name: provider.HostedCodeExecution, Arguments: fixedArgs},
				Result: "5117 229\n"},
			provider.TextDelta{Text: "The sum of the first 50 prime numbers is 5117 (the 50th prime is 229)."},
			provider.UsageChunk{Usage: provider.Usage{InputTokens: 22 + 303, OutputTokens: 171}},
			provider.Done{StopReason: "stop"},
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			url, reqs := captureServer(t, providertest.Transcript(t, tc.transcript))
			p := newTest(t, provider.Options{BaseURL: url, Model: tc.model, WebSearch: true, CodeExecution: true})
			req := providertest.Request()
			req.Model = ""
			got := all(t, p, req)
			<-reqs
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
			for _, c := range got {
				if d, ok := c.(provider.TextDelta); ok && (strings.Contains(d.Text, "primes") || strings.Contains(d.Text, "5117 229")) {
					t.Errorf("code or its output leaked into the text: %q", d.Text)
				}
			}
		})
	}
}

func TestTranslator_HostedTools(t *testing.T) {
	long := strings.Repeat("é", 1500) // 3000 bytes
	for _, tc := range []struct {
		name     string
		perQuery bool
		chunks   []string
		want     []any
	}{{
		name: "results pair with their code by wire ID; HTML characters stay readable",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"executableCode":{"id":"e1","language":"PYTHON","code":"print(1 < 2 & True)"}},` +
				`{"executableCode":{"id":"e2","language":"PYTHON","code":"print(2)"}},` +
				`{"codeExecutionResult":{"id":"e2","outcome":"OUTCOME_OK","output":"2\n"}},` +
				`{"codeExecutionResult":{"id":"e1","outcome":"OUTCOME_OK","output":"True\n"}}],"role":"model"},"finishReason":"STOP"}]}`,
		},
		want: []any{
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "e2", Name: "code_execution", Arguments: `{"code":"print(2)"}`}, Result: "2\n"},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "e1", Name: "code_execution", Arguments: `{"code":"print(1 < 2 & True)"}`}, Result: "True\n"},
			provider.Done{StopReason: "stop"},
		},
	}, {
		name: "a timeout is a failure that says so; long output is cut on a rune boundary",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"while True: pass"}}],"role":"model"}}]}`,
			`{"candidates":[{"content":{"parts":[{"codeExecutionResult":{"outcome":"OUTCOME_DEADLINE_EXCEEDED"}}],"role":"model"}}]}`,
			`{"candidates":[{"content":{"parts":[{"executableCode":{"language":"PYTHON","code":"print('é' * 1500)"}}],"role":"model"}}]}`,
			`{"candidates":[{"content":{"parts":[{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"` + long + `"}}],"role":"model"},"finishReason":"STOP"}]}`,
		},
		want: []any{
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "code_execution_1", Name: "code_execution", Arguments: `{"code":"while True: pass"}`},
				Result: "timed out (OUTCOME_DEADLINE_EXCEEDED)", Failed: true},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "code_execution_2", Name: "code_execution", Arguments: `{"code":"print('é' * 1500)"}`},
				Result: long[:2048] + "\n... (952 more bytes)"},
			provider.Done{StopReason: "stop"},
		},
	}, {
		name: "code cut off before its result is still reported, before the usage",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Running:"},{"executableCode":{"language":"PYTHON","code":"print(42)"}}],"role":"model"},` +
				`"finishReason":"MAX_TOKENS"}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":9}}`,
		},
		want: []any{
			provider.TextDelta{Text: "Running:"},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "code_execution_1", Name: "code_execution", Arguments: `{"code":"print(42)"}`}},
			provider.UsageChunk{Usage: provider.Usage{InputTokens: 5, OutputTokens: 9}},
			provider.Done{StopReason: "max_tokens"},
		},
	}, {
		name:     "repeated grounding metadata counts each query once (Gemini 3)",
		perQuery: true,
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Sunny."}],"role":"model"},"groundingMetadata":{"webSearchQueries":["weather Paris"],` +
				`"groundingChunks":[{"web":{"uri":"https://example.org/a","title":"a.org"}}]}}]}`,
			`{"candidates":[{"content":{"parts":[{"text":""}],"role":"model"},"finishReason":"STOP","groundingMetadata":{"webSearchQueries":["weather Paris","Paris forecast"],` +
				`"groundingChunks":[{"web":{"uri":"https://example.org/a","title":"a.org"}}],"searchEntryPoint":{"renderedContent":"<div></div>"}}}],` +
				`"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":2}}`,
		},
		want: []any{
			provider.TextDelta{Text: "Sunny."},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "web_search_1", Name: "web_search", Arguments: `{"query":"weather Paris"}`},
				Result: "1 source:\n- a.org <https://example.org/a>"},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "web_search_2", Name: "web_search", Arguments: `{"query":"Paris forecast"}`},
				Result: "1 source:\n- a.org <https://example.org/a>"},
			provider.UsageChunk{Usage: provider.Usage{InputTokens: 4, OutputTokens: 2, WebSearches: 2}},
			provider.Done{StopReason: "stop"},
		},
	}, {
		name: "sources without queries are one search; no usage metadata still reports it",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Yes."}],"role":"model"},"finishReason":"STOP",` +
				`"groundingMetadata":{"groundingChunks":[{"web":{"uri":"https://example.org/b"}}]}}]}`,
		},
		want: []any{
			provider.TextDelta{Text: "Yes."},
			provider.HostedToolChunk{Call: provider.ToolCall{ID: "web_search_1", Name: "web_search", Arguments: `{}`},
				Result: "1 source:\n- https://example.org/b"},
			provider.UsageChunk{Usage: provider.Usage{WebSearches: 1}},
			provider.Done{StopReason: "stop"},
		},
	}, {
		name: "grounding metadata without searches is not a search",
		chunks: []string{
			`{"candidates":[{"content":{"parts":[{"text":"Hi."}],"role":"model"},"finishReason":"STOP","groundingMetadata":{}}]}`,
		},
		want: []any{provider.TextDelta{Text: "Hi."}, provider.Done{StopReason: "stop"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got := translateWith(t, newTranslator(map[string]callMeta{}, tc.perQuery), tc.chunks...)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestStream_HostedCodeIsNotSentBack(t *testing.T) {
	url, reqs := captureServer(t, providertest.Transcript(t, "code_execution.sse"))
	p := newTest(t, provider.Options{BaseURL: url, Model: "gemini-2.5-flash", CodeExecution: true})
	req := providertest.Request()
	r := providertest.Collect(t.Context(), p, req)
	<-reqs
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: r.Text},
		provider.Message{Role: provider.RoleUser, Content: "Now vote."})
	got := sent(t, p, reqs, req).Body["contents"].([]any)
	want := map[string]any{"role": "model", "parts": []any{map[string]any{"text": "I'll compute the sum of the first 50 prime numbers with code." +
		"There was a typo; let me fix it.The sum of the first 50 prime numbers is 5117 (the 50th prime is 229)."}}}
	if len(got) != 3 {
		t.Fatalf("contents: %s", toJSON(t, got))
	}
	if d := cmp.Diff(want, got[1]); d != "" {
		t.Errorf("model turn (-want +got):\n%s", d)
	}
}

func TestStream_HostedToolsRejected(t *testing.T) {
	for _, tc := range []struct {
		name               string
		web, exec          bool
		msg                string
		contains, excludes []string
	}{{
		name: "a model without search says which key to remove", web: true,
		msg:      "Search Grounding is not supported. (" + secretKey + ")",
		contains: []string{`"gemini-2.5-flash"`, "remove enable_web_search", "use a model that supports it", "Search Grounding is not supported", "INVALID_ARGUMENT"},
		excludes: []string{"enable_code_execution"},
	}, {
		name: "both tools are named", web: true, exec: true,
		msg:      "Multiple tools are supported only when they are all search tools.",
		contains: []string{"remove enable_web_search and enable_code_execution", "Multiple tools are supported only"},
	}, {
		name: "code execution alone", exec: true,
		msg:      "Built-in tools ({code_execution}) and Function Calling cannot be combined: not supported for this model.",
		contains: []string{"remove enable_code_execution"},
		excludes: []string{"enable_web_search"},
	}, {
		name:     "without hosted tools the usual 400 message stays",
		msg:      "Tool use with function calling is unsupported",
		contains: []string{"check the backend's parameters"},
		excludes: []string{"enable_web_search", "enable_code_execution"},
	}, {
		name: "an unrelated 400 is not blamed on the hosted tools", web: true,
		msg:      "Invalid JSON payload received. Unknown name \"temprature\" at 'generation_config': Cannot find field.",
		contains: []string{"check the backend's parameters", "temprature"},
		excludes: []string{"enable_web_search"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"error":{"code":400,"message":` + toJSON(t, tc.msg) + `,"status":"INVALID_ARGUMENT"}}`
			url, n := scriptedServer(t, func(w http.ResponseWriter, _ int) { writeJSON(w, 400, nil, body) })
			p := newTest(t, provider.Options{BaseURL: url, APIKey: secretKey, Model: "gemini-2.5-flash",
				WebSearch: tc.web, CodeExecution: tc.exec})
			req := providertest.Request()
			req.Model = ""
			r := providertest.Collect(t.Context(), p, req)
			var pe *provider.Error
			if !errors.As(r.Err, &pe) || !pe.Fatal || pe.Status != 400 || n.Load() != 1 {
				t.Fatalf("got %v after %d requests, want a fatal 400 after 1", r.Err, n.Load())
			}
			msg := r.Err.Error()
			if strings.Contains(msg, secretKey) {
				t.Errorf("the error shows the key: %s", msg)
			}
			for _, s := range tc.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not say %q", msg, s)
				}
			}
			for _, s := range tc.excludes {
				if strings.Contains(msg, s) {
					t.Errorf("error %q says %q", msg, s)
				}
			}
		})
	}
}

func TestHostedToolsRejected(t *testing.T) {
	for msg, want := range map[string]bool{
		"Tool use with function calling is unsupported":                                         true,
		"Search Grounding is not supported.":                                                    true,
		"Please enable tool_config.include_server_side_tool_invocations to use Built-in tools.": true,
		"Code execution is not enabled for models/gemini-2.0-flash-lite":                        true,
		"Request contains an invalid argument.":                                                 false,
		"* GenerateContentRequest.contents: contents is not specified":                          false,
	} {
		if got := hostedToolsRejected(msg); got != want {
			t.Errorf("hostedToolsRejected(%q) = %v", msg, got)
		}
	}
}

func TestPerQuerySearch(t *testing.T) {
	for model, want := range map[string]bool{
		"gemini-3-pro-preview": true, "models/gemini-3-flash-preview": true, "Gemini-3.1-pro": true,
		"gemini-2.5-pro": false, "gemini-2.0-flash": false, "gemini-flash-latest": false,
	} {
		if got := perQuerySearch(model); got != want {
			t.Errorf("perQuerySearch(%q) = %v", model, got)
		}
	}
}
