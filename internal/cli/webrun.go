package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/web"
)

// webOptions are --web and its flags. MassGen's defaults: 127.0.0.1:8000.
type webOptions struct {
	on        bool
	host      string
	port      int
	noBrowser bool
	token     tokenFlags
}

func (w webOptions) strayFlags(f *pflag.FlagSet) error {
	if w.on {
		return nil
	}
	for _, n := range []string{"web-host", "web-port", "no-browser", "token-file", "no-token"} {
		if f.Changed(n) {
			return exitf(ExitConfig, "--%s goes with --web", n)
		}
	}
	return nil
}

// ownRun watches the run --web starts for the question of the command line.
type ownRun struct {
	question string
	mu       sync.Mutex
	claimed  bool
	done     chan struct{}
	res      app.Result
	err      error
}

// claim reports whether a run asking q is the command line's own: the first such run.
func (r *ownRun) claim(q string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimed || r.question == "" || q != r.question {
		return false
	}
	r.claimed = true
	return true
}

func (r *ownRun) finish(res app.Result, err error) {
	r.res, r.err = res, err
	close(r.done)
}

// runWeb is --web: the dashboard of `massgen serve` for this one team, on --web-host and
// --web-port, with the question (if any) started in it and the browser opened on it. In
// automation mode it stops once that run has ended, with its exit code; otherwise it serves
// until Ctrl-C.
func runWeb(ctx context.Context, o runOptions, prep turnPrep, question string, stdout, stderr io.Writer) error {
	if o.web.port < 0 || o.web.port > 65535 {
		return exitf(ExitConfig, "--web-port %d: use a port from 1 to 65535 (0 picks a free one)", o.web.port)
	}
	// The question's run writes its lines from the server's goroutine while this one prints
	// the dashboard's address: one lock keeps both whole.
	var mu sync.Mutex
	stdout, stderr = lockedWriter{&mu, stdout}, lockedWriter{&mu, stderr}
	prep.stderr, prep.lines = lockedWriter{&mu, prep.stderr}, lockedWriter{&mu, prep.lines}
	automation := prep.display == "silent"
	info := stdout
	if automation {
		info = stderr // stdout carries the automation lines (or the events)
	}
	name := web.TeamName(prep.cfg)
	if !validTeamName(name) {
		name = "default"
	}
	own := &ownRun{question: question, done: make(chan struct{})}
	runOne := func(ctx context.Context, _ *config.Config, opts app.Options) (app.Result, error) {
		mine := own.claim(opts.Question)
		res, err := runDashboardTurn(ctx, o, prep, mine, opts, stdout)
		if mine {
			if err == nil {
				err = prep.finish(res, info)
			}
			own.finish(res, err)
		}
		return res, err
	}
	addr := net.JoinHostPort(o.web.host, strconv.Itoa(o.web.port))
	token, err := o.web.token.resolve(addr, stderr)
	if err != nil {
		return err
	}
	srv, err := web.NewServer(web.Options{Teams: map[string]*config.Config{name: prep.cfg}, LogRoot: o.logRoot, Token: token, NoToken: o.web.token.none,
		Version: Version, MaxSessions: 8, Run: runOne})
	if err != nil {
		return exitf(ExitConfig, "--web: %v", err)
	}
	ln, err := srv.Listen(addr)
	if err != nil {
		return exitf(ExitExecution, "--web: cannot listen on %s: %v (is another server on that port? pick another with --web-port)", addr, listenReason(err))
	}
	url := listenURL(ln.Addr(), "/") // 0.0.0.0 is announced as 127.0.0.1: a browser cannot open [::]
	file, unpublish := publishServer("web", ln.Addr(), url, token, info)
	defer unpublish()
	serveCtx, stop := context.WithCancel(ctx)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.ServeListener(serveCtx, ln) }()
	fmt.Fprintf(info, "massgen --web: dashboard at %s (Ctrl-C stops it)\n", withToken(url, token, ""))
	printTokenHint(info, token, file)
	page := withToken(url, token, "")
	if question != "" {
		id, err := startDashboardRun(ctx, url, token, name, question)
		if err != nil {
			stop()
			<-served
			select {
			case <-own.done: // the run could not start: its own error says why
				return exitErr(own.err)
			default:
			}
			return err
		}
		page = withToken(url, token, "#/session/"+id)
		fmt.Fprintf(info, "  the question runs at %s\n", page)
	}
	// MassGen opens no browser in automation mode either: nobody is there to look.
	if !o.web.noBrowser && !automation {
		if err := openBrowser(page); err != nil {
			fmt.Fprintf(info, "  could not open a browser (%v): open %s yourself\n", err, page)
		}
	}
	if question != "" && automation {
		select {
		case <-own.done:
		case <-ctx.Done():
		}
		stop()
		serveErr := <-served // the server's shutdown waits for its sessions, ours included
		<-own.done
		if own.err != nil {
			return exitErr(own.err)
		}
		if err := resultErr(own.res); err != nil {
			return err
		}
		if serveErr != nil {
			return exitf(ExitExecution, "--web: %v", serveErr)
		}
		return nil
	}
	if err := <-served; err != nil {
		return exitf(ExitExecution, "--web: %v", err)
	}
	fmt.Fprintln(info, "massgen --web: stopped")
	return nil
}

