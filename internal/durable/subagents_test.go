package durable

import (
	"strings"
	"testing"

	"massgen/internal/config"
)

// Subagents are nested sessions this process runs: a session on Temporal refuses them by
// name rather than running agents whose spawn_subagents would go nowhere.
func TestSupported_RefusesSubagents(t *testing.T) {
	cfg, rep := config.Parse("c.yaml", []byte("agents:\n  - {id: a, backend: {type: openai, model: gpt-5}}\norchestrator:\n  coordination: {enable_subagents: true}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	err := Supported(cfg)
	if err == nil || !strings.Contains(err.Error(), "enable_subagents") {
		t.Fatalf("Supported = %v, want a refusal naming enable_subagents", err)
	}
	cfg.Orchestrator.Subagents.Enabled = false
	if err := Supported(cfg); err != nil {
		t.Fatalf("without subagents: %v", err)
	}
}
