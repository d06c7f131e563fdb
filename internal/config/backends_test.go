package config

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// Every fact a type needs is in its row: a type this build runs has a key rule, the SDK's
// base-URL variable where its SDK has one, and a model rule; every other type the config
// accepts is refused by name with what to use instead.
func TestBackendTypes_EveryRowIsComplete(t *testing.T) {
	sdkEnv := map[string]bool{ProtocolResponses: true, ProtocolMessages: true, ProtocolGemini: true, ProtocolCLI: true}
	for _, name := range allBackendTypeNames() {
		bt := BackendTypes[name]
		t.Run(name, func(t *testing.T) {
			if !bt.Implemented {
				if !bt.Refused || bt.Instead == "" {
					t.Errorf("neither implemented nor refused by name: %+v", bt)
				}
				return
			}
			if len(bt.APIKeyEnv) == 0 && !bt.KeyOptional {
				t.Error("no key rule: set APIKeyEnv or KeyOptional")
			}
			if sdkEnv[bt.Protocol] && bt.BaseURLEnv == "" {
				t.Errorf("protocol %s has an SDK base-URL variable, but BaseURLEnv is empty", bt.Protocol)
			}
			if bt.Protocol != ProtocolScripted && bt.DefaultModel == "" {
				t.Error("no DefaultModel (CustomModel when model is required)")
			}
			if len(bt.KeyHosts) > 0 && len(bt.APIKeyEnv) == 0 {
				t.Error("KeyHosts without a key variable to read")
			}
			for _, e := range bt.APIKeyEnv {
				if !slices.Contains(KeyEnvNames(), e) {
					t.Errorf("KeyEnvNames leaves out %s", e)
				}
			}
		})
	}
}

// A preset's key host sends chatcompletion to the preset's key first; the type's own follows.
func TestKeyEnvs(t *testing.T) {
	for _, tc := range []struct {
		typ, url string
		want     []string
	}{
		{"chatcompletion", "https://api.groq.com/openai/v1", []string{"GROQ_API_KEY", "OPENAI_API_KEY"}},
		{"chatcompletion", "https://open.bigmodel.cn/api/paas/v4", []string{"ZAI_API_KEY", "OPENAI_API_KEY"}},
		{"chatcompletion", "https://api.x.ai/v1", []string{"XAI_API_KEY", "OPENAI_API_KEY"}},
		{"chatcompletion", "http://localhost:8000/v1", []string{"OPENAI_API_KEY"}},
		{"chatcompletion", "https://api.studio.nebius.ai/v1", []string{"NEBIUS_API_KEY", "OPENAI_API_KEY"}},
		{"chatcompletion", "https://API.X.AI./v1", []string{"XAI_API_KEY", "OPENAI_API_KEY"}},
		// The attacks: a host that only ends like a preset's, or a URL that names one in its
		// path, query or user part, gets no preset's key.
		{"chatcompletion", "https://max.ai/v1", []string{"OPENAI_API_KEY"}},
		{"chatcompletion", "https://buzz.ai/v1", []string{"OPENAI_API_KEY"}},
		{"chatcompletion", "https://evil.example/x.ai/v1?host=api.groq.com", []string{"OPENAI_API_KEY"}},
		{"chatcompletion", "https://api.groq.com@evil.example/v1", []string{"OPENAI_API_KEY"}},
		{"chatcompletion", "https://notnebius.example/v1", []string{"OPENAI_API_KEY"}},
		{"groq", "https://api.z.ai/v1", []string{"GROQ_API_KEY"}}, // hosts only steer chatcompletion
		{"moonshot", "", []string{"MOONSHOT_API_KEY", "KIMI_API_KEY"}},
		{"ollama", "", nil},
	} {
		if got := KeyEnvs(tc.typ, tc.url); !slices.Equal(got, tc.want) {
			t.Errorf("KeyEnvs(%s, %s) = %v, want %v", tc.typ, tc.url, got, tc.want)
		}
	}
}

func TestInferType(t *testing.T) {
	for model, want := range map[string]string{
		"gpt-5-mini": "openai", "o4-mini": "openai", "claude-sonnet-4-5-20250929": "claude", "gemini-2.5-pro": "gemini",
		"grok-4": "grok", "glm-4.5": "zai", "GPT-4o": "openai", "llama3": "",
	} {
		if got := InferType(model); got != want {
			t.Errorf("InferType(%q) = %q, want %q", model, got, want)
		}
	}
}

// README's list of backends names every type this build runs.
func TestReadme_ListsEveryBackend(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, _ := strings.Cut(string(b), "\nBackends: ")
	para, _, _ = strings.Cut(para, "\n\n")
	for _, n := range BackendTypeNames() {
		if !strings.Contains(strings.ToLower(para), strings.ToLower(n)) {
			t.Errorf("README's Backends paragraph does not name %s", n)
		}
	}
}
