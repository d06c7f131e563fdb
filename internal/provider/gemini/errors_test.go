package gemini

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

const secretKey = "AIzaSy-SECRET-0042"

// scriptedServer answers request n (1-based) with handle(n), which writes the whole response.
func scriptedServer(t *testing.T, handle func(w http.ResponseWriter, n int)) (string, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		handle(w, int(n.Add(1)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

func writeJSON(w http.ResponseWriter, status int, header map[string]string, body string) {
	for k, v := range header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestStream_Errors(t *testing.T) {
	const keyInvalid = `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key. (` + secretKey + `)","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`
	for _, tc := range []struct {
		name     string
		handle   func(w http.ResponseWriter, n int)
		fatal    bool
		status   int
		requests int32
		contains []string
	}{{
		name:   "a bad key (400 API_KEY_INVALID) is fatal, names the variable and never the key",
		handle: func(w http.ResponseWriter, n int) { writeJSON(w, 400, nil, keyInvalid) },
		fatal:  true, status: 400, requests: 1,
		contains: []string{"GEMINI_API_KEY", "API key not valid", "API_KEY_INVALID"},
	}, {
		name: "a key quoted without its prefix is redacted too",
		handle: func(w http.ResponseWriter, n int) {
			writeJSON(w, 403, nil, `{"error":{"code":403,"message":"Key `+secretKey[4:]+` is not allowed (masked: `+secretKey[:6]+`***0042).","status":"PERMISSION_DENIED"}}`)
		},
		fatal: true, status: 403, requests: 1, contains: []string{"GEMINI_API_KEY", "Key [redacted] is not allowed (masked: [redacted])"},
	}, {
		name: "403 is fatal",
		handle: func(w http.ResponseWriter, n int) {
			writeJSON(w, 403, nil, `{"error":{"code":403,"message":"Method doesn't allow unregistered callers.","status":"PERMISSION_DENIED"}}`)
		},
		fatal: true, status: 403, requests: 1, contains: []string{"GEMINI_API_KEY", "unregistered callers"},
	}, {
		name: "an unknown model is fatal",
		handle: func(w http.ResponseWriter, n int) {
			writeJSON(w, 404, nil, `{"error":{"code":404,"message":"models/nope is not found for API version v1beta","status":"NOT_FOUND"}}`)
		},
		fatal: true, status: 404, requests: 1, contains: []string{"not found", "models/nope"},
	}, {
		name: "another 400 is fatal and not retried (provider.StatusError's rule)",
		handle: func(w http.ResponseWriter, n int) {
			writeJSON(w, 400, nil, `{"error":{"code":400,"message":"Invalid JSON payload received.","status":"INVALID_ARGUMENT"}}`)
		},
		fatal: true, status: 400, requests: 1, contains: []string{"Invalid JSON payload", "INVALID_ARGUMENT"},
	}, {
		name: "a 503 that persists is a retryable error after the retries",
		handle: func(w http.ResponseWriter, n int) {
			writeJSON(w, 503, map[string]string{"Retry-After": "0"}, `{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`)
		},
		status: 503, requests: 3, contains: []string{"overloaded"},
	}, {
		name: "an error event inside the stream is a retryable error",
		handle: func(w http.ResponseWriter, n int) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"candidates":[{"content":{"parts":[{"text":"Hel"}],"role":"model"}}]}`+"\r\n\r\n"+
				`data: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`+"\r\n\r\n")
		},
		status: 500, requests: 1, contains: []string{"Internal error encountered"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			url, n := scriptedServer(t, tc.handle)
			p := newTest(t, provider.Options{BaseURL: url, APIKey: secretKey, Model: "m", MaxRetries: 2})
			r := providertest.Collect(t.Context(), p, providertest.Request())
			var pe *provider.Error
			if !errors.As(r.Err, &pe) {
				t.Fatalf("err = %v, want a *provider.Error", r.Err)
			}
			if pe.Fatal != tc.fatal || pe.Status != tc.status || n.Load() != tc.requests || r.Done {
				t.Errorf("got fatal=%v status=%d after %d requests (done=%v): %v", pe.Fatal, pe.Status, n.Load(), r.Done, r.Err)
			}
			msg := r.Err.Error()
			if strings.Contains(msg, secretKey) || strings.Contains(msg, "0042") {
				t.Errorf("the error shows the key: %s", msg)
			}
			for _, s := range tc.contains {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not say %q", msg, s)
				}
			}
		})
	}
}

func TestStream_Retries(t *testing.T) {
	text := providertest.Transcript(t, "text.sse")
	ok := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, text)
	}
	t.Run("429 honours the RetryInfo delay in the body", func(t *testing.T) {
		url, n := scriptedServer(t, func(w http.ResponseWriter, n int) {
			if n == 1 {
				writeJSON(w, 429, nil, `{"error":{"code":429,"message":"Resource has been exhausted.","status":"RESOURCE_EXHAUSTED",`+
					`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.3s"}]}}`)
				return
			}
			ok(w)
		})
		start := time.Now()
		r := providertest.Collect(t.Context(), newTest(t, provider.Options{BaseURL: url, Model: "m"}), providertest.Request())
		if r.Err != nil || r.Text != "Hello, world." || n.Load() != 2 {
			t.Fatalf("got %+v after %d requests", r, n.Load())
		}
		if d := time.Since(start); d < 300*time.Millisecond {
			t.Errorf("retried after %v, before the retry delay", d)
		}
	})
	t.Run("a connection dropped before the response is retried", func(t *testing.T) {
		url, n := scriptedServer(t, func(w http.ResponseWriter, n int) {
			if n == 1 {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			ok(w)
		})
		r := providertest.Collect(t.Context(), newTest(t, provider.Options{BaseURL: url, Model: "m"}), providertest.Request())
		if r.Err != nil || r.Text != "Hello, world." || n.Load() != 2 {
			t.Fatalf("got %+v after %d requests", r, n.Load())
		}
	})
	t.Run("the context ends a wait for a retry", func(t *testing.T) {
		url, _ := scriptedServer(t, func(w http.ResponseWriter, n int) {
			writeJSON(w, 429, map[string]string{"Retry-After": "30"}, `{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}`)
		})
		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		r := providertest.Collect(ctx, newTest(t, provider.Options{BaseURL: url, Model: "m"}), providertest.Request())
		if !errors.Is(r.Err, context.DeadlineExceeded) || provider.IsFatal(r.Err) {
			t.Fatalf("err = %v, want one wrapping the deadline", r.Err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("returned after %v", d)
		}
	})
}

func TestServiceDelay(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	resp := func(status int, header, body string) *http.Response {
		r := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}
		if header != "" {
			r.Header.Set("Retry-After", header)
		}
		return r
	}
	retryInfo := `{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure"},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`
	for _, tc := range []struct {
		name string
		resp *http.Response
		want time.Duration
		ok   bool
	}{
		{"seconds", resp(503, "2", ""), 2 * time.Second, true},
		{"fractional seconds", resp(429, "0.5", ""), 500 * time.Millisecond, true},
		{"http date", resp(429, now.Add(3*time.Second).Format(http.TimeFormat), ""), 3 * time.Second, true},
		{"header wins over the body", resp(429, "1", retryInfo), time.Second, true},
		{"retry info in a 429 body", resp(429, "", retryInfo), 37 * time.Second, true},
		{"retry info is read only for 429", resp(503, "", retryInfo), 0, false},
		{"too long", resp(429, "3600", ""), 0, false},
		{"garbage", resp(429, "soon", ""), 0, false},
		{"no hint", resp(500, "", `{"error":{}}`), 0, false},
		{"no response", nil, 0, false},
	} {
		got, ok := serviceDelay(tc.resp, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
