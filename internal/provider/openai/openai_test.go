package openai

import (
	"context"
	"errors"
	"fmt"
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

// errorBody is OpenAI's error JSON for a status, as the service words it.
func errorBody(status int) string {
	msg, typ, code := "The server had an error while processing your request. Sorry about that!", "server_error", "null"
	switch status {
	case http.StatusUnauthorized:
		// OpenAI quotes the rejected key, masked but for its ends.
		msg, typ, code = "Incorrect API key provided: sk-confo*****************4242. You can find your API key at https://platform.openai.com/account/api-keys.", "invalid_request_error", `"invalid_api_key"`
	case http.StatusTooManyRequests:
		msg, typ, code = "Rate limit reached for test-model in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.", "requests", `"rate_limit_exceeded"`
	case http.StatusServiceUnavailable:
		msg = "The engine is currently overloaded, please try again later."
	}
	return fmt.Sprintf(`{"error":{"message":%q,"type":%q,"param":null,"code":%s}}`, msg, typ, code)
}

func TestProvider_Conformance(t *testing.T) {
	providertest.Run(t, providertest.Wire{
		Body:           func(s providertest.Scenario) string { return providertest.Transcript(t, string(s)+".sse") },
		ContentType:    "text/event-stream; charset=utf-8",
		ErrorBody:      errorBody,
		KeyEnv:         "OPENAI_API_KEY",
		ToolChoiceNone: map[string]any{"tool_choice": "none"},
		New: func(baseURL, apiKey string) provider.Provider {
			p, err := New(provider.Options{Type: "openai", Model: "test-model", APIKey: apiKey,
				KeyEnv: "OPENAI_API_KEY", BaseURL: baseURL + "/v1", MaxRetries: 2})
			if err != nil {
				t.Fatal(err)
			}
			return p
		},
	})
}

// server answers every request with status and body, recording the requests it saw.
func server(t *testing.T, status int, contentType, body string) (string, chan *http.Request) {
	t.Helper()
	seen := make(chan *http.Request, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Clone(context.Background())
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, seen
}

func collect(t *testing.T, p *Provider) providertest.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return providertest.Collect(ctx, p, providertest.Request())
}

func newProvider(t *testing.T, o provider.Options) *Provider {
	t.Helper()
	if o.Model == "" {
		o.Model = "test-model"
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNew_IgnoresEnvironment(t *testing.T) {
	decoy, decoySeen := server(t, 200, "text/event-stream", providertest.Transcript(t, "text.sse"))
	t.Setenv("OPENAI_BASE_URL", decoy+"/v1")
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_ORG_ID", "org-env")
	t.Setenv("OPENAI_PROJECT_ID", "proj-env")
	t.Setenv("OPENAI_CUSTOM_HEADERS", "X-Env-Header: yes")

	t.Run("explicit base URL and key", func(t *testing.T) {
		url, seen := server(t, 200, "text/event-stream", providertest.Transcript(t, "text.sse"))
		r := collect(t, newProvider(t, provider.Options{APIKey: "sk-explicit", BaseURL: url + "/v1"}))
		if r.Err != nil || r.Text != "Hello, world." {
			t.Fatalf("got %+v", r)
		}
		req := <-seen
		if req.URL.Path != "/v1/responses" {
			t.Errorf("path %q, want /v1/responses", req.URL.Path)
		}
		if got := req.Header.Get("Authorization"); got != "Bearer sk-explicit" {
			t.Errorf("Authorization %q", got)
		}
		for _, h := range []string{"OpenAI-Organization", "OpenAI-Project", "X-Env-Header"} {
			if v := req.Header.Get(h); v != "" {
				t.Errorf("header %s = %q came from the environment", h, v)
			}
		}
	})
	t.Run("default base URL", func(t *testing.T) {
		var got string
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			got = r.URL.String()
			return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
				Body: io.NopCloser(strings.NewReader(providertest.Transcript(t, "text.sse"))), Request: r}, nil
		})}
		r := collect(t, newProvider(t, provider.Options{APIKey: "sk-explicit", HTTPClient: hc}))
		if r.Err != nil || got != "https://api.openai.com/v1/responses" {
			t.Fatalf("requested %q, result %+v", got, r)
		}
	})
	if len(decoySeen) != 0 {
		t.Error("OPENAI_BASE_URL was used")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestStream_Errors(t *testing.T) {
	const key = "sk-proj-TOPSECRET-9876"
	for _, tc := range []struct {
		name        string
		status      int
		contentType string
		body        string
		fatal       bool
		want        string
	}{
		{"rejected key quoted in full is scrubbed", 401, "application/json",
			`{"error":{"message":"Incorrect API key provided: ` + key + `.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			true, "OPENAI_API_KEY"},
		{"unknown model is fatal", 404, "application/json",
			`{"error":{"message":"The model 'gpt-9' does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			true, "does not exist"},
		{"bad request is fatal: the same request fails again", 400, "application/json",
			`{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`,
			true, "Unsupported parameter"},
		{"error as a plain string is still fatal", 401, "application/json", `{"error":"invalid key"}`, true, "OPENAI_API_KEY"},
		{"non-JSON 403 from a proxy is still fatal", 403, "text/html", "<html><body>Forbidden</body></html>", true, "OPENAI_API_KEY"},
		{"error event", 200, "text/event-stream",
			"event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"The server had an error.\",\"param\":null,\"sequence_number\":3}\n\n",
			false, "The server had an error. (server_error)"},
		{"error object in the stream", 200, "text/event-stream",
			"data: {\"error\":{\"message\":\"Incorrect API key provided: " + key + "\",\"type\":\"invalid_request_error\"}}\n\n",
			false, "received error while streaming"},
		{"response.failed", 200, "text/event-stream",
			"event: response.failed\ndata: {\"type\":\"response.failed\",\"sequence_number\":4,\"response\":{\"id\":\"resp_1\",\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"Something went wrong.\"},\"output\":[],\"usage\":null}}\n\n",
			false, "response failed: Something went wrong. (server_error)"},
		{"stream without response.completed", 200, "text/event-stream",
			"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n",
			false, "stream ended before response.completed"},
		{"JSON where a stream was expected", 200, "application/json", `{"id":"resp_1","status":"completed"}`,
			false, "stream ended before response.completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, seen := server(t, tc.status, tc.contentType, tc.body)
			r := collect(t, newProvider(t, provider.Options{Type: "openai", APIKey: key, KeyEnv: "OPENAI_API_KEY", BaseURL: url + "/v1"}))
			var pe *provider.Error
			if !errors.As(r.Err, &pe) || pe.Fatal != tc.fatal || r.Done {
				t.Fatalf("err = %#v, want a *provider.Error with Fatal %v", r.Err, tc.fatal)
			}
			msg := r.Err.Error()
			t.Log(msg)
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q does not say %q", msg, tc.want)
			}
			if strings.Contains(msg, "TOPSECRET") || strings.Contains(msg, "9876") {
				t.Errorf("error %q leaks the key", msg)
			}
			if len(seen) != 1 {
				t.Errorf("%d requests, want 1", len(seen))
			}
		})
	}
}

func TestStream_ContextCanceledBeforeStart(t *testing.T) {
	url, _ := server(t, 200, "text/event-stream", providertest.Transcript(t, "text.sse"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := providertest.Collect(ctx, newProvider(t, provider.Options{APIKey: "k", BaseURL: url}), providertest.Request())
	if !errors.Is(r.Err, context.Canceled) || r.Text != "" {
		t.Fatalf("got %+v, want context.Canceled", r)
	}
}

func TestStream_IsLazy(t *testing.T) {
	url, seen := server(t, 200, "text/event-stream", providertest.Transcript(t, "text.sse"))
	seq := newProvider(t, provider.Options{APIKey: "k", BaseURL: url}).Stream(t.Context(), providertest.Request())
	time.Sleep(50 * time.Millisecond)
	if len(seen) != 0 {
		t.Fatal("the request started before the first pull")
	}
	for range seq {
	}
	if len(seen) != 1 {
		t.Fatalf("%d requests after the pull", len(seen))
	}
}
