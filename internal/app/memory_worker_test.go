package app

import (
	"testing"

	"massgen/internal/config"
	"massgen/internal/engine"
)

// A worker without workspaces compresses as a local run does: the agents that memory or
// filesystem_memory compresses, and no other.
func TestCompressionOnWorker(t *testing.T) {
	const agents = "agents:\n  - {id: a, backend: {type: scripted, answers: [hi]}}\n  - {id: b, backend: {type: scripted, answers: [hi]}, memory: {enabled: false}}\n"
	tests := []struct {
		name string
		yaml string
		want []bool
	}{
		{"none", agents, []bool{false, false}},
		{"filesystem_memory", agents + "filesystem_memory: {}\n", []bool{true, true}},
		{"memory, off for b", agents + "memory: {enabled: true, persistent_memory: {enabled: false}}\n", []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, rep := config.Parse("team.yaml", []byte(tt.yaml))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			ags := []engine.Agent{{ID: "a", Model: "m"}, {ID: "b", Model: "m"}}
			CompressionOnWorker(cfg, ags)
			for i, a := range ags {
				if (a.Compact != nil) != tt.want[i] {
					t.Errorf("agent %s compresses: %v, want %v", a.ID, a.Compact != nil, tt.want[i])
				}
			}
		})
	}
}
