package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openAIErrorBody is the {"error": {...}} body Groq, OpenRouter and OpenAI send.
func openAIErrorBody(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return `{"error":{"message":"Invalid API Key","type":"invalid_request_error","code":"invalid_api_key"}}`
	case http.StatusTooManyRequests:
		return `{"error":{"message":"Rate limit reached for model ` + "`llama-3.3-70b-versatile`" + ` in organization ` +
			"`org_01`" + ` on tokens per minute (TPM): Limit 6000, Used 5800, Requested 900. Please try again in 1s.",` +
			`"type":"tokens","code":"rate_limit_exceeded"}}`
	case http.StatusServiceUnavailable:
		return `{"error":{"message":"Service Unavailable","type":"internal_server_error","code":"service_unavailable"}}`
	}
	return `{"error":{"message":"Internal Server Error","type":"internal_server_error"}}`
}

// vllmErrorBody is what a vLLM server sends: {"error": "Unauthorized"} from its key check, and
// {"object": "error", ...} from the API itself.
func vllmErrorBody(status int) string {
	if status == http.StatusUnauthorized {
		return `{"error":"Unauthorized"}`
	}
	return fmt.Sprintf(`{"object":"error","message":"%s","type":"ServerError","param":null,"code":%d}`,
		http.StatusText(status), status)
}

func TestConformance_Groq(t *testing.T) {
	providertest.Run(t, providertest.Wire{
		Body:           func(s providertest.Scenario) string { return providertest.Transcript(t, "groq", string(s)+".sse") },
		ContentType:    "text/event-stream",
		ErrorBody:      openAIErrorBody,
		KeyEnv:         "GROQ_API_KEY",
		ToolChoiceNone: map[string]any{"tool_choice": "none"},
		New: func(baseURL, apiKey string) provider.Provider {
			return mustNew(t, provider.Options{Type: "groq", Model: "llama-3.3-70b-versatile", APIKey: apiKey,
				KeyEnv: "GROQ_API_KEY", BaseURL: baseURL + "/openai/v1", MaxRetries: 2})
		},
	})
}

func TestConformance_OpenRouter(t *testing.T) {
	providertest.Run(t, providertest.Wire{
		Body: func(s providertest.Scenario) string {
			return providertest.Transcript(t, "openrouter", string(s)+".sse")
		},
		ContentType:    "text/event-stream",
		ErrorBody:      openAIErrorBody,
		KeyEnv:         "OPENROUTER_API_KEY",
		ToolChoiceNone: map[string]any{"tool_choice": "none"},
		New: func(baseURL, apiKey string) provider.Provider {
			return mustNew(t, provider.Options{Type: "openrouter", Model: "openai/gpt-4o", APIKey: apiKey,
				KeyEnv: "OPENROUTER_API_KEY", BaseURL: baseURL + "/api/v1/", MaxRetries: 2})
		},
	})
}

// TestConformance_LocalWithoutKey runs the suite as a vLLM server started without --api-key:
// no key configured and none sent. The suite's key is ignored; its rejected-key case still runs
// and the error then points at the api_key in the config.
func TestConformance_LocalWithoutKey(t *testing.T) {
	providertest.Run(t, providertest.Wire{
		Body:           func(s providertest.Scenario) string { return providertest.Transcript(t, "vllm", string(s)+".sse") },
		ContentType:    "text/event-stream; charset=utf-8",
		ErrorBody:      vllmErrorBody,
		KeyEnv:         "",
		ToolChoiceNone: map[string]any{"tool_choice": "none"},
		New: func(baseURL, _ string) provider.Provider {
			return mustNew(t, provider.Options{Type: "vllm", Model: "Qwen/Qwen3-8B", BaseURL: baseURL + "/v1",
				MaxRetries: 2})
		},
	})
}

