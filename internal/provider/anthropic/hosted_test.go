package anthropic

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// collect runs one Stream call and returns every chunk it produced, in order.
func collect(t *testing.T, p provider.Provider, req provider.Request) []provider.Chunk {
	t.Helper()
	var out []provider.Chunk
	for c, err := range p.Stream(t.Context(), req) {
		if err != nil {
			t.Fatalf("stream error after %d chunks: %v", len(out), err)
		}
		out = append(out, c)
	}
	return out
}

// serverSeq answers the n-th request with bodies[n] (the last one once they run out) and
// records the requests.
func serverSeq(t *testing.T, bodies ...string) (string, <-chan captured, *atomic.Int32) {
	t.Helper()
	reqs := make(chan captured, 16)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		raw, _ := io.ReadAll(r.Body)
		c := captured{path: r.URL.Path, header: r.Header.Clone()}
		if err := json.Unmarshal(raw, &c.body); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, raw)
		}
		select {
		case reqs <- c:
		default:
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, bodies[min(i, len(bodies)-1)])
	}))
	t.Cleanup(srv.Close)
	return srv.URL, reqs, &n
}

func newHosted(t *testing.T, url string) *Provider {
	t.Helper()
	p, err := New(provider.Options{Type: Type, Model: "claude-sonnet-4-5-20250929", APIKey: "k", BaseURL: url,
		WebSearch: true, CodeExecution: true})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func hosted(id, name, args, result string, failed bool) provider.Chunk {
	return provider.HostedToolChunk{Call: provider.ToolCall{ID: id, Name: name, Arguments: args}, Result: result, Failed: failed}
}

func text(s string) provider.Chunk { return provider.TextDelta{Text: s} }

func TestToWire_HostedTools(t *testing.T) {
	vote := `{"name": "vote", "description": "Vote for the best answer.",
		"input_schema": {"type": "object",
			"properties": {"agent_id": {"type": "string", "enum": ["agent1"]}, "reason": {"type": "string"}},
			"required": ["agent_id", "reason"]}`
	const (
		search   = `{"type": "web_search_20250305", "name": "web_search"`
		code     = `{"type": "code_execution_20250825", "name": "code_execution"`
		cacheEnd = `, "cache_control": {"type": "ephemeral"}}`
	)
	for _, tc := range []struct {
		name                  string
		webSearch, codeExec   bool
		noFunctionTools       bool
		params                map[string]any
		wantTools, wantHeader string
	}{
		{name: "off: the function tools only", wantTools: `[` + vote + cacheEnd + `]`},
		{name: "web search", webSearch: true, wantTools: `[` + vote + `}, ` + search + cacheEnd + `]`},
		{name: "code execution, no beta header", codeExec: true, wantTools: `[` + vote + `}, ` + code + cacheEnd + `]`},
		{name: "both, in a fixed order", webSearch: true, codeExec: true,
			wantTools: `[` + vote + `}, ` + search + `}, ` + code + cacheEnd + `]`},
		{name: "hosted tools without function tools", webSearch: true, codeExec: true, noFunctionTools: true,
			wantTools: `[` + search + `}, ` + code + cacheEnd + `]`},
		{name: "configured betas are left alone", codeExec: true, params: map[string]any{"betas": "context-1m-2025-08-07"},
			wantTools: `[` + vote + `}, ` + code + cacheEnd + `]`, wantHeader: "context-1m-2025-08-07"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := providertest.Request()
			if tc.noFunctionTools {
				req.Tools = nil
			}
			c := send(t, provider.Options{WebSearch: tc.webSearch, CodeExecution: tc.codeExec, Params: tc.params}, req)
			if diff := cmp.Diff(decode(t, tc.wantTools), c.body["tools"]); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if got := c.header.Get("Anthropic-Beta"); got != tc.wantHeader {
				t.Errorf("anthropic-beta = %q, want %q", got, tc.wantHeader)
			}
			if _, ok := c.body["container"]; ok {
				t.Errorf("a first request names a container: %v", c.body["container"])
			}
		})
	}
}

