package gemini

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// captured is one request the fake server received.
type captured struct {
	Path, Query, Key string
	Body             map[string]any
}

// captureServer answers every request with reply and records it on the returned channel.
func captureServer(t *testing.T, reply string) (string, chan captured) {
	t.Helper()
	reqs := make(chan captured, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c := captured{Path: r.URL.Path, Query: r.URL.RawQuery, Key: r.Header.Get("x-goog-api-key")}
		if err := json.Unmarshal(b, &c.Body); err != nil {
			t.Errorf("request body %q: %v", b, err)
		}
		reqs <- c
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, reply)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, reqs
}

// sent runs one Stream call to its end and returns the request body the server got.
func sent(t *testing.T, p *Provider, reqs chan captured, req provider.Request) captured {
	t.Helper()
	if r := providertest.Collect(t.Context(), p, req); r.Err != nil {
		t.Fatalf("stream: %v", r.Err)
	}
	return <-reqs
}

// asJSON round-trips v so that it compares equal to a decoded request body.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStream_RequestTranslation(t *testing.T) {
	url, reqs := captureServer(t, providertest.Transcript(t, "text.sse"))
	p := newTest(t, provider.Options{BaseURL: url, APIKey: "k-123", Model: "gemini-2.5-flash",
		Params: map[string]any{"temperature": 0.2, "max_tokens": 1000, "top_k": 5}})
	req := providertest.Request()
	req.Model = "" // falls back to Options.Model
	req.Messages = []provider.Message{
		{Role: provider.RoleUser, Content: "Question?"},
		{Role: provider.RoleAssistant, Content: "Let me answer.", ToolCalls: []provider.ToolCall{
			{ID: "c1", Name: "new_answer", Arguments: `{"content":"Paris"}`},
			{ID: "c2", Name: "vote", Arguments: `{"agent_id":"agent9"`},
		}},
		{Role: provider.RoleTool, ToolCallID: "c1", Content: "ok"},
		{Role: provider.RoleTool, ToolCallID: "c2", Content: "Error: unknown agent", IsError: true},
		{Role: provider.RoleUser, Content: "Please vote again."},
		{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c3", Name: "vote", Arguments: ""}}},
		{Role: provider.RoleTool, ToolCallID: "c3", Content: "recorded"},
	}
	req.Params = map[string]any{
		"temperature":     0.7, // overrides the backend's
		"top_p":           0.9,
		"thinking_config": map[string]any{"thinking_budget": 1024, "include_thoughts": true},
		"safety_settings": []any{map[string]any{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}},
		"response_json_schema": map[string]any{"type": "object",
			"properties": map[string]any{"agent_id": map[string]any{"type": "string"}}},
	}
	got := sent(t, p, reqs, req)

	if got.Path != "/v1beta/models/gemini-2.5-flash:streamGenerateContent" || got.Query != "alt=sse" {
		t.Errorf("url = %s?%s", got.Path, got.Query)
	}
	if got.Key != "k-123" {
		t.Errorf("x-goog-api-key = %q", got.Key)
	}
	want := map[string]any{
		"systemInstruction": map[string]any{"role": "user", "parts": []any{map[string]any{"text": "You are one of several agents."}}},
		"contents": []any{
			map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Question?"}}},
			map[string]any{"role": "model", "parts": []any{
				map[string]any{"text": "Let me answer."},
				map[string]any{"functionCall": map[string]any{"name": "new_answer", "args": map[string]any{"content": "Paris"}}},
				map[string]any{"functionCall": map[string]any{"name": "vote", "args": map[string]any{"arguments": `{"agent_id":"agent9"`}}},
			}},
			map[string]any{"role": "user", "parts": []any{
				map[string]any{"functionResponse": map[string]any{"name": "new_answer", "response": map[string]any{"output": "ok"}}},
				map[string]any{"functionResponse": map[string]any{"name": "vote", "response": map[string]any{"error": "Error: unknown agent"}}},
				map[string]any{"text": "Please vote again."},
			}},
			map[string]any{"role": "model", "parts": []any{
				map[string]any{"functionCall": map[string]any{"name": "vote"}}, // empty args are omitted
			}},
			map[string]any{"role": "user", "parts": []any{
				map[string]any{"functionResponse": map[string]any{"name": "vote", "response": map[string]any{"output": "recorded"}}},
			}},
		},
		"tools": []any{map[string]any{"functionDeclarations": []any{map[string]any{
			"name": "vote", "description": "Vote for the best answer.",
			"parametersJsonSchema": asJSON(t, providertest.Request().Tools[0].Parameters),
		}}}},
		"generationConfig": map[string]any{
			"temperature": 0.7, "topP": 0.9, "topK": 5.0, "maxOutputTokens": 1000.0,
			"thinkingConfig": map[string]any{"thinkingBudget": 1024.0, "includeThoughts": true},
			"responseJsonSchema": map[string]any{"type": "object",
				"properties": map[string]any{"agent_id": map[string]any{"type": "string"}}},
		},
		"safetySettings": []any{map[string]any{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_NONE"}},
	}
	if d := cmp.Diff(want, got.Body); d != "" {
		t.Errorf("body (-want +got):\n%s", d)
	}
}

func TestStream_SendsBackSignaturesAndAPIIDs(t *testing.T) {
	first := `data: {"candidates":[{"content":{"parts":[` +
		`{"functionCall":{"name":"new_answer","args":{"content":"Paris"}},"thoughtSignature":"c2lnLTE="},` +
		`{"functionCall":{"id":"fc-abc","name":"vote","args":{"agent_id":"agent1","reason":"r"}}}` +
		`],"role":"model"},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}}` + "\r\n\r\n"
	url, reqs := captureServer(t, first)
	p := newTest(t, provider.Options{BaseURL: url, Model: "m"})
	req := providertest.Request()
	r := providertest.Collect(t.Context(), p, req)
	<-reqs
	if r.Err != nil || len(r.Calls) != 2 {
		t.Fatalf("got %+v", r)
	}
	if r.Calls[0].ID != "call_1" || r.Calls[1].ID != "fc-abc" {
		t.Fatalf("ids = %q, %q", r.Calls[0].ID, r.Calls[1].ID)
	}
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: r.Calls},
		provider.Message{Role: provider.RoleTool, ToolCallID: "call_1", Content: "ok"},
		provider.Message{Role: provider.RoleTool, ToolCallID: "fc-abc", Content: "ok"})
	got := sent(t, p, reqs, req).Body["contents"].([]any)
	want := []any{
		map[string]any{"role": "model", "parts": []any{
			map[string]any{"functionCall": map[string]any{"name": "new_answer", "args": map[string]any{"content": "Paris"}},
				"thoughtSignature": "c2lnLTE="},
			map[string]any{"functionCall": map[string]any{"id": "fc-abc", "name": "vote",
				"args": map[string]any{"agent_id": "agent1", "reason": "r"}}},
		}},
		map[string]any{"role": "user", "parts": []any{
			map[string]any{"functionResponse": map[string]any{"name": "new_answer", "response": map[string]any{"output": "ok"}}},
			map[string]any{"functionResponse": map[string]any{"id": "fc-abc", "name": "vote", "response": map[string]any{"output": "ok"}}},
		}},
	}
	if d := cmp.Diff(want, got[1:]); d != "" {
		t.Errorf("contents (-want +got):\n%s", d)
	}
	// IDs keep counting across calls of one provider (the second call made call_2), so they
	// stay unique in a conversation.
	r = providertest.Collect(t.Context(), p, providertest.Request())
	<-reqs
	if r.Err != nil || r.Calls[0].ID != "call_3" {
		t.Fatalf("second call: %+v", r)
	}
}

