package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

func TestBaseURL(t *testing.T) {
	env := env(map[string]string{
		"OPENAI_BASE_URL":        "http://proxy.local:4000/v1",
		"ANTHROPIC_BASE_URL":     "http://claude.local",
		"GOOGLE_GEMINI_BASE_URL": "http://gemini.local",
		"GEMINI_BASE_URL":        "http://not-read.local",
	})
	openaiDefault := config.BackendTypes["openai"].DefaultBaseURL
	tests := []struct {
		name     string
		b        config.Backend
		getenv   func(string) string
		url, src string
	}{
		{"openai takes OPENAI_BASE_URL", config.Backend{Type: "openai", BaseURL: openaiDefault}, env, "http://proxy.local:4000/v1", "OPENAI_BASE_URL"},
		{"the config's base_url wins", config.Backend{Type: "openai", BaseURL: "http://mine/v1"}, env, "http://mine/v1", "base_url"},
		{"chatcompletion on OpenAI's URL takes it", config.Backend{Type: "chatcompletion", BaseURL: openaiDefault}, env, "http://proxy.local:4000/v1", "OPENAI_BASE_URL"},
		{"chatcompletion elsewhere keeps its URL", config.Backend{Type: "chatcompletion", BaseURL: "http://vllm:8000/v1"}, env, "http://vllm:8000/v1", "base_url"},
		{"a preset keeps its own host", config.Backend{Type: "groq", BaseURL: config.BackendTypes["groq"].DefaultBaseURL}, env, config.BackendTypes["groq"].DefaultBaseURL, "default"},
		{"claude takes ANTHROPIC_BASE_URL", config.Backend{Type: "claude", BaseURL: config.BackendTypes["claude"].DefaultBaseURL}, env, "http://claude.local", "ANTHROPIC_BASE_URL"},
		{"gemini takes GOOGLE_GEMINI_BASE_URL only", config.Backend{Type: "gemini", BaseURL: config.BackendTypes["gemini"].DefaultBaseURL}, env, "http://gemini.local", "GOOGLE_GEMINI_BASE_URL"},
		{"unset: the default", config.Backend{Type: "openai", BaseURL: openaiDefault}, func(string) string { return " " }, openaiDefault, "default"},
		{"scripted has none", config.Backend{Type: "scripted"}, env, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u, src, err := BaseURL(tc.b, tc.getenv)
			if err != nil || u != tc.url || src != tc.src {
				t.Errorf("BaseURL = %q, %q, %v; want %q, %q", u, src, err, tc.url, tc.src)
			}
		})
	}
}

func TestBaseURL_RejectsANonURL(t *testing.T) {
	b := config.Backend{Type: "openai", BaseURL: config.BackendTypes["openai"].DefaultBaseURL}
	_, src, err := BaseURL(b, env(map[string]string{"OPENAI_BASE_URL": "localhost:4000"}))
	if err == nil || src != "OPENAI_BASE_URL" || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Fatalf("BaseURL = %q, %v; want an error naming OPENAI_BASE_URL", src, err)
	}
	cfg, rep := config.Parse("team.yaml", []byte("agents:\n  - {id: a, backend: {type: openai, model: gpt-5}}\n  - {id: b, backend: {type: openai, model: gpt-5}}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	_, err = Run(t.Context(), cfg, Options{Question: "Q?", Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": "localhost:4000"})})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != ExitConfig || strings.Count(err.Error(), "OPENAI_BASE_URL") != 1 {
		t.Fatalf("Run error %v, want one configuration error naming OPENAI_BASE_URL", err)
	}
}