func TestStream_HostedTools(t *testing.T) {
	tb := "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'sympy'"
	for _, tc := range []struct {
		transcript string
		want       []provider.Chunk
	}{
		{
			transcript: "web_search.sse",
			want: []provider.Chunk{
				text("I'll look up"), text(" the current population of Paris."),
				hosted("srvtoolu_01WYG3ziw53XMcoyKL4XcZmE", provider.HostedWebSearch, `{"query": "Paris population 2025"}`,
					"4 sources:\n- Paris - Wikipedia <https://en.wikipedia.org/wiki/Paris>"+
						"\n- Population of Paris 2025 - World Population Review <https://worldpopulationreview.com/cities/france/paris>"+
						"\n- Populations légales 2022 - Insee <https://www.insee.fr/fr/statistiques/7739582>"+
						"\n- and 1 more", false),
				hosted("srvtoolu_01Kx9B7bQ2nLqVv3PeHd8sTu", provider.HostedWebSearch, `{"query": "Paris metro area population INSEE"}`,
					"search failed: unavailable", true),
				text("Paris proper has about 2.1 million inhabitants"),
				text(", and the metropolitan area over 13 million."),
				provider.UsageChunk{Usage: provider.Usage{InputTokens: 10682, OutputTokens: 510, WebSearches: 1}},
				provider.Done{StopReason: "end_turn"},
			},
		},
		{
			transcript: "code_execution.sse",
			want: []provider.Chunk{
				text("I'll write the script and run it."),
				hosted("srvtoolu_01A1xQ7yT9bE4vRkJ2nWmF5c", provider.HostedCodeExecution,
					`{"command": "create", "path": "/tmp/primes.py", "file_text": "print(sum(p for p in range(2, 100) if all(p % d for d in range(2, p))))\n"}`,
					"file created", false),
				hosted("srvtoolu_01B2kM4sZ8cN6pLqW3eRtY7u", provider.HostedCodeExecution, `{"command": "python3 /tmp/primes.py"}`,
					"return code 0\nstdout:\n1060", false),
				hosted("srvtoolu_01C3vH8jD1fG5aXs9UoPiK2e", provider.HostedCodeExecution, `{"command": "python3 -c \"import sympy\""}`,
					"return code 1\nstderr:\n"+tb, true),
				text("The sum of the primes below 100 is 1060."),
				provider.UsageChunk{Usage: provider.Usage{InputTokens: 5382, CachedInputTokens: 1200, OutputTokens: 391}},
				provider.Done{StopReason: "end_turn"},
			},
		},
	} {
		t.Run(tc.transcript, func(t *testing.T) {
			url, reqs := server(t, providertest.Transcript(t, tc.transcript))
			got := collect(t, newHosted(t, url), providertest.Request())
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			<-reqs
		})
	}
}