func TestStream_AutomaticContinuationIsOff(t *testing.T) {
	// A response cut short with CONTINUATION and a token ends the stream: the SDK must not
	// send a second (billed) request on its own.
	body := `data: {"candidates":[{"content":{"parts":[{"text":"Half an answ"}],"role":"model"},` +
		`"finishReason":"CONTINUATION","continuationToken":"dG9rZW4=","index":0}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}}` + "\r\n\r\n"
	url, reqs := captureServer(t, body)
	p := newTest(t, provider.Options{BaseURL: url, Model: "m"})
	var stop string
	for c, err := range p.Stream(t.Context(), providertest.Request()) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := c.(provider.Done); ok {
			stop = d.StopReason
		}
	}
	got := <-reqs
	if len(reqs) != 0 {
		t.Errorf("%d extra requests", len(reqs))
	}
	if stop != "continuation" {
		t.Errorf("stop = %q", stop)
	}
	if strings.Contains(strings.ToLower(toJSON(t, got.Body)), "continuation") {
		t.Errorf("continuation setting leaked into the body: %s", toJSON(t, got.Body))
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestStream_EnvironmentIsIgnored(t *testing.T) {
	decoy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request reached the environment's base URL: %s", r.URL)
	}))
	t.Cleanup(decoy.Close)
	for k, v := range map[string]string{
		"GOOGLE_API_KEY": "env-google-key", "GEMINI_API_KEY": "env-gemini-key",
		"GOOGLE_GEMINI_BASE_URL": decoy.URL, "GOOGLE_VERTEX_BASE_URL": decoy.URL,
		"GOOGLE_GENAI_USE_VERTEXAI": "true", "GOOGLE_GENAI_USE_ENTERPRISE": "true",
		"GOOGLE_CLOUD_PROJECT": "proj", "GOOGLE_CLOUD_LOCATION": "us-central1",
	} {
		t.Setenv(k, v)
	}
	if _, err := New(provider.Options{Type: "gemini", KeyEnv: "GEMINI_API_KEY"}); err == nil ||
		!strings.Contains(err.Error(), "GEMINI_API_KEY") || strings.Contains(err.Error(), "env-") {
		t.Errorf("New without a key: %v", err)
	}
	url, reqs := captureServer(t, providertest.Transcript(t, "text.sse"))
	got := sent(t, newTest(t, provider.Options{BaseURL: url, APIKey: "config-key", Model: "m"}), reqs, providertest.Request())
	if got.Key != "config-key" || got.Path != "/v1beta/models/test-model:streamGenerateContent" {
		t.Errorf("got key %q path %q", got.Key, got.Path)
	}
}

