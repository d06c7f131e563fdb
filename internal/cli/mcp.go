package cli

import (
	"massgen/internal/httpserve"

	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/mcpserve"
	"massgen/internal/web"
)

const mcpLong = `mcp serves massgen as an MCP server, so that a coding agent (Claude Code, Codex, Cursor, ...)
can ask a whole team instead of one model. Its tools:

  ask_team {question, team?, files?, context_paths?, cwd_context?: ro|rw}
      runs one session and returns the final answer, with the winner, the votes, tokens,
      cost and log folder as structured content. Progress notifications report each answer
      and vote; cancelling the call interrupts the session (its log keeps what it produced).
      files and context_paths are shared read-only with the agents (relative paths are taken
      from this folder; each must exist and lie, links resolved, in a folder named with
      --allow-path, default this folder), cwd_context shares this folder.
  list_teams      the teams, with their agents' backends and models
  read_session {log_dir | session_id}
      the summary of a past session; with neither, the newest

Each --config is a team, named after its file ("examples/demo.yaml" is "demo") or NAME=FILE;
the first is ask_team's default. Without --config it serves the team massgen would run, as
"default": .massgen/config.yaml, ~/.config/massgen/config.yaml, or one built from the keys set.
Sessions are written to the log root as command-line runs are (massgen logs, replay and serve
show them). At most --max-sessions run at once; a call for another is refused as busy.
Questions are taken as written (no @path parsing) and capped at 256 KiB.

It speaks stdio (the default: the client starts massgen mcp itself) or, with --http ADDR,
streamable HTTP at http://ADDR/mcp, where every request, loopback included, must send
"Authorization: Bearer <token>". The token is $` + tokenEnv + `, else the first line of
--token-file FILE, else a fresh random one; it is written, with the URL, to
~/.massgen/servers/mcp-PORT.json (readable by you alone, removed at exit). --no-token serves
without one, on loopback only: any local process may then ask the teams.

  claude mcp add massgen -- massgen mcp --config @examples/demo
  massgen mcp --config @examples/demo --http 127.0.0.1:8765`

func newMCP(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var configs, allow []string
	var addr, logRoot string
	var maxSessions int
	var tok tokenFlags
	cmd := &cobra.Command{
		Use:   "mcp [--config FILE]... [--http 127.0.0.1:PORT [--token-file FILE | --no-token]]",
		Short: "Serve the teams as MCP tools (ask_team, list_teams, read_session) for coding agents",
		Long:  mcpLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxSessions < 0 {
				return exitf(ExitConfig, "--max-sessions %d: use a positive number, or 0 for no cap", maxSessions)
			}
			if f := cmd.Flags(); addr == "" && (f.Changed("token-file") || f.Changed("no-token")) {
				return exitf(ExitConfig, "--token-file and --no-token go with --http ADDR: over stdio only the client that started massgen mcp can talk to it")
			}
			if err := app.LoadDotEnv(stderr); err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			token := ""
			if addr != "" || cmd.Flags().Changed("token") {
				var err error
				if token, err = tok.resolve(addr, stderr); err != nil {
					return err
				}
			}
			teams, err := loadTeams(configs, stderr)
			if err != nil {
				return err
			}
			for _, t := range teams {
				warnMissingKeys(t.Name, t.Config, stderr)
			}
			srv, err := mcpserve.New(mcpserve.Options{Teams: teams, LogRoot: logRoot, Version: Version, MaxSessions: maxSessions, Token: token, AllowPaths: allow})
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			names := make([]string, len(teams))
			for i, t := range teams {
				names[i] = t.Name
			}
			if addr == "" {
				// stdout carries the protocol: nothing else may be written to it.
				fmt.Fprintf(stderr, "massgen mcp: serving %s over stdio (tools ask_team, list_teams, read_session)\n", strings.Join(names, ", "))
				if err := srv.ServeStdio(cmd.Context(), stdin, stdout); err != nil {
					return exitf(ExitExecution, "mcp: %v", err)
				}
				return nil
			}
			ln, err := srv.Listen(addr)
			if errors.Is(err, httpserve.ErrTokenRequired) {
				return exitf(ExitConfig, "%v", err)
			}
			if err != nil {
				return exitf(ExitExecution, "cannot listen on %s: %v (is another server on that port? pick another address with --http)", addr, listenReason(err))
			}
			url := listenURL(ln.Addr(), mcpserve.Path)
			file, unpublish := publishServer("mcp", ln.Addr(), url, token, stderr)
			defer unpublish()
			fmt.Fprintf(stdout, "massgen mcp: streamable HTTP at %s, teams: %s\n", url, strings.Join(names, ", "))
			printTokenHint(stdout, token, file)
			if err := srv.ServeListener(cmd.Context(), ln); err != nil {
				return exitf(ExitExecution, "%v", err)
			}
			fmt.Fprintln(stdout, "massgen mcp: stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&configs, "config", nil, "a team's config `FILE`, NAME=FILE or @examples/NAME; repeat for more teams (the first is the default)")
	f.StringVar(&addr, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8765) instead of stdio")
	tok.add(f, "with --http: ", true)
	f.IntVar(&maxSessions, "max-sessions", 2, "most sessions running at once, each spending tokens; 0 for no cap")
	f.StringArrayVar(&allow, "allow-path", nil, "a `DIR` whose contents clients may share with ask_team (files, context_paths, cwd_context); repeat for more (default the current folder)")
	f.StringVar(&logRoot, "log-root", "", "`DIR` the sessions are written to and read_session reads (default .massgen/massgen_logs)")
	return cmd
}

// loadTeams loads each --config as a team, or the default team massgen would run without one.
// Warnings and errors go to stderr, as for a run.
func loadTeams(configs []string, stderr io.Writer) ([]mcpserve.Team, error) {
	if len(configs) == 0 {
		cfg, _, err := loadConfig(runOptions{}, stderr)
		if err != nil {
			return nil, err
		}
		return []mcpserve.Team{{Name: "default", Config: cfg}}, nil
	}
	var teams []mcpserve.Team
	seen := map[string]bool{}
	for _, c := range configs {
		name, path := "", c
		if n, p, ok := strings.Cut(c, "="); ok && n != "" && !strings.ContainsAny(n, `/\@`) {
			name, path = n, p
		}
		cfg, _, err := loadConfig(runOptions{configPath: path}, stderr)
		if err != nil {
			return nil, err
		}
		if name == "" {
			name = web.TeamName(cfg)
		}
		if seen[name] {
			return nil, exitf(ExitConfig, "two configs are served as team %q: name them with --config NAME=FILE", name)
		}
		seen[name] = true
		teams = append(teams, mcpserve.Team{Name: name, Config: cfg})
	}
	return teams, nil
}

// warnMissingKeys says, as a server starts, which teams' agents have no API key: their
// sessions would fail at once, one client request at a time.
func warnMissingKeys(name string, cfg *config.Config, stderr io.Writer) {
	for _, a := range cfg.Agents {
		if _, _, err := app.APIKey(a.Backend, os.Getenv); err != nil {
			fmt.Fprintf(stderr, "warning: team %s, agent %s: %v; its sessions fail until it is set (restart to read it)\n", name, a.ID, err)
		}
	}
}
