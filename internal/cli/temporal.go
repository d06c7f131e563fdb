package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

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
	addr, namespace, queue, store string
}

func addTemporalFlags(f *pflag.FlagSet, t *temporalFlags) {
	f.StringVar(&t.addr, "temporal", "", "run the session on Temporal workers (massgen worker) through the server at `HOST:PORT`")
	f.StringVar(&t.namespace, "temporal-namespace", durable.DefaultNamespace, "Temporal `NAMESPACE` of the sessions")
	f.StringVar(&t.queue, "temporal-task-queue", durable.DefaultQueue, "Temporal task `QUEUE` the workers poll")
	f.StringVar(&t.store, "temporal-store", "", "`DIR` the workers and this process share for the workspaces of sessions with tools (default ~/.massgen/temporal_store)")
}

func (t temporalFlags) target() durable.Target {
	return durable.Target{Address: t.addr, Namespace: t.namespace, Queue: t.queue, Store: t.store}
}

// remote connects to Temporal when --temporal is given and returns what app.Options.Remote
// takes (nil without --temporal) and a close function. A server that cannot be reached is a
// usage error (exit 1), found before any session starts.
func (t temporalFlags) remote(ctx context.Context) (func(context.Context, *config.Config, engine.Options) engine.Result, func(), error) {
	if t.addr == "" {
		if t.namespace != durable.DefaultNamespace || t.queue != durable.DefaultQueue || t.store != "" {
			return nil, func() {}, exitf(ExitConfig, "--temporal-namespace, --temporal-task-queue and --temporal-store need --temporal HOST:PORT")
		}
		return nil, func() {}, nil
	}
	c, err := dialTemporal(ctx, t.target())
	if err != nil {
		return nil, func() {}, exitf(ExitConfig, "%v", err)
	}
	return c.Run, c.Close, nil
}

// checkTemporal refuses, before anything runs, a config the workers cannot run.
func checkTemporal(t temporalFlags, cfg *config.Config) error {
	if t.addr == "" {
		return nil
	}
	if err := durable.Supported(cfg); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	if _, err := durable.Encode(cfg); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	return nil
}

