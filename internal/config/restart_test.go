package config

import (
	"slices"
	"strings"
	"testing"
)

// Orchestration restarts: both spellings set the cap (the coordination one wins), the
// debug answer is read as MassGen reads it, and the scripted agent's decisions are checked.
func TestParse_OrchestrationRestarts(t *testing.T) {
	tests := []struct {
		name, yaml   string
		wantRestarts int
		wantDebug    string
		wantDefer    bool
		wantDecide   []string
		wantErr      string
	}{
		{name: "coordination spelling", yaml: "orchestrator:\n  coordination: {max_orchestration_restarts: 2}\n", wantRestarts: 2},
		{name: "orchestrator spelling", yaml: "orchestrator:\n  max_orchestration_restarts: 1\n", wantRestarts: 1},
		{name: "the coordination spelling wins, before", yaml: "orchestrator:\n  coordination: {max_orchestration_restarts: 3}\n  max_orchestration_restarts: 1\n", wantRestarts: 3},
		{name: "the coordination spelling wins, after", yaml: "orchestrator:\n  max_orchestration_restarts: 1\n  coordination: {max_orchestration_restarts: 3}\n", wantRestarts: 3},
		{name: "debug text", yaml: "orchestrator:\n  debug_final_answer: |\n    only Lennon\n", wantDebug: "only Lennon\n"},
		{name: "debug true", yaml: "orchestrator:\n  debug_final_answer: true\n", wantDebug: "True"},
		{name: "debug false", yaml: "orchestrator:\n  debug_final_answer: false\n"},
		{name: "defer peer updates", yaml: "orchestrator:\n  defer_peer_updates_until_restart: true\n", wantDefer: true},
		{name: "negative", yaml: "orchestrator:\n  max_orchestration_restarts: -1\n", wantErr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(okAgents+tt.yaml))
			if tt.wantErr != "" {
				if rep.OK() || !strings.Contains(rep.Text(), tt.wantErr) {
					t.Fatalf("report %s, want %q", rep.Text(), tt.wantErr)
				}
				return
			}
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			o := cfg.Orchestrator
			if o.MaxOrchestrationRestarts != tt.wantRestarts || o.DebugFinalAnswer != tt.wantDebug || o.DeferPeerUpdatesUntilRestart != tt.wantDefer {
				t.Fatalf("restarts %d, debug %q, defer %v", o.MaxOrchestrationRestarts, o.DebugFinalAnswer, o.DeferPeerUpdatesUntilRestart)
			}
		})
	}
}

func TestParse_ScriptedPostEvaluation(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], post_evaluation: [restart, submit], restart_reason: r, restart_instructions: i}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	s := cfg.Agents[0].Backend.Script
	if !slices.Equal(s.PostEvaluation, []string{"restart", "submit"}) || s.RestartReason != "r" || s.RestartInstructions != "i" {
		t.Fatalf("script %+v", s)
	}
	_, rep = Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], post_evaluation: [restrat]}\n"))
	if rep.OK() || !strings.Contains(rep.Text(), "invalid post_evaluation decision `restrat`") || !strings.Contains(rep.Text(), "did you mean `restart`?") {
		t.Fatalf("report %s", rep.Text())
	}
}
