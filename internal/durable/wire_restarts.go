package durable

import "massgen/internal/config"

// restartsDoc writes orchestration restarts' keys: how many restarts the presenter may ask
// for (in coordination, the spelling that wins), and debug_final_answer (orchestrator level),
// the answer the first post-evaluation reads instead.
func restartsDoc(orch, coord obj, o config.Orchestrator) {
	putInt(coord, "max_orchestration_restarts", o.MaxOrchestrationRestarts)
	putStr(orch, "debug_final_answer", o.DebugFinalAnswer)
}
