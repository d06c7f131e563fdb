package gemini

import (
	"fmt"
	"net/http"
	"testing"

	"go.uber.org/goleak"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

func TestMain(m *testing.M) {
	// Importing genai links go.opencensus.io, whose init starts a process-wide worker.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// googleStatus is the google.rpc.Code name the API sends with an HTTP status.
var googleStatus = map[int]string{
	400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
	429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
}

// errorBody is an error in Google's shape; a 429 carries RetryInfo as the API's does.
func errorBody(status int) string {
	msg := map[int]string{
		401: "API key not valid. Please pass a valid API key.",
		429: "You exceeded your current quota, please check your plan and billing details.",
		500: "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting",
		503: "The model is overloaded. Please try again later.",
	}[status]
	if msg == "" {
		msg = http.StatusText(status)
	}
	details := ""
	if status == http.StatusTooManyRequests {
		details = `,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1s"}]`
	}
	return fmt.Sprintf(`{"error":{"code":%d,"message":%q,"status":%q%s}}`, status, msg, googleStatus[status], details)
}

// testClient gives each provider its own transport, closed when the test ends, so that no
// keep-alive goroutine outlives the test.
func testClient(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func newTest(t testing.TB, o provider.Options) *Provider {
	t.Helper()
	if o.Type == "" {
		o.Type = "gemini"
	}
	if o.KeyEnv == "" {
		o.KeyEnv = "GEMINI_API_KEY"
	}
	if o.APIKey == "" {
		o.APIKey = "test-key"
	}
	if o.HTTPClient == nil {
		o.HTTPClient = testClient(t)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConformance(t *testing.T) {
	bodies := map[providertest.Scenario]string{
		providertest.Text:      providertest.Transcript(t, "text.sse"),
		providertest.ToolCall:  providertest.Transcript(t, "tool_call.sse"),
		providertest.Reasoning: providertest.Transcript(t, "reasoning.sse"),
		providertest.Malformed: providertest.Transcript(t, "malformed.sse"),
	}
	providertest.Run(t, providertest.Wire{
		Body:           func(s providertest.Scenario) string { return bodies[s] },
		ContentType:    "text/event-stream",
		ErrorBody:      errorBody,
		KeyEnv:         "GEMINI_API_KEY",
		ToolChoiceNone: map[string]any{"toolConfig": map[string]any{"functionCallingConfig": map[string]any{"mode": "NONE"}}},
		New: func(baseURL, apiKey string) provider.Provider {
			return newTest(t, provider.Options{BaseURL: baseURL, APIKey: apiKey, Model: "test-model"})
		},
	})
}
