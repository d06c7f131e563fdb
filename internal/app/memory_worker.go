package app

import (
	"context"
	"time"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/redact"
)

// Persistent memory of a session that runs on workers (Temporal): each step that needs the
// store (recall before coordination, remember after the final answer) opens it on the worker
// that takes the step, with that worker's embedding keys, sent only where the worker's
// allowlist lets them go. As locally, nothing memory does stops the session: what fails is
// reported and the step goes on without it.

// WorkerMemory is persistent memory for one step of a session on a worker.
type WorkerMemory struct {
	mt       *memoryTurn
	err      error // why there is no memory on this worker (a missing key, a refused endpoint)
	question string
	bus      *event.Bus
}

// MemoryOnWorker opens the memory of a session's step on this worker: cfg's agents (built
// with their providers, for fact extraction), in scope sc and turn, the question asked;
// getenv reads this worker's keys and check is its allowlist. It publishes on bus.
func MemoryOnWorker(cfg *config.Config, agents []engine.Agent, sc MemoryScope, turn int, question string,
	getenv func(string) string, check func(config.Agent, string) error, bus *event.Bus) *WorkerMemory {
	wm := &WorkerMemory{question: question, bus: bus}
	keys, froms := make([]string, len(cfg.Agents)), make([]string, len(cfg.Agents))
	for i, a := range cfg.Agents {
		// An agent without its key has no provider here either; its embeddings may still
		// use another provider's.
		keys[i], froms[i], _ = APIKey(a.Backend, getenv)
	}
	red := redact.New(keys...)
	mt, err := startMemory(cfg, agents, keys, froms, Options{Getenv: getenv, Turn: turn}, red, sc, check, time.Now())
	if err != nil {
		wm.err = err
		return wm
	}
	if mt != nil {
		mt.bus = bus
	}
	wm.mt = mt
	return wm
}

// trouble reports why this worker has no memory for stage, and whether it has none.
func (wm *WorkerMemory) trouble(stage, then string) bool {
	if wm.err != nil {
		wm.bus.Publish(event.MemoryTrouble{Stage: stage, Message: wm.err.Error() + "; " + then})
		return true
	}
	if wm.mt == nil {
		return true
	}
	for _, p := range wm.mt.troubles {
		wm.bus.Publish(p)
	}
	return false
}

// Recall is engine.Options.Recall on this worker; nil when there is nothing to recall with.
func (wm *WorkerMemory) Recall() func(context.Context, func(int, provider.Usage)) []string {
	if wm.trouble("retrieve", "the agents start without their memories") {
		return nil
	}
	return wm.mt.recall(wm.question)
}

// Remember is engine.Options.Remember on this worker, for a session whose agents' latest
// answers are answers (engine.LatestAnswers); nil when there is nothing to remember with.
func (wm *WorkerMemory) Remember(answers map[string]string) func(context.Context, engine.Result, func(int, provider.Usage)) {
	if wm.trouble("remember", "nothing of this turn was stored") {
		return nil
	}
	wm.mt.mu.Lock()
	for id, a := range answers {
		wm.mt.answers[id] = a
	}
	wm.mt.mu.Unlock()
	return wm.mt.remember(wm.question)
}

// CompressionOnWorker gives agents (with their providers) the compression cfg sets for them
// (memory.compression, filesystem_memory), for a session a worker runs without workspaces:
// the summarised messages are not saved anywhere. A held session's team has it from
// BuildTeam, with its workspaces.
func CompressionOnWorker(cfg *config.Config, agents []engine.Agent) {
	for i, a := range cfg.Agents {
		if c := compression(cfg, a); c.Trigger > 0 {
			agents[i].Compact = compactor(agents[i], c, "")
		}
	}
}