func TestSplitBaseURL(t *testing.T) {
	for _, tc := range []struct{ in, base, version string }{
		{"", "https://generativelanguage.googleapis.com/", "v1beta"},
		{"https://generativelanguage.googleapis.com", "https://generativelanguage.googleapis.com/", "v1beta"},
		{"https://generativelanguage.googleapis.com/v1beta/", "https://generativelanguage.googleapis.com/", "v1beta"},
		{"https://proxy.example/gemini/v1", "https://proxy.example/gemini/", "v1"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/", "v1beta"},
	} {
		base, version, err := splitBaseURL(tc.in)
		if err != nil || base != tc.base || version != tc.version {
			t.Errorf("splitBaseURL(%q) = %q, %q, %v; want %q, %q", tc.in, base, version, err, tc.base, tc.version)
		}
	}
	for _, bad := range []string{"ftp://x", "generativelanguage.googleapis.com", "://"} {
		if _, _, err := splitBaseURL(bad); err == nil {
			t.Errorf("splitBaseURL(%q) accepted", bad)
		}
	}
}

func TestWireParams(t *testing.T) {
	got, err := wireParams(map[string]any{
		"max_tokens":        10,
		"stop_sequences":    []any{"END"},
		"generation_config": map[string]any{"seed": 7, "response_mime_type": "application/json"},
		"tool_config":       map[string]any{"function_calling_config": map[string]any{"mode": "ANY"}},
		"cachedContent":     "cachedContents/abc",
		"labels":            map[string]any{"team_name": "x"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"generationConfig": map[string]any{"maxOutputTokens": 10, "stopSequences": []any{"END"},
			"seed": 7, "responseMimeType": "application/json"},
		"toolConfig":    map[string]any{"functionCallingConfig": map[string]any{"mode": "ANY"}},
		"cachedContent": "cachedContents/abc",
		"labels":        map[string]any{"team_name": "x"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []map[string]any{{"tools": []any{}}, {"system_instruction": "x"}, {"contents": nil}, {"generation_config": 3}} {
		if _, err := wireParams(bad); err == nil {
			t.Errorf("wireParams(%v) accepted", bad)
		}
	}
	if _, err := New(provider.Options{APIKey: "k", Params: map[string]any{"tools": 1}}); err == nil {
		t.Error("New accepted a param that replaces the tools")
	}
}

func TestToWireContents_Errors(t *testing.T) {
	none := func(string) callMeta { return callMeta{} }
	for name, msgs := range map[string][]provider.Message{
		"no messages":  nil,
		"all empty":    {{Role: provider.RoleUser}},
		"unknown call": {{Role: provider.RoleUser, Content: "q"}, {Role: provider.RoleTool, ToolCallID: "x", Content: "r"}},
		"unknown role": {{Role: "system", Content: "s"}},
	} {
		if _, err := toWireContents(msgs, none); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestStream_LazyAndReleased(t *testing.T) {
	// A long stream the consumer abandons after the first chunk.
	long := strings.Repeat(`data: {"candidates":[{"content":{"parts":[{"text":"x"}],"role":"model"}}]}`+"\r\n\r\n", 2000)
	url, n := scriptedServer(t, func(w http.ResponseWriter, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, long)
	})
	tr := &http.Transport{}
	p := newTest(t, provider.Options{BaseURL: url, Model: "m", HTTPClient: &http.Client{Transport: tr}})
	ignore := []goleak.Option{goleak.IgnoreCurrent()}

	seq := p.Stream(t.Context(), providertest.Request())
	if n.Load() != 0 {
		t.Fatal("Stream sent the request before the first pull")
	}
	for c, err := range seq {
		if err != nil || c != (provider.TextDelta{Text: "x"}) {
			t.Fatalf("first chunk %v, %v", c, err)
		}
		break
	}
	if n.Load() != 1 {
		t.Fatalf("%d requests", n.Load())
	}
	tr.CloseIdleConnections()
	goleak.VerifyNone(t, ignore...)
}

func TestStream_ConcurrentCalls(t *testing.T) {
	url, _ := scriptedServer(t, func(w http.ResponseWriter, _ int) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, strings.Replace(providertest.Transcript(t, "tool_call.sse"), `"id":"call_1",`, "", 1))
	})
	p := newTest(t, provider.Options{BaseURL: url, Model: "m"})
	var wg sync.WaitGroup
	ids := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			r := providertest.Collect(t.Context(), p, providertest.Request())
			if r.Err != nil || len(r.Calls) != 1 {
				t.Errorf("got %+v", r)
				return
			}
			ids <- r.Calls[0].ID
		})
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Errorf("duplicate call ID %s", id)
		}
		seen[id] = true
	}
}
