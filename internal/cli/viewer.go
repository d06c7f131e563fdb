package cli

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"massgen/internal/config"
	"massgen/internal/runlog"
	"massgen/internal/termtext"
	"massgen/internal/web"
)

// pickLimit is how many sessions --pick offers.
const pickLimit = 20

// viewerFlags are massgen viewer's flags.
type viewerFlags struct {
	turn, attempt, port int
	speed               float64
	pick, web           bool
	noBrowser, portSet  bool
	root, configPath    string
}

// newViewer is MassGen's session viewer mapped onto what this build has: massgen replay
// --live in the terminal, and with --web the replay page of the dashboard.
func newViewer(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var vf viewerFlags
	cmd := &cobra.Command{
		Use:   "viewer [LOGDIR]",
		Short: "Watch a past session again: the live view in the terminal, or in the browser with --web",
		Long: `viewer plays a logged session again, read-only, from its events.jsonl: through the live
terminal view at its recorded pace (massgen replay --live), or with --web on the replay page of
the web dashboard (massgen serve). LOGDIR is a session folder, one of its turn_<n> folders or
a session id; the default is the newest session, and --pick chooses one from a list.

Without a terminal the session is printed as text, as massgen replay does.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			vf.portSet = cmd.Flags().Changed("port")
			return vf.run(cmd.Context(), args, stdin, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.IntVar(&vf.turn, "turn", 0, "play turn `N` only (default: every turn; with --web the last)")
	f.IntVar(&vf.attempt, "attempt", 0, "attempt `N` of the turn (MassGen's attempt folders): this build writes one per turn, so only 1")
	f.Float64Var(&vf.speed, "replay-speed", 1, "pace relative to the recording (4: four times faster; 0: as fast as possible)")
	f.BoolVar(&vf.pick, "pick", false, "choose the session (and turn) from a list of the newest")
	f.BoolVar(&vf.web, "web", false, "serve the web dashboard on 127.0.0.1 and open the session's replay page")
	f.IntVar(&vf.port, "port", 8000, "with --web: `PORT` to listen on (0 picks a free one)")
	f.BoolVar(&vf.noBrowser, "no-browser", false, "with --web: print the URL instead of opening a browser")
	f.StringVar(&vf.configPath, "config", "", "with --web: the team the dashboard serves (default: the one the session ran with)")
	f.StringVar(&vf.root, "log-root", "", "`DIR` holding the log folders (default .massgen/massgen_logs)")
	return cmd
}

func (vf *viewerFlags) run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	switch {
	case vf.speed < 0:
		return exitf(ExitConfig, "--replay-speed %g: use 0 (as fast as possible) or more", vf.speed)
	case vf.attempt > 1 || vf.attempt < 0:
		return exitf(ExitConfig, "--attempt %d: this build writes one attempt per turn (MassGen's attempt_<n> folders are restarts, which massgen runs inside the turn): leave --attempt out or use 1", vf.attempt)
	case vf.turn < 0:
		return exitf(ExitConfig, "--turn %d: turns count from 1", vf.turn)
	case vf.port < 0 || vf.port > 65535:
		return exitf(ExitConfig, "--port %d: use a port from 1 to 65535 (0 picks a free one)", vf.port)
	case !vf.web && (vf.configPath != "" || vf.noBrowser || vf.portSet):
		return exitf(ExitConfig, "--config, --port and --no-browser go with --web: add --web to watch in the browser")
	case vf.pick && len(args) > 0:
		return exitf(ExitConfig, "--pick chooses the session: give it or LOGDIR, not both")
	}
	root := cmp.Or(vf.root, filepath.Join(".massgen", "massgen_logs"))
	var dir string
	var err error
	if vf.pick {
		dir, err = vf.pickSession(stdin, stdout, root)
	} else {
		arg := ""
		if len(args) == 1 {
			arg = args[0]
		}
		dir, err = logTarget(root, arg, time.Now())
	}
	if err != nil {
		return err
	}
	turns, err := runlog.FindTurns(dir)
	if err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	if vf.turn > 0 {
		if turns, err = pickTurn(turns, vf.turn); err != nil {
			return err
		}
	}
	if vf.web {
		return vf.serve(ctx, turns[len(turns)-1], stdout, stderr)
	}
	// massgen replay does the playing; viewer only chooses what and how.
	target := dir
	if len(turns) == 1 {
		target = turns[0]
	}
	replayArgs := []string{target}
	if isTerminal(stdout, stdin) {
		replayArgs = append(replayArgs, "--live", "--speed", strconv.FormatFloat(vf.speed, 'g', -1, 64))
	} else {
		fmt.Fprintln(stderr, "massgen viewer: no terminal to play the session on, so it is printed as text (massgen replay)")
	}
	replay := newReplay(stdin, stdout)
	replay.SetArgs(replayArgs)
	replay.SetOut(stdout)
	replay.SetErr(stderr)
	replay.SilenceErrors, replay.SilenceUsage = true, true
	_, err = replay.ExecuteContextC(ctx)
	return err
}

// pickTurn keeps turn n of turns.
func pickTurn(turns []string, n int) ([]string, error) {
	want := "turn_" + strconv.Itoa(n)
	var have []string
	for _, t := range turns {
		if filepath.Base(t) == want {
			return []string{t}, nil
		}
		have = append(have, strings.TrimPrefix(filepath.Base(t), "turn_"))
	}
	return nil, exitf(ExitConfig, "--turn %d: the session has turns %s", n, strings.Join(have, ", "))
}

// pickSession lists the newest sessions and reads the choice, then the turn when there are
// several and --turn chose none.
func (vf *viewerFlags) pickSession(stdin io.Reader, stdout io.Writer, root string) (string, error) {
	rows, _, err := sessionRows(root, pickLimit, func(runlog.Session) bool { return true }, time.Now())
	if err != nil {
		return "", err
	}
	if len(rows) == 0 {
		return "", noSessions(root)
	}
	tw := termtext.NewWriter(stdout)
	for i, r := range rows {
		fmt.Fprintf(tw, "%3d  %s  %s  %-9s  %s  %s\n", i+1, r.ID, when(r.Start), plural(r.Turns, "turn"), r.Status, oneLine(r.FirstQuestion, 50))
	}
	in := bufio.NewReader(stdin)
	n, err := askNumber(in, stdout, fmt.Sprintf("Session [1-%d, Enter for 1]: ", len(rows)), len(rows), 1)
	if err != nil {
		return "", err
	}
	row := rows[n-1]
	if vf.turn == 0 && row.Turns > 1 {
		turns, err := runlog.FindTurns(row.Dir)
		if err == nil && len(turns) > 1 {
			t, err := askNumber(in, stdout, fmt.Sprintf("Turn [1-%d, Enter for all]: ", row.Turns), 1<<20, 0)
			if err != nil {
				return "", err
			}
			vf.turn = t
		}
	}
	return row.Dir, nil
}

// askNumber reads a number from 1 to most; an empty answer is def.
func askNumber(in *bufio.Reader, out io.Writer, prompt string, most, def int) (int, error) {
	fmt.Fprint(out, prompt)
	line, err := in.ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		fmt.Fprintln(out)
		return 0, exitf(ExitConfig, "--pick needs an answer on standard input")
	}
	line = strings.TrimSpace(line)
	if line == "" {
		return def, nil
	}
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 || n > most {
		return 0, exitf(ExitConfig, "--pick: %q is not a number from 1 to %d", line, most)
	}
	return n, nil
}

// serve is --web: the dashboard of massgen serve for the session's team, on 127.0.0.1, opened
// on the replay page of turn (web ids are log_<timestamp>/turn_<n>, relative to the log root).
func (vf *viewerFlags) serve(ctx context.Context, turn string, stdout, stderr io.Writer) error {
	sessionDir := filepath.Dir(turn)
	id := filepath.Base(sessionDir) + "/" + filepath.Base(turn)
	if !runlog.IsSessionID(filepath.Base(sessionDir)) {
		return exitf(ExitConfig, "viewer --web replays sessions in log_<timestamp> folders; %s is not one: massgen viewer %s plays it in the terminal", sessionDir, turn)
	}
	path := vf.configPath
	if path == "" {
		if s, err := runlog.ReadSession(filepath.Dir(sessionDir), filepath.Base(sessionDir), time.Now()); err == nil {
			for _, t := range s.Turns {
				path = cmp.Or(t.ConfigPath, path)
			}
		}
	}
	if path == "" {
		return exitf(ExitConfig, "viewer --web serves the web dashboard, which needs a team: session %s recorded no config file, so pass --config FILE", filepath.Base(sessionDir))
	}
	cfg, rep, _ := loadFile(path)
	if !rep.OK() {
		fmt.Fprint(stderr, rep.Text())
		return &exitError{code: ExitConfig, err: fmt.Errorf("the dashboard's team %s is not a valid config: pass --config FILE", path)}
	}
	name := web.TeamName(cfg)
	if !validTeamName(name) {
		name = "default"
	}
	// The dashboard can start runs of the team: a local process must not, so it has a token too.
	token, err := newToken()
	if err != nil {
		return err
	}
	srv, err := web.NewServer(web.Options{Teams: map[string]*config.Config{name: cfg}, LogRoot: filepath.Dir(sessionDir), Version: Version, Token: token})
	if err != nil {
		return exitf(ExitConfig, "viewer --web: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(vf.port))
	ln, err := srv.Listen(addr)
	if err != nil {
		return exitf(ExitExecution, "viewer --web: cannot listen on %s: %v (pick another port with --port)", addr, listenReason(err))
	}
	page := withToken("http://"+ln.Addr().String()+"/", token, fmt.Sprintf("#/replay/%s?speed=%s", id, strconv.FormatFloat(vf.speed, 'g', -1, 64)))
	_, unpublish := publishServer("viewer", ln.Addr(), "http://"+ln.Addr().String()+"/", token, stderr)
	defer unpublish()
	fmt.Fprintf(stdout, "massgen viewer: replaying %s at %s (Ctrl-C stops it)\n", id, page)
	if !vf.noBrowser {
		if err := openBrowser(page); err != nil {
			fmt.Fprintf(stdout, "  could not open a browser (%v): open the address yourself\n", err)
		}
	}
	if err := srv.ServeListener(ctx, ln); err != nil {
		return exitf(ExitExecution, "viewer --web: %v", err)
	}
	fmt.Fprintln(stdout, "massgen viewer: stopped")
	return nil
}

// logTarget resolves a LOGDIR argument: an existing folder as is, else a session id under root;
// "" is the newest session.
func logTarget(root, arg string, now time.Time) (string, error) {
	if arg == "" {
		ids, err := runlog.SessionIDs(root)
		if err != nil {
			return "", exitf(ExitConfig, "%v", err)
		}
		if len(ids) == 0 {
			return "", noSessions(root)
		}
		return filepath.Join(root, ids[0]), nil
	}
	if info, err := os.Stat(arg); err == nil {
		if info.IsDir() {
			return arg, nil
		}
		if filepath.Base(arg) == "events.jsonl" { // the log file itself: its turn folder
			return filepath.Dir(arg), nil
		}
	}
	root, s, err := findSession(root, arg, "LOGDIR", now)
	if err != nil {
		return "", err
	}
	return filepath.Join(root, s.ID), nil
}

// replayTurns is massgen replay's LOGDIR: the folder given, or the newest session under the
// default log root.
func replayTurns(args []string) ([]string, error) {
	arg := ""
	if len(args) == 1 {
		arg = args[0]
	}
	dir, err := logTarget(filepath.Join(".massgen", "massgen_logs"), arg, time.Now())
	if err != nil {
		return nil, err
	}
	return runlog.FindTurns(dir)
}
