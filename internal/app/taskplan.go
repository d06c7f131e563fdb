package app

import (
	"fmt"
	"os"
	"path/filepath"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/runlog"
)

// savePlans gives every agent with a workspace the task_planning_filesystem_mode writer of its
// plan: tasks/plan.json in its workspace, which its snapshots share with the others.
func savePlans(cfg *config.Config, agents []engine.Agent, tb *toolbox) {
	if !cfg.Orchestrator.TaskPlanning.Enabled || !cfg.Orchestrator.TaskPlanning.FilesystemMode {
		return
	}
	for i := range agents {
		if ws := tb.ws[agents[i].ID]; ws != nil {
			agents[i].SavePlan = func(data []byte) error { return ws.WriteOwn("tasks/plan.json", data) }
		}
	}
}

// keptPersonas are the personas a later turn keeps (persona_generator.persist_across_turns):
// those of the latest earlier turn of the session that wrote or kept some, read from its log,
// and that turn's number. None when the feature is off, the turn is the first, or no earlier
// turn has personas (they are written then).
func keptPersonas(cfg *config.Config, turnDir string, turn int) ([]event.Persona, int, error) {
	pg := cfg.Orchestrator.PersonaGenerator
	if !pg.Enabled || !pg.PersistAcrossTurns || turn <= 1 || turnDir == "" {
		return nil, 0, nil
	}
	session := filepath.Dir(turnDir)
	for n := turn - 1; n >= 1; n-- {
		dir := filepath.Join(session, fmt.Sprintf("turn_%d", n))
		if _, err := os.Stat(filepath.Join(dir, "events.jsonl")); err != nil {
			continue
		}
		t, err := runlog.ReadTurnLimited(dir)
		if err != nil {
			return nil, 0, fmt.Errorf("persona_generator.persist_across_turns: reading turn %d's personas: %w", n, err)
		}
		for k := len(t.Events) - 1; k >= 0; k-- {
			if p, ok := t.Events[k].Payload.(event.PersonasGenerated); ok {
				from := n
				if p.FromTurn > 0 {
					from = p.FromTurn
				}
				return p.Personas, from, nil
			}
		}
	}
	return nil, 0, nil
}
