package app

import (
	"bytes"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// azureFake is an Azure OpenAI resource: it serves Chat Completions only on the deployment
// routes, with the api-version query and the key in the api-key header, and records what
// else it was sent.
func azureFake(t *testing.T, key, version string, deployments ...string) (*fakeServer, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var problems []string
	fault := func(w http.ResponseWriter, r *http.Request, _ int) bool {
		dep, ok := strings.CutPrefix(r.URL.Path, "/openai/deployments/")
		dep, ok2 := strings.CutSuffix(dep, "/chat/completions")
		var bad []string
		if !ok || !ok2 || !slices.Contains(deployments, dep) {
			bad = append(bad, "path "+r.URL.Path)
		}
		if got := r.URL.Query().Get("api-version"); got != version {
			bad = append(bad, "api-version "+got)
		}
		if r.Header.Get("api-key") != key || r.Header.Get("Authorization") != "" {
			bad = append(bad, "credentials in the wrong header")
		}
		if len(bad) == 0 {
			return false
		}
		mu.Lock()
		problems = append(problems, bad...)
		mu.Unlock()
		http.Error(w, `{"error":{"code":"404","message":"Resource not found"}}`, http.StatusNotFound)
		return true
	}
	s := newFake(t, fault, chatCompletions("Paris is the capital of France."))
	return s, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(problems) }
}

// MassGen's two-agent Azure config, with only deployment names, runs to a final answer with
// the endpoint, key and API version from the environment; the deployment named after a known
// model is priced, the other is reported as unpriced.
func TestE2E_AzureOpenAI(t *testing.T) {
	const key = "azure-e2e-SECRET-7777"
	srv, problems := azureFake(t, key, "2025-01-01-preview", "gpt-4.1", "team-chat")
	cfg, rep := config.Parse("azure.yaml", []byte(`
agents:
  - id: azure_gpt4
    backend: {type: azure_openai, model: gpt-4.1}
    system_message: You are an expert AI assistant.
  - id: azure_team
    backend: {type: azure_openai, model: team-chat}
timeout_settings: {agent_timeout_seconds: 10, orchestrator_timeout_seconds: 120}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	vars := map[string]string{"AZURE_OPENAI_API_KEY": key, "AZURE_OPENAI_ENDPOINT": srv.URL + "/",
		"AZURE_OPENAI_API_VERSION": "2025-01-01-preview"}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "What is the capital of France?", Logging: true, LogRoot: root,
		Getenv: env(vars), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.FinalAnswer != "FINAL: Paris is the capital of France." {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	if p := problems(); len(p) > 0 {
		t.Errorf("requests the Azure fake refused: %v", p)
	}
	if srv.requests.Load() < 4 {
		t.Errorf("%d requests, want answers, votes and a presentation", srv.requests.Load())
	}
	if got := UnpricedModels(cfg); !slices.Equal(got, []string{"team-chat"}) {
		t.Errorf("UnpricedModels = %v, want [team-chat]: gpt-4.1 is a known model", got)
	}
	if strings.Contains(out.String(), "NOT the provider's default endpoint") || !strings.Contains(out.String(), "at "+srv.URL+"/)") {
		t.Errorf("the header should name the Azure endpoint, which is no detour:\n%s", out.String())
	}
	var meta struct {
		Config struct {
			Agents []struct {
				Backend struct {
					BaseURL    string `json:"base_url"`
					APIVersion string `json:"api_version"`
				} `json:"backend"`
			} `json:"agents"`
		} `json:"config"`
	}
	readJSON(t, filepath.Join(res.Dir, "metadata.json"), &meta)
	if b := meta.Config.Agents[0].Backend; b.BaseURL != srv.URL+"/" || b.APIVersion != "2025-01-01-preview" {
		t.Errorf("metadata.json backend %+v", b)
	}
	eachFile(t, root, func(path string, b []byte) {
		if bytes.Contains(b, []byte(key)) || bytes.Contains(b, []byte("SECRET-7777")) {
			t.Errorf("%s holds the Azure key", path)
		}
	})
}

// Without an endpoint the run stops before any request and says what to set.
func TestRun_AzureWithoutEndpoint(t *testing.T) {
	cfg, rep := config.Parse("azure.yaml", []byte("agent: {id: a, backend: {type: azure_openai, model: gpt-4.1}}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	_, err := Run(t.Context(), cfg, Options{Question: "q", Getenv: env(map[string]string{"AZURE_OPENAI_API_KEY": "k"})})
	if err == nil || !strings.Contains(err.Error(), "AZURE_OPENAI_ENDPOINT") {
		t.Fatalf("err = %v, want one naming AZURE_OPENAI_ENDPOINT", err)
	}
}

// The API version comes from the config, else the environment, else the type's default.
func TestAPIVersion(t *testing.T) {
	b := config.Backend{Type: "azure_openai"}
	set := env(map[string]string{"AZURE_OPENAI_API_VERSION": "2024-10-21"})
	for _, tc := range []struct {
		b      config.Backend
		getenv func(string) string
		want   string
	}{
		{b, env(nil), "2024-12-01-preview"},
		{b, set, "2024-10-21"},
		{config.Backend{Type: "azure_openai", APIVersion: "2025-04-01-preview"}, set, "2025-04-01-preview"},
		{config.Backend{Type: "openai"}, set, ""},
	} {
		if got := APIVersion(tc.b, tc.getenv); got != tc.want {
			t.Errorf("APIVersion(%+v) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