func newWorker(stdout, stderr io.Writer) *cobra.Command {
	var t temporalFlags
	var allow []string
	var wo durable.WorkerOptions
	var ver durable.Version
	cmd := &cobra.Command{
		Use:   "worker --temporal HOST:PORT [--temporal-namespace NS] [--temporal-task-queue QUEUE] [--temporal-store DIR] [--workspaces DIR] [--trust-sessions] [--deployment NAME [--build-id ID]] [--allow-base-url URL]...",
		Short: "Run sessions started with --temporal: agent turns and final presentations",
		Long: `worker polls a Temporal task queue and runs the sessions that massgen --temporal,
massgen serve --temporal and massgen eval --temporal start there: the coordination of each
session (a workflow) and its agents' turns and final presentations (activities). Start as many
workers as you like, on as many machines: they share the load, and the turns of a worker that
stops or dies are run again on another one. The session's events, log and final answer go to
the process that started it.

A worker needs no config file: each session brings its team. It reads API keys from its own
environment (and ./.env, ~/.massgen/.env), as a local run does; keys never travel through
Temporal. Ctrl-C stops the worker; its running turns move to another worker.

A session whose agents have tools (a workspace and file tools, commands, MCP servers, custom
tools, media tools, a coding-agent CLI) is held by the worker that takes it first: its
workspaces (under --workspaces) and tool processes live there, and all its turns run there.
When an agent answers, its workspace snapshot goes to the store (--temporal-store, a folder the
workers and the starting process share: the same machine, or a shared mount). If the worker
dies, another one takes the session over within seconds, from the last snapshots; at the end
the winner's workspace reaches the starter's log folder through the store. Give every worker
the same --workspaces path, so that paths in the agents' answers stay valid after a move.

A session that would start programs on this machine (MCP servers, custom tools, shell
commands, coding-agent CLIs), open its folders (context_paths) or send its files to a provider
(upload_files) runs only on a worker started with --trust-sessions: use it when only trusted
callers can start workflows on the task queue.

Anyone who can start workflows on the task queue chooses the team, so a worker reads each
session's config again and checks where its requests would go before any is sent: an agent's
key goes only to the endpoints of the backend types that read that key variable
(OPENAI_API_KEY to https://api.openai.com/v1, GROQ_API_KEY to https://api.groq.com/openai/v1,
...), a local server without a key only to its default address (ollama: localhost:11434), a
coding-agent CLI without base_url to its vendor's own API, and anything else only to base URLs allowed with --allow-base-url (or ` + durable.AllowBaseURLEnv + `,
comma- or space-separated). An allowed URL matches its scheme, host, port and path, and any
path below it. A session that names another endpoint fails, naming the agent and the URL.

The Temporal SDK lives in massgen-temporal, a second binary beside massgen (release folders
ship it; go build -o massgen-temporal ./cmd/massgen-temporal): massgen hands every command
line with --temporal to it.

To upgrade workers without disturbing running sessions, run them as versions of a Worker
Deployment: --deployment NAME (the same for every worker of the task queue, across upgrades)
and --build-id ID (default: massgen's version and a hash of this binary, so one build is one
version). A session stays pinned to the version whose worker started it, since its
coordination must replay on the same code; new sessions go to the deployment's current
version. The first version of a deployment becomes current by itself; a later one when
massgen worker promote says so, and the old version's workers may stop once
massgen worker promote --wait returns. Without --deployment workers are unversioned: any
worker takes any session.

  temporal server start-dev --headless &
  massgen worker --temporal 127.0.0.1:7233 &
  massgen --temporal 127.0.0.1:7233 --config @examples/demo "question"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if t.addr == "" {
				return exitf(ExitConfig, "worker needs --temporal HOST:PORT, the Temporal server to take sessions from")
			}
			v, err := workerVersion(ver)
			if err != nil {
				return err
			}
			if err := app.LoadDotEnv(stderr); err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			list, err := durable.NewAllowlist(append(durable.SplitList(os.Getenv(durable.AllowBaseURLEnv)), allow...))
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			ctx := cmd.Context()
			target := t.target()
			target.Version = v
			c, err := dialTemporal(ctx, target)
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			defer c.Close()
			fmt.Fprintf(stderr, "massgen worker: taking sessions from %s (namespace %s, task queue %s); Ctrl-C stops\n", t.addr, t.namespace, t.queue)
			if !v.IsZero() {
				fmt.Fprintf(stderr, "massgen worker: version %s; its sessions stay on it (massgen worker promote --deployment %s --build-id %s sends new ones to it)\n",
					v, v.Deployment, v.BuildID)
			}
			if urls := list.URLs(); len(urls) > 0 {
				fmt.Fprintf(stderr, "massgen worker: agents may also call %s\n", strings.Join(urls, ", "))
			}
			if wo.TrustSessions {
				fmt.Fprintf(stderr, "massgen worker: sessions may start programs and open folders on this machine (--trust-sessions)\n")
			}
			wo.Allow, wo.Release = list, Version
			if err := c.Work(ctx, wo); err != nil {
				return exitf(ExitExecution, "%v", err)
			}
			return nil
		},
	}
	addTemporalFlags(cmd.Flags(), &t)
	// The worker serves sessions rather than running one there.
	cmd.Flags().Lookup("temporal").Usage = "poll the Temporal server at `HOST:PORT` for sessions to run"
	cmd.Flags().StringArrayVar(&allow, "allow-base-url", nil, "also send agents' requests and keys to base `URL` and below (repeatable)")
	cmd.Flags().BoolVar(&wo.TrustSessions, "trust-sessions", false, "run sessions that start programs (MCP servers, custom tools, commands, coding-agent CLIs), open folders or send files (upload_files) on this machine")
	cmd.Flags().StringVar(&wo.WorkspaceRoot, "workspaces", "", "`DIR` of the workspaces of the sessions this worker holds (default .massgen/workspaces)")
	addVersionFlags(cmd.Flags(), &ver, "run as a version of Worker Deployment `NAME`: sessions stay on the version that started them")
	cmd.AddCommand(newPromote(stdout, stderr))
	return cmd
}