// TestRun_BaseURLFromEnvironment: with no base_url in the config, the SDKs' variables send
// every request, and its key, to the server they name; the run header, session_started and
// metadata.json show where.
func TestRun_BaseURLFromEnvironment(t *testing.T) {
	gpt := newFake(t, nil, openaiResponses("Paris is the capital of France."))
	compat := newFake(t, nil, chatCompletions("It is Paris."))
	claude := newFake(t, nil, anthropicMessages("The capital is Paris."))
	gem := newFake(t, nil, geminiStream("Paris, on the Seine."))
	// OPENAI_BASE_URL serves both OpenAI agents: one host, each API on its path.
	mux := http.NewServeMux()
	mux.Handle("/v1/responses", gpt.Config.Handler)
	mux.Handle("/v1/chat/completions", compat.Config.Handler)
	both := httptest.NewServer(mux)
	t.Cleanup(both.Close)
	cfg, rep := config.Parse("team.yaml", []byte(`
agents:
  - {id: gpt, backend: {type: openai, model: gpt-5-mini}}
  - {id: compat, backend: {type: chatcompletion, model: gpt-5-mini}}
  - {id: claude, backend: {type: claude, model: claude-sonnet-4-5}}
  - {id: gem, backend: {type: gemini, model: gemini-2.5-flash}}
timeout_settings: {agent_timeout_seconds: 10, orchestrator_timeout_seconds: 120}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	vars := map[string]string{
		"OPENAI_API_KEY": "sk-local-1", "ANTHROPIC_API_KEY": "sk-ant-local-2", "GEMINI_API_KEY": "AIza-local-3",
		"OPENAI_BASE_URL": both.URL + "/v1", "ANTHROPIC_BASE_URL": claude.URL, "GOOGLE_GEMINI_BASE_URL": gem.URL,
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Capital of France?", Logging: true, LogRoot: root,
		Getenv: env(vars), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %v\n%s", res.ExitCode, res.Err, out.String())
	}
	for name, s := range map[string]*fakeServer{"openai": gpt, "chatcompletion": compat, "claude": claude, "gemini": gem} {
		if s.requests.Load() == 0 {
			t.Errorf("no %s request reached the server its variable names", name)
		}
	}
	want := map[string]string{"gpt": both.URL + "/v1", "compat": both.URL + "/v1", "claude": claude.URL, "gem": gem.URL}
	for id, u := range want {
		if line := fmt.Sprintf("= %s (", id); !strings.Contains(out.String(), line) || !strings.Contains(out.String(), "at "+u+", NOT the provider's default endpoint)") {
			t.Errorf("the header does not show %s at %s:\n%s", id, u, out.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	var started struct {
		Data struct {
			Agents []struct {
				ID      string `json:"id"`
				BaseURL string `json:"base_url"`
			} `json:"agents"`
		} `json:"data"`
	}
	if err := json.Unmarshal(first, &started); err != nil {
		t.Fatal(err)
	}
	for _, a := range started.Data.Agents {
		if a.BaseURL != want[a.ID] {
			t.Errorf("session_started: %s base_url %q, want %q", a.ID, a.BaseURL, want[a.ID])
		}
	}
	var meta struct {
		Config struct {
			Agents []struct {
				ID      string `json:"id"`
				Backend struct {
					BaseURL string `json:"base_url"`
				} `json:"backend"`
			} `json:"agents"`
		} `json:"config"`
	}
	readJSON(t, filepath.Join(res.Dir, "metadata.json"), &meta)
	for _, a := range meta.Config.Agents {
		if a.Backend.BaseURL != want[a.ID] {
			t.Errorf("metadata.json: %s base_url %q, want %q", a.ID, a.Backend.BaseURL, want[a.ID])
		}
	}
}

func TestUnpricedModels(t *testing.T) {
	cfg, rep := config.Parse("team.yaml", []byte(`
agents:
  - {id: a, backend: {type: openai, model: gpt-5}}
  - {id: b, backend: {type: chatcompletion, model: my-finetune, base_url: "http://127.0.0.1:8000/v1"}}
  - {id: c, backend: {type: chatcompletion, model: my-finetune, base_url: "http://127.0.0.1:8000/v1"}}
  - {id: d, backend: {type: ollama, model: llama3}}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	if got := UnpricedModels(cfg); len(got) != 1 || got[0] != "my-finetune" {
		t.Errorf("UnpricedModels = %v, want [my-finetune] (ollama is free)", got)
	}
}
