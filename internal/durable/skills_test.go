package durable

import (
	"strings"
	"testing"

	"massgen/internal/config"
)

// Filesystem memory is files of the local session: Temporal refuses it by name.
func TestSupported_RefusesMemoryFiles(t *testing.T) {
	tests := []struct {
		name string
		cfg  config.Config
		want string
	}{
		{"memory files", config.Config{Orchestrator: config.Orchestrator{MemoryFiles: true},
			Agents: []config.Agent{{ID: "a", Backend: config.Backend{Type: "scripted"}}}}, "enable_memory_filesystem_mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Supported(&tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "not supported on Temporal yet") {
				t.Fatalf("Supported = %v, want a refusal naming %s", err, tt.want)
			}
		})
	}
}
