package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
)

// temporalFlags are --temporal and its namespace and task queue, on every command that runs
// sessions and on the worker.
type temporalFlags struct {
	addr, namespace, queue string
}

func addTemporalFlags(f *pflag.FlagSet, t *temporalFlags) {
	f.StringVar(&t.addr, "temporal", "", "run the session on Temporal workers (massgen worker) through the server at `HOST:PORT`")
	f.StringVar(&t.namespace, "temporal-namespace", durable.DefaultNamespace, "Temporal `NAMESPACE` of the sessions")
	f.StringVar(&t.queue, "temporal-task-queue", durable.DefaultQueue, "Temporal task `QUEUE` the workers poll")
}

func (t temporalFlags) target() durable.Target {
	return durable.Target{Address: t.addr, Namespace: t.namespace, Queue: t.queue}
}

// remote connects to Temporal when --temporal is given and returns what app.Options.Remote
// takes (nil without --temporal) and a close function. A server that cannot be reached is a
// usage error (exit 1), found before any session starts.
func (t temporalFlags) remote(ctx context.Context) (func(context.Context, *config.Config, engine.Options) engine.Result, func(), error) {
	if t.addr == "" {
		if t.namespace != durable.DefaultNamespace || t.queue != durable.DefaultQueue {
			return nil, func() {}, exitf(ExitConfig, "--temporal-namespace and --temporal-task-queue need --temporal HOST:PORT")
		}
		return nil, func() {}, nil
	}
	c, err := durable.Dial(ctx, t.target())
	if err != nil {
		return nil, func() {}, exitf(ExitConfig, "%v", err)
	}
	target := t.target()
	return func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
		return durable.Run(ctx, c, target, cfg, o)
	}, c.Close, nil
}

// checkTemporal refuses, before anything runs, a config the workers cannot run.
func checkTemporal(t temporalFlags, cfg *config.Config) error {
	if t.addr == "" {
		return nil
	}
	if err := durable.Supported(cfg); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	if _, err := durable.ForWorkers(cfg); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	return nil
}

func newWorker(stdout, stderr io.Writer) *cobra.Command {
	var t temporalFlags
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT [--temporal-namespace NS] [--temporal-task-queue QUEUE]",
		Short: "Run sessions started with --temporal: agent turns and final presentations",
		Long: `worker polls a Temporal task queue and runs the sessions that massgen --temporal,
massgen serve --temporal and massgen eval --temporal start there: the coordination of each
session (a workflow) and its agents' turns and final presentations (activities). Start as many
workers as you like, on as many machines: they share the load, and the turns of a worker that
stops or dies are run again on another one. The session's events, log and final answer go to
the process that started it.

A worker needs no config file: each session brings its team. It reads API keys from its own
environment (and ./.env, ~/.massgen/.env), as a local run does; keys never travel through
Temporal. Agents on Temporal have no tools that touch a machine (cwd, context_paths, commands,
MCP servers, custom tools, media tools) and are no coding-agent CLIs: sessions that need them
run locally. Ctrl-C stops the worker;
its running turns move to another worker.

  temporal server start-dev --headless &
  massgen worker --temporal 127.0.0.1:7233 &
  massgen --temporal 127.0.0.1:7233 --config examples/demo.yaml "question"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if t.addr == "" {
				return exitf(ExitConfig, "worker needs --temporal HOST:PORT, the Temporal server to take sessions from")
			}
			if err := app.LoadDotEnv(stderr); err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			ctx := cmd.Context()
			c, err := durable.Dial(ctx, t.target())
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			defer c.Close()
			fmt.Fprintf(stderr, "massgen worker: taking sessions from %s (namespace %s, task queue %s); Ctrl-C stops\n", t.addr, t.namespace, t.queue)
			if err := durable.Worker(ctx, c, t.target(), &durable.Activities{}); err != nil {
				return exitf(ExitExecution, "%v", err)
			}
			return nil
		},
	}
	addTemporalFlags(cmd.Flags(), &t)
	return cmd
}