func mustNew(t testing.TB, o provider.Options) *Provider {
	t.Helper()
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNew_Rejects(t *testing.T) {
	for _, base := range []string{"", "api.groq.com/openai/v1", "ftp://example.com/v1", "http://"} {
		if _, err := New(provider.Options{Type: "groq", BaseURL: base}); err == nil || !strings.HasPrefix(err.Error(), "chat: groq: ") {
			t.Errorf("New(BaseURL %q) = %v, want a chat: groq: error", base, err)
		}
	}
}

// captured is one request a test server received.
type captured struct {
	path, auth string
	body       []byte
}

// serveSSE answers every request with body and records it.
func serveSSE(t *testing.T, body string) (string, <-chan captured) {
	t.Helper()
	reqs := make(chan captured, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		reqs <- captured{path: r.URL.Path, auth: r.Header.Get("Authorization"), body: b}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, reqs
}

func TestStream_IgnoresOpenAIEnvironment(t *testing.T) {
	decoy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request went to OPENAI_BASE_URL: %s", r.URL)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer decoy.Close()
	t.Setenv("OPENAI_BASE_URL", decoy.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-the-environment")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env: yes")

	for _, tc := range []struct {
		name, key, wantAuth string
	}{
		{"local server without a key", "", ""},
		{"configured key", "gsk-configured", "Bearer gsk-configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, reqs := serveSSE(t, providertest.Transcript(t, "vllm", string(providertest.Text)+".sse"))
			p := mustNew(t, provider.Options{Type: "vllm", Model: "m", APIKey: tc.key, BaseURL: url + "/v1"})
			r := providertest.Collect(t.Context(), p, providertest.Request())
			if r.Err != nil || r.Text != "Hello, world." {
				t.Fatalf("got %+v", r)
			}
			got := <-reqs
			if got.auth != tc.wantAuth || got.path != "/v1/chat/completions" {
				t.Errorf("request to %s with Authorization %q, want /v1/chat/completions with %q", got.path, got.auth, tc.wantAuth)
			}
		})
	}
}

func TestStream_IsLazy(t *testing.T) {
	url, reqs := serveSSE(t, providertest.Transcript(t, "groq", string(providertest.Text)+".sse"))
	p := mustNew(t, provider.Options{Type: "groq", Model: "m", BaseURL: url})
	seq := p.Stream(t.Context(), providertest.Request())
	select {
	case <-reqs:
		t.Fatal("the request started before the first pull")
	case <-time.After(50 * time.Millisecond):
	}
	for range seq {
		break
	}
	if len(reqs) != 1 {
		t.Fatalf("%d requests after the first pull, want 1", len(reqs))
	}
}

func TestStream_Errors(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789WXYZ"
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		fatal       bool
		want        []string // substrings of the error
	}{
		{"openai masked key", 401, "application/json",
			`{"error":{"message":"Incorrect API key provided: sk-proj-********************************WXYZ. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			true, []string{"status 401", "DEEPSEEK_API_KEY", "Incorrect API key provided: [redacted]."}},
		{"vllm key check", 401, "application/json", `{"error":"Unauthorized"}`, true,
			[]string{"DEEPSEEK_API_KEY", "(Unauthorized)"}},
		{"forbidden", 403, "application/json", `{"error":{"message":"Your account is not active."}}`, true,
			[]string{"status 403", "DEEPSEEK_API_KEY"}},
		{"ollama model not pulled", 404, "application/json",
			`{"error":{"message":"model \"qwen3:8b\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`,
			true, []string{"status 404", `model "deepseek-chat"`, "try pulling it first"}},
		{"bad request", 400, "application/json",
			`{"error":{"message":"Invalid 'messages[2]': tool_call_id not found","type":"invalid_request_error","code":"invalid_value"}}`,
			true, []string{"status 400", "tool_call_id not found", "code invalid_value"}},
		{"fastapi detail", 422, "application/json", `{"detail":"Field required: messages"}`, true,
			[]string{"status 422", "Field required"}},
		{"rate limited", 429, "application/json", openAIErrorBody(429), false,
			[]string{"status 429", "Rate limit reached", "code rate_limit_exceeded"}},
		{"html from a proxy", 502, "text/html", `<html><body>502 Bad Gateway</body></html>`, false,
			[]string{"status 502", "Bad Gateway"}},
		{"error event mid-stream", 200, "text/event-stream",
			": OPENROUTER PROCESSING\n\n" +
				`data: {"id":"gen-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\n" +
				`data: {"id":"gen-1","object":"chat.completion.chunk","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}` + "\n\n",
			false, []string{"Provider disconnected", "code 502"}},
		{"finish_reason error", 200, "text/event-stream",
			`data: {"id":"gen-1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":"error"}]}` + "\n\ndata: [DONE]\n\n",
			false, []string{"finish_reason error"}},
		{"no finish reason", 200, "text/event-stream",
			`data: {"id":"c","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}` + "\n\ndata: [DONE]\n\n",
			false, []string{"without a finish reason"}},
		{"not a stream", 200, "application/json", `{"id":"c","choices":[]}`, false,
			[]string{"without a finish reason"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.Header().Set("Content-Type", tc.contentType)
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			p := mustNew(t, provider.Options{Type: "deepseek", Model: "deepseek-chat", APIKey: key,
				KeyEnv: "DEEPSEEK_API_KEY", BaseURL: srv.URL + "/v1", MaxRetries: 1})
			r := providertest.Collect(t.Context(), p, providertest.Request())
			var pe *provider.Error
			if !errors.As(r.Err, &pe) || pe.Fatal != tc.fatal || r.Done {
				t.Fatalf("got %+v (err %#v), want a *provider.Error with Fatal %v", r, r.Err, tc.fatal)
			}
			msg := r.Err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			if strings.Contains(msg, key) || strings.Contains(msg, "WXYZ") {
				t.Errorf("error %q shows the key", msg)
			}
			if tc.status == 401 && n.Load() != 1 {
				t.Errorf("a rejected key was retried: %d requests", n.Load())
			}
		})
	}
}

func TestStream_CancelledContext(t *testing.T) {
	url, _ := serveSSE(t, providertest.Transcript(t, "groq", string(providertest.Text)+".sse"))
	p := mustNew(t, provider.Options{Type: "groq", Model: "m", BaseURL: url})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := providertest.Collect(ctx, p, providertest.Request())
	if !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", r.Err)
	}
}

// TestRedact: the backend's messages lose the key in every form a server quotes it, and a
// short local key does not redact the inside of words.
func TestRedact(t *testing.T) {
	const key = "sk-conformance-SECRET-4242"
	for _, tc := range []struct{ key, in, want string }{
		{key, "bad key " + key + " given", "bad key [redacted] given"},
		{key, "Incorrect API key provided: sk-conf*****4242.", "Incorrect API key provided: [redacted]."},
		{key, "key ending in ...4242 rejected", "key ending in [redacted] rejected"},
		{key, "Incorrect API key provided: " + key[3:] + ".", "Incorrect API key provided: [redacted]."},
		{key, "Rate limit reached", "Rate limit reached"},
		{"", "Incorrect API key provided: sk-a***b.", "Incorrect API key provided: [redacted]."},
		{"abc123", "token abc123 is not valid for xabc123y", "token [redacted] is not valid for xabc123y"},
		{"key", "check your keys and the keyring: key", "check your keys and the keyring: [redacted]"},
	} {
		p := mustNew(t, provider.Options{Type: "vllm", Model: "m", BaseURL: "http://127.0.0.1:1/v1", APIKey: tc.key})
		if got := p.red.Message(tc.in); got != tc.want {
			t.Errorf("key %q: Message(%q) = %q, want %q", tc.key, tc.in, got, tc.want)
		}
	}
}

// TestNew_BaseURLCredentialsNotShown: a base_url with a password or a key in its query is
// quoted without them.
func TestNew_BaseURLCredentialsNotShown(t *testing.T) {
	_, err := New(provider.Options{Type: "vllm", BaseURL: "ftp://user:hunter2@h.example/v1?api-key=s3cr3tvalue"})
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cr3tvalue") {
		t.Fatalf("err = %v", err)
	}
}

// TestStream_KeepAliveComments: servers and proxies send SSE comment lines (": ping",
// ": OPENROUTER PROCESSING") while the model thinks; they carry nothing.
func TestStream_KeepAliveComments(t *testing.T) {
	body := ": ping\n\n" + strings.ReplaceAll(providertest.Transcript(t, "vllm", string(providertest.ToolCall)+".sse"), "\n\ndata: ", "\n\n: ping - 2026-01-01 00:00:00.000000+00:00\n\ndata: ")
	url, _ := serveSSE(t, body)
	r := providertest.Collect(t.Context(), mustNew(t, provider.Options{Type: "sglang", Model: "m", BaseURL: url + "/v1"}), providertest.Request())
	if r.Err != nil || len(r.Calls) != 1 || r.Calls[0].Arguments != `{"agent_id": "agent1", "reason": "best answer"}` || r.Usage != providertest.ToolCallUsage || !r.Done {
		t.Fatalf("got %+v", r)
	}
}