func TestTranslator_HostedResults(t *testing.T) {
	use := func(id, name, input string) string {
		return `{"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"` + id + `","name":"` + name + `","input":` + input + `}}
			{"type":"content_block_stop","index":0}`
	}
	result := func(typ, id, content string) string {
		return `{"type":"content_block_start","index":1,"content_block":{"type":"` + typ + `","tool_use_id":"` + id + `","content":` + content + `}}`
	}
	long := strings.Repeat("é", 1500) // 3000 bytes
	for _, tc := range []struct {
		name   string
		events string
		want   provider.Chunk
	}{
		{
			name: "code_execution_20250522: code and its result",
			events: use("srvtoolu_1", "code_execution", `{"code":"print(6*7)"}`) + "\n" +
				result("code_execution_tool_result", "srvtoolu_1", `{"type":"code_execution_result","stdout":"42\n","stderr":"","return_code":0,"content":[]}`),
			want: hosted("srvtoolu_1", provider.HostedCodeExecution, `{"code":"print(6*7)"}`, "return code 0\nstdout:\n42", false),
		},
		{
			name: "code execution error",
			events: use("srvtoolu_1", "code_execution", `{"code":"while True: pass"}`) + "\n" +
				result("code_execution_tool_result", "srvtoolu_1", `{"type":"code_execution_tool_result_error","error_code":"execution_time_exceeded"}`),
			want: hosted("srvtoolu_1", provider.HostedCodeExecution, `{"code":"while True: pass"}`, "error: execution_time_exceeded", true),
		},
		{
			name: "encrypted stdout and output files",
			events: use("srvtoolu_1", "code_execution", `{"code":"x"}`) + "\n" +
				result("code_execution_tool_result", "srvtoolu_1", `{"type":"encrypted_code_execution_result","encrypted_stdout":"EuQB","stderr":"","return_code":0,"content":[{"type":"code_execution_output","file_id":"file_01"}]}`),
			want: hosted("srvtoolu_1", provider.HostedCodeExecution, `{"code":"x"}`, "return code 0\nstdout: encrypted\n1 output file(s)", false),
		},
		{
			name: "long output is cut on a rune boundary",
			events: use("srvtoolu_1", "bash_code_execution", `{"command":"cat big"}`) + "\n" +
				result("bash_code_execution_tool_result", "srvtoolu_1", `{"type":"bash_code_execution_result","stdout":"x`+long+`","stderr":"","return_code":0,"content":[]}`),
			// 23 bytes before the first é put byte 2048 inside one, so the cut is at 2047.
			want: hosted("srvtoolu_1", provider.HostedCodeExecution, `{"command":"cat big"}`,
				"return code 0\nstdout:\nx"+long[:2024]+"\n... (976 more bytes)", false),
		},
		{
			name: "text editor view",
			events: use("srvtoolu_1", "text_editor_code_execution", `{"command":"view","path":"/tmp/a.py"}`) + "\n" +
				result("text_editor_code_execution_tool_result", "srvtoolu_1", `{"type":"text_editor_code_execution_view_result","file_type":"text","content":"print(1)\nprint(2)","start_line":1,"num_lines":2,"total_lines":2}`),
			want: hosted("srvtoolu_1", provider.HostedCodeExecution, `{"command":"view","path":"/tmp/a.py"}`, "lines 1-2 of 2\nprint(1)\nprint(2)", false),
		},
		{
			name: "text editor str_replace and its error",
			events: use("srvtoolu_1", "text_editor_code_execution", `{"command":"str_replace","path":"/tmp/b.py"}`) + "\n" +
				result("text_editor_code_execution_tool_result", "srvtoolu_1", `{"type":"text_editor_code_execution_tool_result_error","error_code":"file_not_found","error_message":"/tmp/b.py does not exist"}`),
			want: hosted("srvtoolu_1", provider.HostedCodeExecution, `{"command":"str_replace","path":"/tmp/b.py"}`,
				"error: file_not_found: /tmp/b.py does not exist", true),
		},
		{
			name: "a search that found nothing",
			events: use("srvtoolu_1", "web_search", `{"query":"zzzq"}`) + "\n" +
				result("web_search_tool_result", "srvtoolu_1", `[]`),
			want: hosted("srvtoolu_1", provider.HostedWebSearch, `{"query":"zzzq"}`, "no sources", false),
		},
		{
			name:   "a result whose call was never seen is still reported",
			events: result("web_search_tool_result", "srvtoolu_9", `{"type":"web_search_tool_result_error","error_code":"max_uses_exceeded"}`),
			want:   hosted("srvtoolu_9", provider.HostedWebSearch, `{}`, "search failed: max_uses_exceeded", true),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, err := translate(t, start+"\n"+tc.events)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]provider.Chunk{tc.want}, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a result block that is not JSON of the expected shape is a malformed stream", func(t *testing.T) {
		if _, _, err := translate(t, start+"\n"+result("web_search_tool_result", "srvtoolu_1", `"oops"`)); err == nil {
			t.Fatal("no error")
		}
	})
}