// runDashboardTurn runs one session of the --web server: with the files its question refers
// to, and, for the command line's own question, with its automation views.
func runDashboardTurn(ctx context.Context, o runOptions, prep turnPrep, mine bool, opts app.Options, stdout io.Writer) (app.Result, error) {
	cfg, err := prep.config(opts.Question)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return app.Result{}, &app.Error{Code: ee.code, Err: ee.err}
		}
		return app.Result{}, err
	}
	opts.Question = prep.question(opts.Question)
	opts.Debug = o.debug
	if mine {
		opts.Args = o.args
		if prep.display == "silent" {
			opts.Sinks = append(opts.Sinks, prep.sinks(stdout)...)
			opts.Approvals = nil // --automation: asks follow automation_default at once
		}
	}
	return app.Run(ctx, cfg, opts)
}

func validTeamName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || (i > 0 && strings.ContainsRune("._-", c))
		if !ok {
			return false
		}
	}
	return true
}

// startDashboardRun starts question on team through the dashboard's own API, as the page's
// run form does, and returns the session id.
func startDashboardRun(ctx context.Context, base, token, team, question string) (string, error) {
	body, _ := json.Marshal(map[string]string{"team": team, "question": question})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"api/runs", bytes.NewReader(body))
	if err != nil {
		return "", exitf(ExitExecution, "--web: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", exitf(ExitExecution, "--web: cannot start the run on the dashboard: %v", err)
	}
	defer resp.Body.Close()
	var answer struct {
		ID    string `json:"id"`
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&answer)
	if resp.StatusCode != http.StatusAccepted || answer.ID == "" {
		return "", exitf(ExitExecution, "--web: the dashboard did not start the run (%s): %s", resp.Status, answer.Error.Message)
	}
	return answer.ID, nil
}

// browserEnv are the variables a browser needs; API keys and the rest of massgen's
// environment stay out of it.
var browserEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TMPDIR", "DISPLAY", "WAYLAND_DISPLAY",
	"XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "BROWSER"}

// openBrowser opens url as Python's webbrowser does: $BROWSER when set (the first of its
// colon-separated commands, %s standing for the URL), else the desktop's opener. It does not
// wait for the browser.
func openBrowser(url string) error {
	var argv []string
	if b := os.Getenv("BROWSER"); b != "" {
		argv = strings.Fields(strings.Split(b, string(os.PathListSeparator))[0])
		substituted := false
		for i, a := range argv {
			if strings.Contains(a, "%s") {
				argv[i], substituted = strings.ReplaceAll(a, "%s", url), true
			}
		}
		if !substituted {
			argv = append(argv, url)
		}
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", url}
		case "windows":
			argv = []string{"rundll32", "url.dll,FileProtocolHandler", url}
		default:
			argv = []string{"xdg-open", url}
		}
	}
	if len(argv) == 0 {
		return errors.New("$BROWSER is empty")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		if slices.Contains(browserEnv, name) || strings.HasPrefix(name, "XDG_") || strings.HasPrefix(name, "LC_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	// The opener may live as long as the browser; the system reaps it once massgen exits.
	return cmd.Process.Release()
}

// lockedWriter serialises writes to w with mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
