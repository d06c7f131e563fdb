package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/web"
)

// tokenEnv may hold the serve token, to keep it out of the process list.
const tokenEnv = "MASSGEN_SERVE_TOKEN"

func newServe(stdout, stderr io.Writer) *cobra.Command {
	var configs []string
	var addr, token, logRoot string
	var maxSessions int
	var setupDir string // the only folder the dashboard's setup wizard writes configs to
	var tf temporalFlags
	cmd := &cobra.Command{
		Use:   "serve --config FILE [--config FILE]... [--addr 127.0.0.1:8080] [--token T]",
		Short: "Serve the web dashboard and an OpenAI-compatible API, one model per team",
		Long: `serve runs a web server for the teams given with --config: a dashboard that lists the
sessions in the log directory, starts runs and shows them live or replayed, and an
OpenAI-compatible API (POST /v1/chat/completions, GET /v1/models) whose models are the teams.
A team is named after its file ("examples/demo.yaml" is "demo"), or NAME=FILE names it.

It listens on 127.0.0.1 unless --addr says otherwise; any other address needs --token (or
` + tokenEnv + `), which every request must then send as "Authorization: Bearer <token>" (a
browser opens /?token=<token> once and keeps a cookie). At most --max-sessions sessions run at
once; a request for another is answered 429 with Retry-After. A session that ran and failed
or timed out is answered with x-should-retry: false, so OpenAI clients do not run the team
again. Clients have 30 s to send a request (bodies up to 8 MiB); answers and streams take as
long as their sessions. Ctrl-C interrupts the running sessions, which still write their logs,
and stops.

  massgen serve --config examples/demo.yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if maxSessions < 0 {
				return exitf(ExitConfig, "--max-sessions %d: use a positive number, or 0 for no cap", maxSessions)
			}
			if len(configs) == 0 {
				return exitf(ExitConfig, "serve needs at least one --config FILE: each config is a team, e.g. massgen serve --config examples/demo.yaml")
			}
			if err := app.LoadDotEnv(); err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			if token == "" {
				token = os.Getenv(tokenEnv)
			}
			teams := map[string]*config.Config{}
			for _, c := range configs {
				name, path := "", c
				if n, p, ok := strings.Cut(c, "="); ok && n != "" && !strings.ContainsAny(n, `/\`) {
					name, path = n, p
				}
				cfg, rep := config.Load(path)
				if !rep.OK() {
					fmt.Fprint(stderr, rep.Text())
					return &exitError{code: ExitConfig, err: errors.New("invalid configuration")}
				}
				for _, w := range rep.Warnings {
					fmt.Fprintf(stderr, "warning: %s\n", w.String())
				}
				if name == "" {
					name = web.TeamName(cfg)
				}
				if _, dup := teams[name]; dup {
					return exitf(ExitConfig, "two configs are served as team %q: name them with --config NAME=FILE", name)
				}
				if err := checkTemporal(tf, cfg); err != nil {
					return err
				}
				teams[name] = cfg
			}
			remote, closeRemote, err := tf.remote(cmd.Context())
			if err != nil {
				return err
			}
			defer closeRemote()
			var run web.RunFunc
			if remote != nil {
				run = func(ctx context.Context, cfg *config.Config, o app.Options) (app.Result, error) {
					o.Remote = remote
					return app.Run(ctx, cfg, o)
				}
			}
			srv, err := web.NewServer(web.Options{Teams: teams, LogRoot: logRoot, Token: token, Version: Version, MaxSessions: maxSessions,
				SetupDir: setupDir, Run: run})
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			ln, err := srv.Listen(addr)
			if errors.Is(err, web.ErrTokenRequired) {
				return exitf(ExitConfig, "%v", err)
			}
			if err != nil {
				return exitf(ExitExecution, "cannot listen on %s: %v (is another server on that port? pick another address with --addr)", addr, listenReason(err))
			}
			names := make([]string, 0, len(teams))
			for n := range teams {
				names = append(names, n)
			}
			slices.Sort(names)
			url := "http://" + ln.Addr().String() + "/"
			fmt.Fprintf(stdout, "massgen serve: dashboard at %s\n", url)
			fmt.Fprintf(stdout, "  OpenAI-compatible API at %sv1, models: %s\n", url, strings.Join(names, ", "))
			if token != "" {
				fmt.Fprintf(stdout, "  a token is required: open %s?token=<token> once, or send Authorization: Bearer <token>\n", url)
			}
			if err := srv.ServeListener(cmd.Context(), ln); err != nil {
				return exitf(ExitExecution, "%v", err)
			}
			fmt.Fprintln(stdout, "massgen serve: stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&configs, "config", nil, "a team's config file, or NAME=FILE; repeat for more teams")
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on; other than loopback needs --token")
	f.StringVar(&token, "token", "", "require this bearer token on every request (default $"+tokenEnv+")")
	f.IntVar(&maxSessions, "max-sessions", 8, "most sessions running at once, each spending tokens; 0 for no cap")
	f.StringVar(&logRoot, "log-root", "", "log directory the sessions are written to and listed from (default .massgen/massgen_logs)")
	f.StringVar(&setupDir, "setup-dir", "", "`DIR` the dashboard's setup wizard saves configs to (as NAME.yaml, served at once as team NAME); without it the wizard only validates")
	addTemporalFlags(f, &tf)
	return cmd
}

// listenReason is why listening failed, without Go's operation text ("address already in
// use", not "web: listen tcp 127.0.0.1:8080: bind: address already in use").
func listenReason(err error) error {
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}