func TestStream_PauseTurnContinues(t *testing.T) {
	url, reqs, n := serverSeq(t, providertest.Transcript(t, "pause_turn_1.sse"), providertest.Transcript(t, "pause_turn_2.sse"))
	got := collect(t, newHosted(t, url), providertest.Request())
	want := []provider.Chunk{
		text("Let me research both cities."),
		hosted("srvtoolu_01Pa1", provider.HostedWebSearch, `{"query": "Lyon population"}`,
			"1 source:\n- Lyon - Wikipedia <https://en.wikipedia.org/wiki/Lyon>", false),
		provider.UsageChunk{Usage: provider.Usage{InputTokens: 6020, CacheWriteTokens: 2900, OutputTokens: 96, WebSearches: 1}},
		// The second search was asked for before the pause and ran after it.
		hosted("srvtoolu_01Pa2", provider.HostedWebSearch, `{"query": "Marseille population"}`,
			"2 sources:\n- Marseille - Wikipedia <https://en.wikipedia.org/wiki/Marseille>"+
				"\n- Marseille population 2025 <https://worldpopulationreview.com/cities/france/marseille>", false),
		text("Lyon has about 520,000 inhabitants"), text(" and Marseille about 870,000."),
		provider.UsageChunk{Usage: provider.Usage{InputTokens: 6290, CachedInputTokens: 5400, OutputTokens: 140, WebSearches: 1}},
		provider.Done{StopReason: "end_turn"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("chunks (-want +got):\n%s", diff)
	}
	var sum provider.Usage
	for _, c := range got {
		if u, ok := c.(provider.UsageChunk); ok {
			sum = sum.Add(u.Usage)
		}
	}
	if want := (provider.Usage{InputTokens: 12310, CachedInputTokens: 5400, CacheWriteTokens: 2900, OutputTokens: 236, WebSearches: 2}); sum != want {
		t.Errorf("summed usage = %+v, want %+v", sum, want)
	}
	if n.Load() != 2 {
		t.Fatalf("%d requests, want 2", n.Load())
	}

	first, second := <-reqs, <-reqs
	wantMsgs := decode(t, `[
		{"role": "user", "content": [{"type": "text", "cache_control": {"type": "ephemeral"},
			"text": "<ORIGINAL MESSAGE>\nCapital of France?\n<END OF ORIGINAL MESSAGE>"}]},
		{"role": "assistant", "content": [
			{"type": "text", "text": "Let me research both cities."},
			{"type": "server_tool_use", "id": "srvtoolu_01Pa1", "name": "web_search", "input": {"query": "Lyon population"}},
			{"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01Pa1", "content": [
				{"type": "web_search_result", "title": "Lyon - Wikipedia", "url": "https://en.wikipedia.org/wiki/Lyon",
					"encrypted_content": "EqgfCioIARgBIiQ3YTk2ZGNkNi1hixLyon", "page_age": "3 days ago"}]},
			{"type": "server_tool_use", "id": "srvtoolu_01Pa2", "name": "web_search", "input": {"query": "Marseille population"},
				"cache_control": {"type": "ephemeral"}}]}
	]`)
	if diff := cmp.Diff(wantMsgs, second.body["messages"]); diff != "" {
		t.Errorf("continuation messages (-want +got):\n%s", diff)
	}
	delete(first.body, "messages")
	delete(second.body, "messages")
	if diff := cmp.Diff(first.body, second.body); diff != "" {
		t.Errorf("the continuation changed more than the messages (-first +second):\n%s", diff)
	}
}

func TestStream_PauseTurnIsBounded(t *testing.T) {
	paused := strings.Replace(providertest.Transcript(t, "pause_turn_1.sse"), `"delta":{"stop_reason":"pause_turn",`,
		`"delta":{"container":{"id":"container_011CRj7n","expires_at":"2025-11-20T13:02:36.481Z"},"stop_reason":"pause_turn",`, 1)
	url, reqs, n := serverSeq(t, paused)
	got := collect(t, newHosted(t, url), providertest.Request())

	if n.Load() != 1+maxContinuations {
		t.Fatalf("%d requests, want %d", n.Load(), 1+maxContinuations)
	}
	var dones []provider.Chunk
	var usage provider.Usage
	for _, c := range got {
		switch c := c.(type) {
		case provider.Done:
			dones = append(dones, c)
		case provider.UsageChunk:
			usage = usage.Add(c.Usage)
		}
	}
	if diff := cmp.Diff([]provider.Chunk{provider.Done{StopReason: "pause_turn"}}, dones); diff != "" {
		t.Errorf("Done chunks (-want +got):\n%s", diff)
	}
	if usage.WebSearches != 1+maxContinuations || usage.OutputTokens != 96*(1+maxContinuations) {
		t.Errorf("usage = %+v, want every request's", usage)
	}
	for i := range 1 + maxContinuations {
		c := <-reqs
		msgs := c.body["messages"].([]any)
		if i == 0 {
			if len(msgs) != 1 || c.body["container"] != nil {
				t.Errorf("first request: %d messages, container %v", len(msgs), c.body["container"])
			}
			continue
		}
		blocks := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
		if len(msgs) != 2 || len(blocks) != 4*i {
			t.Errorf("continuation %d: %d messages, %d paused blocks, want 2 and %d", i, len(msgs), len(blocks), 4*i)
		}
		if c.body["container"] != "container_011CRj7n" {
			t.Errorf("continuation %d: container = %v", i, c.body["container"])
		}
		if b := breakpoints(c.body); b != 4 {
			t.Errorf("continuation %d: %d cache breakpoints, want 4 (system, tools, question, paused content)", i, b)
		}
	}
}

func TestStream_PauseTurnStopsWithTheConsumer(t *testing.T) {
	url, _, n := serverSeq(t, providertest.Transcript(t, "pause_turn_1.sse"), providertest.Transcript(t, "pause_turn_2.sse"))
	for c, err := range newHosted(t, url).Stream(t.Context(), providertest.Request()) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := c.(provider.UsageChunk); ok {
			break // the first response is over; its continuation must not be asked for
		}
	}
	if n.Load() != 1 {
		t.Errorf("%d requests after the consumer stopped, want 1", n.Load())
	}
}

