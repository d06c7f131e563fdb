package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// errorBody is the API's error JSON for a status.
func errorBody(status int) string {
	typ, msg := "api_error", "Internal server error"
	switch status {
	case http.StatusUnauthorized:
		typ, msg = "authentication_error", "invalid x-api-key"
	case http.StatusTooManyRequests:
		typ, msg = "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"
	case http.StatusBadRequest:
		typ, msg = "invalid_request_error", "messages: roles must alternate"
	case http.StatusNotFound:
		typ, msg = "not_found_error", "model: claude-nope"
	case 529:
		typ, msg = "overloaded_error", "Overloaded"
	}
	return `{"type":"error","error":{"type":"` + typ + `","message":"` + msg + `"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`
}

func newTest(t testing.TB, baseURL, key string) *Provider {
	t.Helper()
	p, err := New(provider.Options{Type: Type, Model: "claude-sonnet-4-5-20250929", APIKey: key, KeyEnv: KeyEnv, BaseURL: baseURL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConformance(t *testing.T) {
	providertest.Run(t, providertest.Wire{
		Body: func(s providertest.Scenario) string {
			return providertest.Transcript(t, string(s)+".sse")
		},
		ContentType:    "text/event-stream",
		ErrorBody:      errorBody,
		KeyEnv:         KeyEnv,
		ToolChoiceNone: map[string]any{"tool_choice": map[string]any{"type": "none"}},
		New: func(baseURL, apiKey string) provider.Provider {
			return newTest(t, baseURL, apiKey)
		},
	})
}

// captured is one request the fake server received.
type captured struct {
	path   string
	header http.Header
	body   map[string]any
}

// server answers every request with body (a stream transcript) and records the requests.
func server(t *testing.T, body string) (string, <-chan captured) {
	t.Helper()
	reqs := make(chan captured, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		c := captured{path: r.URL.Path, header: r.Header.Clone()}
		if err := json.Unmarshal(raw, &c.body); err != nil {
			t.Errorf("request body is not JSON: %v\n%s", err, raw)
		}
		reqs <- c
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, reqs
}

func TestNew_IgnoresEnvironment(t *testing.T) {
	decoy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request went to ANTHROPIC_BASE_URL: %s", r.URL)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer decoy.Close()
	t.Setenv("ANTHROPIC_BASE_URL", decoy.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "token-from-env")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-Decoy: 1")
	t.Setenv("ANTHROPIC_PROFILE", "nonexistent-profile")
	t.Setenv("ANTHROPIC_CONFIG_DIR", t.TempDir())

	url, reqs := server(t, providertest.Transcript(t, "text.sse"))
	r := providertest.Collect(t.Context(), newTest(t, url, "sk-configured"), providertest.Request())
	if r.Err != nil || !r.Done {
		t.Fatalf("got %+v", r)
	}
	c := <-reqs
	if c.path != "/v1/messages" {
		t.Errorf("path = %q, want /v1/messages", c.path)
	}
	if got := c.header.Get("Authorization"); got != "Bearer sk-configured" {
		t.Errorf("Authorization = %q, want the configured key", got)
	}
	if c.header.Get("X-Decoy") != "" || c.header.Get("X-Api-Key") != "" {
		t.Errorf("environment leaked into the headers: %v", c.header)
	}
	if c.header.Get("Anthropic-Version") == "" {
		t.Error("no anthropic-version header")
	}
}

func TestNew_Validates(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    provider.Options
		want string
	}{
		{"no key", provider.Options{Model: "m"}, "ANTHROPIC_API_KEY"},
		{"no key, named variable", provider.Options{Model: "m", KeyEnv: "MY_CLAUDE_KEY"}, "MY_CLAUDE_KEY"},
		{"bad base URL", provider.Options{APIKey: "k", BaseURL: "api.anthropic.com"}, "base_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %s", err, tc.want)
			}
		})
	}
}

func TestStream_NoModelIsFatal(t *testing.T) {
	p, err := New(provider.Options{APIKey: "k", BaseURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	req := providertest.Request()
	req.Model = ""
	r := providertest.Collect(t.Context(), p, req)
	if !provider.IsFatal(r.Err) || !strings.Contains(r.Err.Error(), "no model") {
		t.Fatalf("err = %v, want a fatal missing-model error", r.Err)
	}
}

func TestStream_HTTPErrors(t *testing.T) {
	const key = "sk-ant-SECRET-9876"
	for _, tc := range []struct {
		status int
		fatal  bool
		want   string
	}{
		{http.StatusUnauthorized, true, "ANTHROPIC_API_KEY"},
		{http.StatusNotFound, true, "not_found_error: model: claude-nope"},
		{http.StatusBadRequest, true, "invalid_request_error: messages: roles must alternate"},
		{http.StatusTooManyRequests, false, "rate_limit_error"},
		{529, false, "overloaded_error: Overloaded"},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After-Ms", "1")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, errorBody(tc.status))
			}))
			defer srv.Close()
			p, err := New(provider.Options{Type: Type, Model: "m", APIKey: key, KeyEnv: KeyEnv, BaseURL: srv.URL, MaxRetries: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := providertest.Collect(t.Context(), p, providertest.Request())
			var pe *provider.Error
			if !errors.As(r.Err, &pe) || pe.Status != tc.status || pe.Fatal != tc.fatal {
				t.Fatalf("err = %#v, want status %d fatal %v", r.Err, tc.status, tc.fatal)
			}
			msg := r.Err.Error()
			if !strings.Contains(msg, tc.want) || strings.Contains(msg, key) || strings.Contains(msg, "9876") {
				t.Errorf("error %q: want it to contain %q and never the key", msg, tc.want)
			}
		})
	}
}

func TestStream_ErrorEventIsRetryable(t *testing.T) {
	body := strings.Replace(providertest.Transcript(t, "text.sse"), "event: content_block_stop",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\nevent: content_block_stop", 1)
	url, _ := server(t, body)
	r := providertest.Collect(t.Context(), newTest(t, url, "k"), providertest.Request())
	if r.Err == nil || provider.IsFatal(r.Err) || r.Done {
		t.Fatalf("got %+v, want a retryable error", r)
	}
	if !strings.Contains(r.Err.Error(), "overloaded_error: Overloaded") {
		t.Errorf("error %q does not say what happened", r.Err)
	}
	if r.Text != "Hello, world." {
		t.Errorf("text before the error = %q", r.Text)
	}
}

func TestStream_TruncatedIsRetryable(t *testing.T) {
	full := providertest.Transcript(t, "tool_call.sse")
	body := full[:strings.Index(full, "event: message_delta")]
	url, _ := server(t, body)
	r := providertest.Collect(t.Context(), newTest(t, url, "k"), providertest.Request())
	if r.Err == nil || provider.IsFatal(r.Err) || r.Done || !strings.Contains(r.Err.Error(), "message_stop") {
		t.Fatalf("got %+v, want a retryable error about the missing message_stop", r)
	}
}

func TestStream_CancelMidStream(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		body := providertest.Transcript(t, "text.sse")
		_, _ = io.WriteString(w, body[:strings.Index(body, "event: content_block_stop")])
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var text string
	var err error
	for c, e := range newTest(t, srv.URL, "k").Stream(ctx, providertest.Request()) {
		if e != nil {
			err = e
			break
		}
		if d, ok := c.(provider.TextDelta); ok {
			text += d.Text
			if text == "Hello, world." {
				time.AfterFunc(10*time.Millisecond, cancel)
			}
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one wrapping context.Canceled", err)
	}
}
