package chat

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// azureErrorBody is what Azure OpenAI sends: its code is the status as a string.
func azureErrorBody(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`
	case http.StatusTooManyRequests:
		return `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second."}}`
	}
	return `{"error":{"code":"InternalServerError","message":"The service is temporarily unable to process your request."}}`
}

func azureTestOptions(baseURL, key string) provider.Options {
	return provider.Options{Type: Azure, Model: "gpt-4o-prod", APIKey: key, KeyEnv: "AZURE_OPENAI_API_KEY",
		BaseURL: baseURL, APIVersion: "2024-10-21", MaxRetries: 2}
}

// The transcripts are Azure's stream: a first event with prompt_filter_results and no choices,
// content_filter_results on every choice, usage in a last event without choices. The
// reasoning one is DeepSeek-R1 deployed on an Azure OpenAI resource (reasoning_content).
func TestConformance_Azure(t *testing.T) {
	providertest.Run(t, providertest.Wire{
		Body:           func(s providertest.Scenario) string { return providertest.Transcript(t, "azure", string(s)+".sse") },
		ContentType:    "text/event-stream; charset=utf-8",
		ErrorBody:      azureErrorBody,
		KeyEnv:         "AZURE_OPENAI_API_KEY",
		ToolChoiceNone: map[string]any{"tool_choice": "none"},
		New:            func(baseURL, apiKey string) provider.Provider { return mustNew(t, azureTestOptions(baseURL, apiKey)) },
	})
}

// A request goes to the deployment's route with the api-version query and the key in the
// api-key header, never as a bearer token; a path in the endpoint (an API gateway's) is kept.
func TestAzure_Wire(t *testing.T) {
	const key = "azure-key-SECRET-1234"
	for _, prefix := range []string{"", "/gateway"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			type seen struct {
				path, version, apiKey, auth, model string
			}
			reqs := make(chan seen, 4)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct {
					Model string `json:"model"`
				}
				b, _ := io.ReadAll(r.Body)
				_ = json.Unmarshal(b, &body)
				reqs <- seen{r.URL.Path, r.URL.Query().Get("api-version"), r.Header.Get("api-key"), r.Header.Get("Authorization"), body.Model}
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, providertest.Transcript(t, "azure", "text.sse"))
			}))
			t.Cleanup(srv.Close)
			p := mustNew(t, azureTestOptions(srv.URL+prefix+"/", key))
			req := providertest.Request()
			req.Model = ""
			r := providertest.Collect(t.Context(), p, req)
			if r.Err != nil || r.Text != "Hello, world." || r.Usage != providertest.TextUsage {
				t.Fatalf("got %+v", r)
			}
			got := <-reqs
			want := seen{prefix + "/openai/deployments/gpt-4o-prod/chat/completions", "2024-10-21", key, "", "gpt-4o-prod"}
			if got != want {
				t.Errorf("request %+v, want %+v", got, want)
			}
		})
	}
}

// The deployment is each request's model, one path segment of the route: a "/" in it stays in
// the segment, and a name that would climb out of the deployments is refused before any request.
func TestAzure_Deployment(t *testing.T) {
	paths := make(chan string, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.EscapedPath() + "?" + r.URL.RawQuery
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, providertest.Transcript(t, "azure", "text.sse"))
	}))
	t.Cleanup(srv.Close)
	p := mustNew(t, azureTestOptions(srv.URL+"/gw", "k"))
	for _, tc := range []struct{ model, path, err string }{
		{"other-deployment", "/gw/openai/deployments/other-deployment/chat/completions?api-version=2024-10-21", ""},
		{"team/a", "/gw/openai/deployments/team%2Fa/chat/completions?api-version=2024-10-21", ""},
		{"..", "", `".." is not a deployment name`},
		{".", "", `"." is not a deployment name`},
	} {
		req := providertest.Request()
		req.Model = tc.model
		r := providertest.Collect(t.Context(), p, req)
		if tc.err != "" {
			if r.Err == nil || !strings.Contains(r.Err.Error(), tc.err) {
				t.Errorf("model %q: %v, want an error saying %s", tc.model, r.Err, tc.err)
			}
			select {
			case got := <-paths:
				t.Errorf("model %q: a request went to %s", tc.model, got)
			default:
			}
			continue
		}
		if r.Err != nil {
			t.Fatalf("model %q: %v", tc.model, r.Err)
		}
		if got := <-paths; got != tc.path {
			t.Errorf("model %q: request to %s, want %s", tc.model, got, tc.path)
		}
	}
}

// The key never leaves the endpoint's origin: a redirect elsewhere (another port of this
// machine too, which openai-go's own check lets through for plain-http loopback endpoints)
// fails the call before the other server is asked anything.
func TestAzure_KeyStaysOnEndpoint(t *testing.T) {
	const key = "azure-key-SECRET-5678"
	for name, start := range map[string]func(http.Handler) *httptest.Server{
		"https": httptest.NewTLSServer, "http on this machine": httptest.NewServer,
	} {
		t.Run(name, func(t *testing.T) {
			elsewhere := start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				t.Errorf("the request reached another server, api-key %q, Authorization %q", r.Header.Get("api-key"), r.Header.Get("Authorization"))
				w.WriteHeader(http.StatusTeapot)
			}))
			t.Cleanup(elsewhere.Close)
			srv := start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.URL+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			}))
			t.Cleanup(srv.Close)
			o := azureTestOptions(srv.URL, key)
			o.HTTPClient = srv.Client() // trusts the test certificate, which both servers share
			r := providertest.Collect(t.Context(), mustNew(t, o), providertest.Request())
			if r.Err == nil || r.Done {
				t.Fatalf("got %+v, want an error", r)
			}
			if strings.Contains(r.Err.Error(), key) {
				t.Errorf("the error shows the key: %v", r.Err)
			}
		})
	}
}

func TestAzure_Rejects(t *testing.T) {
	ok := azureTestOptions("https://my-resource.openai.azure.com/", "k")
	for name, tc := range map[string]struct {
		change func(o *provider.Options)
		want   string
	}{
		"http to another host": {func(o *provider.Options) { o.BaseURL = "http://my-resource.openai.azure.com/" }, "must use https"},
		"the v1 API's base":    {func(o *provider.Options) { o.BaseURL += "openai/v1/" }, "/openai path"},
		"no key":               {func(o *provider.Options) { o.APIKey = "" }, "AZURE_OPENAI_API_KEY"},
		"no version":           {func(o *provider.Options) { o.APIVersion = "" }, "api_version"},
	} {
		o := ok
		tc.change(&o)
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v, want an error saying %q", name, err, tc.want)
		}
	}
	if _, err := New(ok); err != nil {
		t.Errorf("New(%s) = %v", ok.BaseURL, err)
	}
}
