package temporalrun

import (
	"context"
	"time"

	"go.temporal.io/sdk/client"

	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
)

// Conn is a connection to a Temporal server and the target it was made for: what the command
// line of massgen-temporal runs sessions and workers through.
type Conn struct {
	c      client.Client
	target durable.Target
}

// Connect dials t (see Dial).
func Connect(ctx context.Context, t durable.Target) (*Conn, error) {
	c, err := Dial(ctx, t)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c, target: t}, nil
}

// Run runs one session on the workers of the connection's task queue.
func (k *Conn) Run(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
	return Run(ctx, k.c, k.target, cfg, o)
}

// Work takes sessions from the connection's task queue until ctx is done, as w says.
func (k *Conn) Work(ctx context.Context, w durable.WorkerOptions) error {
	return Worker(ctx, k.c, k.target, &Activities{Allow: w.Allow, TrustSessions: w.TrustSessions, WorkspaceRoot: w.WorkspaceRoot, Version: w.Release})
}

// Promote makes v the current version of its deployment and returns the one that was (see
// Promote).
func (k *Conn) Promote(ctx context.Context, v durable.Version) (durable.Version, error) {
	return Promote(ctx, k.c, v)
}

// Drain waits until no session runs on v, promoted away from at promoted (see Drain).
func (k *Conn) Drain(ctx context.Context, v durable.Version, promoted time.Time, report func(running int)) error {
	return Drain(ctx, k.c, v, promoted, report)
}

// Close closes the connection.
func (k *Conn) Close() { k.c.Close() }
