package cli

import (
	"massgen/internal/httpserve"

	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/web"
)

func newServe(stdout, stderr io.Writer) *cobra.Command {
	var configs []string
	var addr, host, logRoot string
	var port int
	var maxSessions int
	var setupDir string // the only folder the dashboard's setup wizard writes configs to
	var tf temporalFlags
	var tok tokenFlags
	cmd := &cobra.Command{
		Use:   "serve [--config FILE]... [--setup-dir DIR] [--addr 127.0.0.1:8080 | --host H --port P] [--token-file FILE | --no-token]",
		Short: "Serve the web dashboard and an OpenAI-compatible API, one model per team",
		Long: `serve runs a web server for the teams given with --config: a dashboard that lists the
sessions in the log directory, starts runs and shows them live or replayed, and an
OpenAI-compatible API (POST /v1/chat/completions, GET /v1/models) whose models are the teams.
A team is named after its file ("examples/demo.yaml" is "demo"), or NAME=FILE names it;
@examples/NAME serves a built-in example. The configs saved in --setup-dir (by the setup
wizard, as NAME.yaml) are served too. Without --config it serves the team massgen would run,
as "default" (.massgen/config.yaml, ~/.config/massgen/config.yaml, or one built from the keys
set); with --setup-dir and no such team it starts with the saved ones, or none, and the
wizard builds the first.

It listens on 127.0.0.1:8080 unless --addr HOST:PORT (or MassGen's --host and --port) says
otherwise. MassGen listens on every interface by default; massgen does not, since whoever
reaches the port can run sessions on your API keys and reach the agents' tools: give --host
0.0.0.0 to serve the network. Every request, loopback included, must prove it knows the
server's token: the API sends "Authorization: Bearer <token>", a browser opens the printed
URL (/?token=<token>) once and keeps a cookie. The token is
$` + tokenEnv + `, else the first line of --token-file FILE, else a fresh random one;
it is written, with the URL, to ~/.massgen/servers/serve-PORT.json (readable by you alone,
removed at exit) for your own tools. --no-token serves without one, on loopback only: any
local process may then start runs. The old --token T is refused: command lines are public.

At most --max-sessions sessions run at once; a request for another is answered 429 with
Retry-After. A session that ran and failed or timed out is answered with x-should-retry:
false, so OpenAI clients do not run the team again. Clients have 30 s to send a request (bodies up to 8 MiB); answers and streams take as
long as their sessions. Ctrl-C interrupts the running sessions, which still write their logs,
and stops.

  massgen serve --config @examples/demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := refuseUnbuilt(cmd.Flags()); err != nil {
				return err
			}
			if maxSessions < 0 {
				return exitf(ExitConfig, "--max-sessions %d: use a positive number, or 0 for no cap", maxSessions)
			}
			var err error
			if addr, err = serveAddr(cmd.Flags(), addr, host, port); err != nil {
				return err
			}
			if err := app.LoadDotEnv(stderr); err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			token, err := tok.resolve(addr, stderr)
			if err != nil {
				return err
			}
			teams, err := serveTeams(configs, setupDir, stderr)
			if err != nil {
				return err
			}
			for _, name := range slices.Sorted(maps.Keys(teams)) {
				cfg := teams[name]
				if err := checkTemporal(tf, cfg); err != nil {
					return err
				}
				if remote := tf.addr != ""; !remote { // workers read their own keys
					warnMissingKeys(name, cfg, stderr)
				}
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
			srv, err := web.NewServer(web.Options{Teams: teams, LogRoot: logRoot, Token: token, NoToken: tok.none, Version: Version, MaxSessions: maxSessions,
				SetupDir: setupDir, Run: run, Log: stdout})
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			ln, err := srv.Listen(addr)
			if errors.Is(err, httpserve.ErrTokenRequired) {
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
			url := listenURL(ln.Addr(), "/")
			file, unpublish := publishServer("serve", ln.Addr(), url, token, stderr)
			defer unpublish()
			fmt.Fprintf(stdout, "massgen serve: dashboard at %s\n", withToken(url, token, ""))
			models := strings.Join(names, ", ")
			if len(names) == 0 {
				models = "none yet (build a team at " + withToken(url, token, "#/setup") + ")"
			}
			fmt.Fprintf(stdout, "  OpenAI-compatible API at %sv1, models: %s\n", url, models)
			printTokenHint(stdout, token, file)
			if err := srv.ServeListener(cmd.Context(), ln); err != nil {
				return exitf(ExitExecution, "%v", err)
			}
			fmt.Fprintln(stdout, "massgen serve: stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&configs, "config", nil, "a team's config `FILE`, NAME=FILE or @examples/NAME; repeat for more teams")
	f.StringVar(&addr, "addr", "127.0.0.1:8080", "the `HOST:PORT` to listen on")
	f.StringVar(&host, "host", "127.0.0.1", "`HOST` to listen on (MassGen's flag; --addr HOST:PORT says both); 0.0.0.0 serves the network")
	f.IntVar(&port, "port", 8080, "`PORT` to listen on (MassGen's flag, whose default is 4000; 0 picks a free one)")
	tok.add(f, "", true)
	addUnbuilt(f, serveUnbuiltFlags)
	f.IntVar(&maxSessions, "max-sessions", 8, "most sessions running at once, each spending tokens; 0 for no cap")
	f.StringVar(&logRoot, "log-root", "", "log directory the sessions are written to and listed from (default .massgen/massgen_logs)")
	f.StringVar(&setupDir, "setup-dir", "", "`DIR` the dashboard's setup wizard saves configs to (as NAME.yaml, served at once as team NAME); without it the wizard only validates")
	addTemporalFlags(f, &tf)
	return cmd
}

// serveAddr is the address serve listens on: --addr, or MassGen's --host and --port, each
// defaulting to its part of --addr's default. Both ways at once would leave one of them unsaid.
func serveAddr(f *pflag.FlagSet, addr, host string, port int) (string, error) {
	split := f.Changed("host") || f.Changed("port")
	if !split {
		return addr, nil
	}
	if f.Changed("addr") {
		return "", exitf(ExitConfig, "--addr %s and --host/--port both say where to listen: give --addr HOST:PORT, or --host and --port", addr)
	}
	if port < 0 || port > 65535 {
		return "", exitf(ExitConfig, "--port %d: use a port from 1 to 65535 (0 picks a free one)", port)
	}
	if host == "" || strings.ContainsAny(host, "/ ") {
		return "", exitf(ExitConfig, "--host %q: give a host name or IP address, such as 127.0.0.1 or 0.0.0.0", host)
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port)), nil
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

// serveTeams are the teams serve serves: each --config (or the default team), and the configs
// saved in setupDir. With setupDir, having no default team is no error: the wizard makes one.
func serveTeams(configs []string, setupDir string, stderr io.Writer) (map[string]*config.Config, error) {
	teams := map[string]*config.Config{}
	list, err := loadTeams(configs, stderr)
	switch {
	case err == nil:
		for _, t := range list {
			teams[t.Name] = t.Config
		}
	case len(configs) == 0 && setupDir != "":
		fmt.Fprintf(stderr, "massgen serve: no default team (%v); serving the teams saved in %s\n", err, setupDir)
	case len(configs) == 0:
		return nil, exitf(ExitConfig, "%v\n(or pass --setup-dir DIR to build a team in the dashboard's setup wizard)", err)
	default:
		return nil, err
	}
	if setupDir == "" {
		return teams, nil
	}
	saved, err := filepath.Glob(filepath.Join(setupDir, "*.yaml"))
	if err != nil {
		return nil, exitf(ExitConfig, "--setup-dir %s: %v", setupDir, err)
	}
	for _, path := range saved {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		if _, taken := teams[name]; taken {
			continue // a --config of that name wins
		}
		cfg, _, err := loadConfig(runOptions{configPath: path}, stderr)
		if err != nil {
			return nil, err
		}
		teams[name] = cfg
	}
	return teams, nil
}
