package config

import (
	"strings"
	"testing"
)

// MassGen's Azure configs name only the deployment: the endpoint, key and API version come
// from the environment when the run starts.
func TestParse_AzureOpenAI(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: azure_openai, model: gpt-4.1}\n"+
		"  - id: b\n    backend: {type: azure_openai, model: my-deployment, base_url: \"https://r.openai.azure.com/\", api_version: 2024-10-21}\n"+
		"  - id: c\n    backend: {type: azure_openai, model: d, azure_endpoint: \"http://localhost:8080/\"}\n"))
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	want := []Backend{
		{Type: "azure_openai", Model: "gpt-4.1"},
		{Type: "azure_openai", Model: "my-deployment", BaseURL: "https://r.openai.azure.com/", APIVersion: "2024-10-21"},
		{Type: "azure_openai", Model: "d", BaseURL: "http://localhost:8080/"},
	}
	for i, w := range want {
		b := cfg.Agents[i].Backend
		if b.Type != w.Type || b.Model != w.Model || b.BaseURL != w.BaseURL || b.APIVersion != w.APIVersion || len(b.Params) != 0 {
			t.Errorf("agent %d backend = %+v, want %+v", i, b, w)
		}
	}
}

func TestParse_AzureOpenAIRefusals(t *testing.T) {
	const head = "agents:\n  - id: a\n    backend:\n      type: azure_openai\n"
	for _, tc := range []struct{ yaml, want string }{
		{"", "E 3:5 agents[0].backend | missing required key `model` | deployment"},
		{"      model: m\n      base_url: https://r.openai.azure.com/openai/v1/\n",
			"E 6:7 agents[0].backend.base_url | azure_openai adds /openai/deployments | type: chatcompletion"},
		{"      model: m\n      base_url: http://r.openai.azure.com/\n", "E 6:7 agents[0].backend.base_url | must use https"},
		{"      model: m\n      base_url: https://a/\n      azure_endpoint: https://b/\n", "E 6:7 agents[0].backend.base_url | both name the Azure endpoint"},
		{"      model: m\n      api_version: \"2024 10\"\n", "E 6:20 agents[0].backend.api_version | not an Azure API version"},
		{"      model: m\n      deployment_name: d\n", "E 6:7 agents[0].backend.deployment_name | `deployment_name` is not supported | in model"},
		{"      model: m\n      enable_web_search: true\n", "E 6:7 agents[0].backend.enable_web_search | does not support `enable_web_search`"},
		{"      model: m\n      enable_code_interpreter: true\n", "E 6:7 agents[0].backend.enable_code_interpreter | does not support"},
	} {
		_, rep := Parse("c.yaml", []byte(head+tc.yaml))
		checkIssues(t, rep, []string{tc.want})
	}
	_, rep := Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: openai, api_version: x}\n"))
	if rep.OK() || !strings.Contains(rep.Text(), "api_version") {
		t.Errorf("api_version on openai: %s", rep.Text())
	}
}