func TestStream_PauseTurnAfterPrefill(t *testing.T) {
	url, reqs, _ := serverSeq(t, providertest.Transcript(t, "pause_turn_1.sse"), providertest.Transcript(t, "pause_turn_2.sse"))
	req := providertest.Request()
	req.Messages = append(req.Messages, provider.Message{Role: provider.RoleAssistant, Content: "Sure."})
	collect(t, newHosted(t, url), req)
	<-reqs
	msgs := (<-reqs).body["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("%d messages, want the paused content merged into the prefilled reply", len(msgs))
	}
	blocks := msgs[1].(map[string]any)["content"].([]any)
	if len(blocks) != 5 || blocks[0].(map[string]any)["text"] != "Sure." {
		t.Errorf("assistant content = %v", blocks)
	}
}

// breakpoints counts the cache_control markers of a request body.
func breakpoints(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["cache_control"]; ok {
			n++
		}
		for _, e := range x {
			n += breakpoints(e)
		}
	case []any:
		for _, e := range x {
			n += breakpoints(e)
		}
	}
	return n
}

// The engine rebuilds the conversation from neutral messages, which have no place for server
// tool blocks: the next call must carry the thinking the tool call needs and no half pair.
func TestStream_HostedBlocksStayOutOfLaterCalls(t *testing.T) {
	url, reqs := server(t, providertest.Transcript(t, "thinking_search_tool.sse"))
	p := newHosted(t, url)
	req := providertest.Request()
	req.Params = map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 2048}}
	r := providertest.Collect(t.Context(), p, req)
	if r.Err != nil || len(r.Calls) != 1 || r.Text != "Agent1 is right." || r.Usage.WebSearches != 1 {
		t.Fatalf("got %+v", r)
	}
	<-reqs

	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: r.Text, ToolCalls: r.Calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: r.Calls[0].ID, Content: "vote recorded"},
	)
	if r := providertest.Collect(t.Context(), p, req); r.Err != nil {
		t.Fatal(r.Err)
	}
	c := <-reqs
	want := decode(t, `{"role": "assistant", "content": [
		{"type": "thinking", "thinking": "I should check the figure.", "signature": "EuYBCkQYAiJAsrch"},
		{"type": "text", "text": "Agent1 is right."},
		{"type": "tool_use", "id": "toolu_01Vt7", "name": "vote", "input": {"agent_id": "agent1", "reason": "checked"}}
	]}`)
	if diff := cmp.Diff(want, c.body["messages"].([]any)[1]); diff != "" {
		t.Errorf("assistant turn (-want +got):\n%s", diff)
	}
	raw, _ := json.Marshal(c.body["messages"])
	if s := string(raw); strings.Contains(s, "srvtoolu_") || strings.Contains(s, "server_tool_use") {
		t.Errorf("server tool blocks leaked into a later call: %s", s)
	}
}

