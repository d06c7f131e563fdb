package app

import (
	"fmt"
	"path/filepath"

	"massgen/internal/coord"
	"massgen/internal/engine"
	"massgen/internal/workspace"
)

// loggedWorkspace is an agent's workspace whose every snapshot is also copied into the log
// folder as snapshots/<label>.<k>/ (agent2.1, agent2.2, ...), named like the answer it was
// taken for, so the dashboard shows and compares each answer's files. The engine snapshots
// once per accepted answer, from the agent's own goroutine.
type loggedWorkspace struct {
	*workspace.Agent
	dir   string // <log dir>/snapshots
	label string // agent<i>
	n     int    // answers so far
}

func (w *loggedWorkspace) Snapshot() error {
	w.n++ // the answer is accepted whether or not its snapshot succeeds: keep the numbers aligned
	if err := w.Agent.Snapshot(); err != nil {
		return err
	}
	return w.Agent.CopyOut(filepath.Join(w.dir, fmt.Sprintf("%s.%d", w.label, w.n)))
}

// NewAttempt moves the copies of a restarted attempt's snapshots into
// <log dir>/attempt_<k>/snapshots/, numbered from 1 again as the attempt's answers are.
func (w *loggedWorkspace) NewAttempt(k int) {
	w.dir, w.n = filepath.Join(filepath.Dir(filepath.Dir(w.dir)), fmt.Sprintf("attempt_%d", k), "snapshots"), 0
}

// logSnapshots makes the agents' workspaces copy their snapshots into logDir, into
// logDir/attempt_1 with orchestration restarts (where the first attempt's log goes).
func logSnapshots(agents []engine.Agent, logDir string, restarts bool) {
	if logDir == "" {
		return
	}
	if restarts {
		logDir = filepath.Join(logDir, "attempt_1")
	}
	for i := range agents {
		if ws, ok := agents[i].Workspace.(*workspace.Agent); ok {
			agents[i].Workspace = &loggedWorkspace{Agent: ws, dir: filepath.Join(logDir, "snapshots"), label: coord.Label(i)}
		}
	}
}
