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

// logSnapshots makes the agents' workspaces copy their snapshots into logDir.
func logSnapshots(agents []engine.Agent, logDir string) {
	if logDir == "" {
		return
	}
	for i := range agents {
		if ws, ok := agents[i].Workspace.(*workspace.Agent); ok {
			agents[i].Workspace = &loggedWorkspace{Agent: ws, dir: filepath.Join(logDir, "snapshots"), label: coord.Label(i)}
		}
	}
}