// sse renders events (JSON objects, one a line) as a stream body, naming each by its type.
func sse(t *testing.T, events string) string {
	t.Helper()
	var b strings.Builder
	for line := range strings.Lines(events) {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		var ev struct{ Type string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("bad event %s: %v", line, err)
		}
		b.WriteString("event: " + ev.Type + "\ndata: " + line + "\n\n")
	}
	return b.String()
}

// With thinking on, the call made after a pause needs the thinking from before it.
func TestStream_PauseTurnKeepsThinkingForTheCall(t *testing.T) {
	part1 := sse(t, start+`
		{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}
		{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Search first."}}
		{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sigA"}}
		{"type":"content_block_stop","index":0}
		{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}}
		{"type":"content_block_stop","index":1}
		{"type":"message_delta","delta":{"stop_reason":"pause_turn"},"usage":{"output_tokens":9}}
		{"type":"message_stop"}`)
	part2 := sse(t, start+`
		{"type":"content_block_start","index":0,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]}}
		{"type":"content_block_stop","index":0}
		{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"vote","input":{}}}
		{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{}"}}
		{"type":"content_block_stop","index":1}
		{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}
		{"type":"message_stop"}`)
	url, reqs, _ := serverSeq(t, part1, part2, providertest.Transcript(t, "text.sse"))
	p := newHosted(t, url)
	req := providertest.Request()
	r := providertest.Collect(t.Context(), p, req)
	if r.Err != nil || len(r.Calls) != 1 || r.Usage.OutputTokens != 16 {
		t.Fatalf("got %+v", r)
	}
	<-reqs
	<-reqs
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: r.Calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: "toolu_1", Content: "ok"})
	if r := providertest.Collect(t.Context(), p, req); r.Err != nil {
		t.Fatal(r.Err)
	}
	want := decode(t, `{"role": "assistant", "content": [
		{"type": "thinking", "thinking": "Search first.", "signature": "sigA"},
		{"type": "tool_use", "id": "toolu_1", "name": "vote", "input": {}}]}`)
	if diff := cmp.Diff(want, (<-reqs).body["messages"].([]any)[1]); diff != "" {
		t.Errorf("assistant turn (-want +got):\n%s", diff)
	}
}

// A pass-through top-level cache_control has the API place a breakpoint of its own on the last
// block; a continuation adding another would go past the API's four.
func TestStream_PauseTurnRespectsAutomaticCaching(t *testing.T) {
	url, reqs, _ := serverSeq(t, providertest.Transcript(t, "pause_turn_1.sse"), providertest.Transcript(t, "pause_turn_2.sse"))
	p, err := New(provider.Options{Type: Type, Model: "m", APIKey: "k", BaseURL: url, WebSearch: true,
		Params: map[string]any{"cache_control": map[string]any{"type": "ephemeral"}}})
	if err != nil {
		t.Fatal(err)
	}
	collect(t, p, providertest.Request())
	for i := range 2 {
		if b := breakpoints((<-reqs).body); b != 4 {
			t.Errorf("request %d: %d cache breakpoints, want 4 (system, tools, question, automatic)", i, b)
		}
	}
}
