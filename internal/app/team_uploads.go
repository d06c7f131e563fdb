package app

import (
	"context"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/redact"
)

// upload_files of a team built on a worker (BuildTeam): the session arrives with its local
// files named by absolute path (durable's wire document), and the worker reads them on its
// own machine. It holds such a session only when it trusts its sessions (trust.OnMachine lists
// every local file), so each named file is its own root: the worker sends what the session
// names, wherever it is, but never a file that commonly holds secrets (media.LoadUploads).

// teamUploads are a team's files and vector stores, and how to delete the stores.
type teamUploads struct {
	*sessionUploads
	close func() error
}

// startTeamUploads reads the agents' files, makes the OpenAI agents' vector stores and wraps
// every agent's provider to send its files; close deletes what was made (bounded by
// cleanupWait), its report on bus. On error, what was made is deleted already.
func startTeamUploads(ctx context.Context, cfg *config.Config, agents []engine.Agent, keys, froms []string,
	bus *event.Bus, red *redact.Redactor) (*teamUploads, error) {
	files, err := loadUploads(ctx, cfg, namedUploads)
	if err != nil {
		return nil, err
	}
	up, err := startUploads(ctx, cfg, agents, files, keys, froms, red)
	// The cleanup's context keeps the values of ctx, never its end: the claim that built the
	// team is over long before the session ends.
	t := &teamUploads{sessionUploads: up, close: func() error { up.cleanup(ctx, bus, red); return nil }}
	if err != nil {
		_ = t.close()
		return nil, err
	}
	return t, nil
}

// namedUploads are the local files of b's upload_files, each the one root it may be read from.
func namedUploads(b config.Backend) []string {
	var roots []string
	for _, u := range b.Uploads {
		if !u.IsURL() {
			abs, _ := config.FindUploadFile(u.Path, "")
			roots = append(roots, abs)
		}
	}
	return roots
}

// Reports takes what the team's tools reported while no turn was attached and no turn took:
// after Close, what the deletion of its vector stores said.
func (t *Team) Reports() []event.Payload {
	t.relay.mu.Lock()
	defer t.relay.mu.Unlock()
	out := t.relay.queued
	t.relay.queued = nil
	return out
}
