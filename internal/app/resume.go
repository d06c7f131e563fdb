package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/runlog"
)

// ConfigHash identifies what of cfg a session's coordination depends on: the team (ids,
// backends, models, endpoints, system messages, parameters, with secrets replaced) and every
// orchestrator and timeout setting. metadata.json records it, and a resume with another hash
// is refused: the log's answers and votes were made under the recorded one.
func ConfigHash(cfg *config.Config) string {
	b, err := json.Marshal(struct {
		Team         map[string]any
		Orchestrator config.Orchestrator
		Timeouts     config.Timeouts
	}{Redacted(cfg), cfg.Orchestrator, cfg.Timeouts})
	if err != nil {
		// Only the backend parameters can fail to encode; the team still tells configs apart.
		b, _ = json.Marshal(Redacted(cfg)["agents"])
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// resumed is what Run does differently for a turn it resumes.
type resumed struct{ it *runlog.Interrupted }

// session is the log_<timestamp> folder name of the resumed turn.
func (r resumed) session() string { return filepath.Base(filepath.Dir(r.it.Dir)) }

// started is the resumed turn's opening event.
func (r resumed) started() event.SessionStarted {
	st, _ := r.it.Events[0].Payload.(event.SessionStarted)
	return st
}

// replay hands the log so far to the views, so that they show the whole session and not just
// what follows the resume.
func (r resumed) replay(sinks []event.Sink) {
	for _, e := range r.it.Events {
		for _, s := range sinks {
			s.Handle(e)
		}
	}
}

// restore is the engine's view of the log.
func (r resumed) restore() *engine.Restore {
	return &engine.Restore{Events: r.it.Events, Previous: r.it.Previous, Dropped: r.it.Dropped}
}

// lastSeq is the number of the log's last event.
func (r resumed) lastSeq() int64 { return r.it.Events[len(r.it.Events)-1].Seq }

func (r *resumed) restoreOrNil() *engine.Restore {
	if r == nil {
		return nil
	}
	return r.restore()
}
