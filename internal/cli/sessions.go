package cli

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/redact"
	"massgen/internal/runlog"
	"massgen/internal/suggest"
	"massgen/internal/termtext"
	"massgen/internal/usage"
)

// Sessions are the log_<timestamp> folders under the log root, found by scanning it: there is
// no registry file (MassGen keeps ~/.massgen/sessions.json) to go stale when a folder is
// moved, deleted or copied from another machine, and the log root a run writes to is the one
// it lists and continues from.

// sessionFlags are --continue, --session-id, --list-sessions and --all, and the session a run
// continues once it is known.
type sessionFlags struct {
	cont      bool
	id        string
	list, all bool

	stderr io.Writer
	plan   *runlog.Continuation // nil: a new session
	now    func() time.Time
	// resume is the interrupted turn the run finishes first (massgen resume, --continue);
	// then is the question asked after it, "" for none.
	resume *runlog.Interrupted
	then   string
}

// listLimit is how many sessions --list-sessions shows without --all (MassGen's 10).
const listLimit = 10

// addSessionFlags registers the session flags (and --log-root, unless registered already) on
// the root and runs --list-sessions, --continue and --session-id before the root's own RunE.
func addSessionFlags(root *cobra.Command, o *runOptions) {
	s := &sessionFlags{now: time.Now}
	o.sessions = s
	f := root.Flags()
	f.BoolVar(&s.cont, "continue", false, "continue the most recent session: a new turn in its log folder, with its conversation, winner's workspace and config")
	f.StringVar(&s.id, "session-id", "", "continue session `ID` (a log_<timestamp> folder; massgen --list-sessions lists them)")
	f.BoolVar(&s.list, "list-sessions", false, "list the 10 most recent finished sessions and exit (--json: as JSON)")
	f.BoolVar(&s.all, "all", false, "with --list-sessions: every session, unfinished and failed ones too")
	for n, g := range map[string]string{"continue": groupRun, "session-id": groupRun, "list-sessions": groupList, "all": groupList} {
		_ = f.SetAnnotation(n, groupAnnotKey, []string{g})
	}
	if f.Lookup("log-root") == nil {
		f.StringVar(&o.logRoot, "log-root", "", "`DIR` of the log folders written, listed and continued (default .massgen/massgen_logs)")
		_ = f.SetAnnotation("log-root", groupAnnotKey, []string{groupDisplay})
	}
	inner := root.RunE
	root.RunE = func(cmd *cobra.Command, args []string) error {
		s.stderr = cmd.ErrOrStderr()
		done, err := s.before(cmd, args, o)
		if done || err != nil {
			return err
		}
		return inner(cmd, args)
	}
}

// sessionRoot is the log root of o: the one run writes to.
func sessionRoot(o runOptions) string {
	if o.logRoot != "" {
		return o.logRoot
	}
	return filepath.Join(".massgen", "massgen_logs")
}

// before runs --list-sessions (done), or finds the session --continue or --session-id names
// and, unless the command line names a team, takes the config it ran with.
func (s *sessionFlags) before(cmd *cobra.Command, args []string, o *runOptions) (bool, error) {
	switch {
	case s.all && !s.list:
		return true, exitf(ExitConfig, "--all goes with --list-sessions")
	case s.list && (s.cont || s.id != ""):
		return true, exitf(ExitConfig, "--list-sessions lists the sessions; --continue and --session-id continue one: use one of them")
	case s.list:
		if len(args) > 0 {
			return true, exitf(ExitConfig, "--list-sessions takes no question (got %q)", strings.Join(args, " "))
		}
		asJSON, _ := cmd.Flags().GetBool("json")
		return true, listSessions(cmd.OutOrStdout(), sessionRoot(*o), s.all, asJSON, s.now())
	case s.cont && s.id != "":
		return true, exitf(ExitConfig, "--continue takes the most recent session and --session-id a named one: use one of them")
	case !s.cont && s.id == "":
		return false, nil
	}
	root := sessionRoot(*o)
	var sess runlog.Session
	var err error
	if s.cont {
		if it := newestInterrupted(root, s.now()); it != nil {
			// The newest session did not finish: --continue finishes it first.
			s.resume, s.then = it, strings.TrimSpace(strings.Join(args, " "))
			o.logRoot = absPath(root)
			if o.configPath == "" && o.backend == "" && o.model == "" {
				ro := resumeOptions(it, runOptions{}, cmd)
				o.configPath, o.backend, o.model, o.baseURL, o.sysMessage = ro.configPath, ro.backend, ro.model, ro.baseURL, ro.sysMessage
				o.trust.from = ro.trust.from
			}
			return false, nil
		}
		sess, err = latestSession(root, s.now(), s.stderr)
	} else {
		var found string
		found, sess, err = findSession(root, s.id, "--session-id", s.now())
		if err == nil && !samePath(found, root) {
			o.logRoot = absPath(found) // a session folder given by its path: its turns go there
		}
	}
	if err != nil {
		return true, err
	}
	if s.plan, err = runlog.Continue(sess); err != nil {
		return true, exitf(ExitConfig, "%v", err)
	}
	return false, s.takeConfig(o)
}

// takeConfig makes the run use the config the session ran with, when the command line names
// none: the session goes on with the same team and the same MCP servers.
func (s *sessionFlags) takeConfig(o *runOptions) error {
	p := s.plan
	if o.configPath != "" || o.backend != "" || o.model != "" {
		if p.ConfigPath != "" && o.configPath != "" && !samePath(o.configPath, p.ConfigPath) {
			fmt.Fprintf(s.stderr, "warning: continuing session %s with --config %s; it ran with %s\n", p.Session.ID, o.configPath, p.ConfigPath)
		}
		return nil
	}
	switch {
	case p.ConfigPath != "":
		if !strings.HasPrefix(p.ConfigPath, "@") {
			if _, err := os.Stat(p.ConfigPath); err != nil {
				return exitf(ExitConfig, "session %s ran with the config %s, which cannot be read from here (%v): pass --config FILE, or run from the folder the session started in",
					p.Session.ID, p.ConfigPath, errors.Unwrap(err))
			}
		}
		o.configPath, o.trust.from = p.ConfigPath, "the log of session "+p.Session.ID
	case len(p.Team) == 1 && p.Team[0].ID == "agent1":
		// The quick setup (--backend/--model): its one agent is all the log needs.
		a := p.Team[0]
		if strings.Contains(a.BaseURL, redact.Marker) {
			return exitf(ExitConfig, "session %s ran with a --base-url holding credentials, which its log does not keep: pass --backend, --model and --base-url again", p.Session.ID)
		}
		o.backend, o.model, o.baseURL, o.sysMessage = a.Type, a.Model, a.BaseURL, a.SystemMessage
		o.trust.from = "the log of session " + p.Session.ID
	}
	// Otherwise the session ran with the team built from the API keys: it is built again.
	return nil
}

func samePath(a, b string) bool {
	x, err1 := filepath.Abs(a)
	y, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && x == y
}

// resolve runs once the config is loaded: it takes the config's top-level session_id when
// no flag named a session, and checks that the run can add a turn to the session.
func (s *sessionFlags) resolve(o runOptions, cfg *config.Config, logging bool, stderr io.Writer) error {
	if s == nil {
		return nil
	}
	if s.plan == nil && cfg.SessionID != "" {
		what := "session_id in " + cmp.Or(cfg.Path, "the config")
		root, sess, err := findSession(sessionRoot(o), cfg.SessionID, what, s.now())
		if err != nil {
			return err
		}
		if !samePath(root, sessionRoot(o)) {
			return exitf(ExitConfig, "%s names a session under %s, but this run logs to %s: pass --log-root %s, or give the id alone",
				what, root, sessionRoot(o), root)
		}
		if s.plan, err = runlog.Continue(sess); err != nil {
			return exitf(ExitConfig, "%v", err)
		}
	}
	p := s.plan
	if p == nil {
		return nil
	}
	switch {
	case o.web.on:
		return exitf(ExitConfig, "--web starts its own sessions: continue session %s in the terminal (massgen --session-id %s), or replay it with massgen viewer %s --web",
			p.Session.ID, p.Session.ID, p.Session.ID)
	case !logging:
		return exitf(ExitConfig, "continuing session %s adds turn %d to its log folder, but logging is off (--no-logs or ui.logging_enabled: false): turn it on, or start a new session",
			p.Session.ID, p.NextTurn)
	}
	if was, now := teamLine(p.Team), configTeam(cfg); was != "" && was != now {
		fmt.Fprintf(stderr, "warning: session %s ran with the team %s; this turn runs %s\n", p.Session.ID, was, now)
	}
	return nil
}

// teamLine and configTeam describe a team the same way, to compare the recorded one with
// the one loaded.
func teamLine(team []runlog.TeamAgent) string {
	parts := make([]string, len(team))
	for i, a := range team {
		parts[i] = strings.TrimSpace(fmt.Sprintf("%s (%s %s)", a.ID, a.Type, a.Model))
	}
	return strings.Join(parts, ", ")
}

func configTeam(cfg *config.Config) string {
	team := make([]runlog.TeamAgent, len(cfg.Agents))
	for i, a := range cfg.Agents {
		team[i] = runlog.TeamAgent{ID: a.ID, Type: a.Backend.Type, Model: a.Backend.Model}
	}
	return teamLine(team)
}

// continuing reports whether the run adds a turn to a logged session.
func (s *sessionFlags) continuing() bool { return s != nil && s.plan != nil }

// continuation is the session the run continues; nil for a new one.
func (s *sessionFlags) continuation() *runlog.Continuation {
	if s == nil {
		return nil
	}
	return s.plan
}

// once runs the one question of a run: a new session, or the next turn of the session it
// continues, carrying that session's conversation and winner's workspace.
func (s *sessionFlags) once(question string, runTurn func(app.Options) (app.Result, error)) (app.Result, error) {
	if s != nil && s.resume != nil {
		return s.resumeTurn(runTurn)
	}
	if !s.continuing() {
		return runTurn(app.Options{Question: question})
	}
	p := s.plan
	for _, l := range continuingNote(p) {
		fmt.Fprintf(s.stderr, "massgen: %s\n", l)
	}
	conv := app.ResumeConversation(p.Workspace)
	res, err := runTurn(app.Options{Question: question, History: p.History, Session: p.Session.ID, Turn: p.NextTurn, Conversation: conv})
	// The conversation holds this turn's MCP servers until here.
	res.CloseErr = errors.Join(res.CloseErr, conv.Close())
	return res, err
}

// continuingNote says what a continued session starts from.
func continuingNote(p *runlog.Continuation) []string {
	lines := []string{fmt.Sprintf("continuing session %s with turn %d (%s)", p.Session.ID, p.NextTurn, plural(len(p.History)/2, "earlier question"))}
	for _, u := range p.Unfinished {
		why := u.Status
		if u.Status == runlog.StatusIncomplete {
			why = "incomplete: its process may have crashed"
		}
		from := "the start"
		if p.Answered > 0 {
			from = fmt.Sprintf("turn %d", p.Answered)
		}
		lines = append(lines, fmt.Sprintf("turn %d did not finish with an answer (%s); the conversation goes on from %s", u.N, why, from))
	}
	if p.Workspace != "" {
		// final/<winner>/workspace of turn_<n>
		turn := filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p.Workspace))))
		lines = append(lines, fmt.Sprintf("the agents start from the winner's workspace of %s", strings.Replace(turn, "_", " ", 1)))
	}
	return lines
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// newestInterrupted is the newest session's last turn when it can be resumed (it stopped
// before its end, and is not running), else nil.
func newestInterrupted(root string, now time.Time) *runlog.Interrupted {
	ids, err := runlog.SessionIDs(root)
	if err != nil || len(ids) == 0 {
		return nil
	}
	s, err := runlog.ReadSession(root, ids[0], now)
	if err != nil || len(s.Turns) == 0 {
		return nil
	}
	if st := s.Status(); st != runlog.StatusIncomplete && st != "interrupted" {
		return nil
	}
	it, err := runlog.ReadInterrupted(s.Last().Dir)
	if err != nil {
		return nil
	}
	return it
}

// latestSession is the most recent session with an answered turn that is not running.
func latestSession(root string, now time.Time, stderr io.Writer) (runlog.Session, error) {
	ids, err := runlog.SessionIDs(root)
	if err != nil {
		return runlog.Session{}, exitf(ExitConfig, "%v", err)
	}
	if len(ids) == 0 {
		return runlog.Session{}, noSessions(root)
	}
	var skipped []string
	for _, id := range ids {
		s, err := runlog.ReadSession(root, id, now)
		if err != nil {
			continue
		}
		if _, ok := s.LastAnswered(); !ok || s.Status() == runlog.StatusRunning {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", id, s.Status()))
			continue
		}
		if len(skipped) > 0 {
			fmt.Fprintf(stderr, "massgen: skipping %s that cannot be continued: %s\n", plural(len(skipped), "newer session"), strings.Join(first(skipped, 3), ", "))
		}
		return s, nil
	}
	return runlog.Session{}, exitf(ExitConfig, "no session in %s can be continued: none of its %s has an answered turn (massgen --list-sessions --all lists them)",
		root, plural(len(ids), "session"))
}

func noSessions(root string) error {
	return exitf(ExitConfig, "no sessions in %s yet: run massgen \"your question\" to start one (or pass --log-root DIR)", root)
}

// findSession finds session arg under root: its id (log_... or without the prefix), an
// unambiguous beginning of one, or the path of its folder (whose parent is then the root).
// what names where arg came from, for the messages.
func findSession(root, arg, what string, now time.Time) (string, runlog.Session, error) {
	arg = strings.TrimSpace(arg)
	if strings.ContainsAny(arg, `/\`) || arg == "." || arg == ".." {
		dir := filepath.Clean(arg)
		if strings.HasPrefix(filepath.Base(dir), "turn_") {
			dir = filepath.Dir(dir)
		}
		if !runlog.IsSessionID(filepath.Base(dir)) {
			return "", runlog.Session{}, exitf(ExitConfig, "%s %s: not a session folder (log_<timestamp>)", what, arg)
		}
		root = filepath.Dir(dir)
		arg = filepath.Base(dir)
	}
	ids, err := runlog.SessionIDs(root)
	if err != nil {
		return "", runlog.Session{}, exitf(ExitConfig, "%v", err)
	}
	if len(ids) == 0 {
		return "", runlog.Session{}, noSessions(root)
	}
	id := matchID(ids, arg)
	if id == "" {
		var matches []string
		for _, c := range ids {
			if strings.HasPrefix(c, arg) || strings.HasPrefix(c, "log_"+arg) {
				matches = append(matches, c)
			}
		}
		switch {
		case len(matches) == 1:
			id = matches[0]
		case len(matches) > 1:
			return "", runlog.Session{}, exitf(ExitConfig, "%s %s matches %d sessions (%s): give more of the id", what, arg, len(matches), strings.Join(first(matches, 5), ", "))
		default:
			return "", runlog.Session{}, exitf(ExitConfig, "%s %s: no such session in %s; did you mean %s? (massgen --list-sessions --all lists them)",
				what, arg, root, strings.Join(nearest(ids, arg, 3), " or "))
		}
	}
	s, err := runlog.ReadSession(root, id, now)
	if err != nil {
		return "", runlog.Session{}, exitf(ExitConfig, "%v", err)
	}
	if s.Status() == runlog.StatusRunning {
		return "", runlog.Session{}, exitf(ExitConfig, "session %s is running (its log was written moments ago): wait for its turn to end, or continue another session", id)
	}
	return root, s, nil
}

func matchID(ids []string, arg string) string {
	for _, id := range ids {
		if id == arg || id == "log_"+arg {
			return id
		}
	}
	return ""
}

// nearest returns the n ids closest to arg.
func nearest(ids []string, arg string, n int) []string {
	sorted := slices.Clone(ids)
	slices.SortStableFunc(sorted, func(a, b string) int {
		return suggest.Distance(arg, a) - suggest.Distance(arg, b)
	})
	return first(sorted, n)
}

func first(list []string, n int) []string { return list[:min(n, len(list))] }

// sessionRow is one session as --list-sessions and massgen logs list show it.
type sessionRow struct {
	ID            string    `json:"id"`
	Dir           string    `json:"dir"`
	Start         time.Time `json:"started_at"`
	Turns         int       `json:"turns"`
	Status        string    `json:"status"`
	Winner        string    `json:"winner,omitempty"`
	FirstQuestion string    `json:"first_question"`
	Continuable   bool      `json:"continuable"`
	// Resumable: the newest turn stopped before its end (killed, crashed, Ctrl-C), and
	// massgen resume finishes it.
	Resumable bool    `json:"resumable"`
	Duration  float64 `json:"duration_seconds"`
	CostUSD   float64 `json:"cost_usd"`
	CostKnown bool    `json:"cost_known"`
	estimated bool
}

func (r sessionRow) cost() usage.Amount {
	return usage.Amount{USD: r.CostUSD, Known: r.CostKnown, Estimated: r.estimated}
}

// sessionRows reads up to limit sessions (0: all) newest first, those keep accepts, and says
// how many it left out.
func sessionRows(root string, limit int, keep func(runlog.Session) bool, now time.Time) ([]sessionRow, int, error) {
	ids, err := runlog.SessionIDs(root)
	if err != nil {
		return nil, 0, exitf(ExitConfig, "%v", err)
	}
	rows := []sessionRow{}
	left := 0
	for i, id := range ids {
		if limit > 0 && len(rows) >= limit {
			// Older ones are not read: a big log root lists as fast as a small one.
			left += len(ids) - i
			break
		}
		s, err := runlog.ReadSession(root, id, now)
		if err != nil {
			continue
		}
		if !keep(s) {
			left++
			continue
		}
		r := sessionRow{ID: s.ID, Dir: absPath(s.Dir), Start: s.Start, Turns: len(s.Turns), Status: s.Status(), Winner: s.Last().Winner}
		_, answered := s.LastAnswered()
		r.Continuable = answered && r.Status != runlog.StatusRunning
		r.Resumable = r.Status == runlog.StatusIncomplete || r.Status == "interrupted"
		if r.Status == runlog.StatusIncomplete {
			r.Status = "interrupted" // killed or crashed: it did not finish, and can be resumed
		}
		for _, t := range s.Turns {
			if r.FirstQuestion == "" {
				r.FirstQuestion = t.Question
			}
			r.Duration += t.Duration
		}
		c := s.Cost()
		r.CostUSD, r.CostKnown, r.estimated = c.USD, c.Known, c.Estimated
		rows = append(rows, r)
	}
	return rows, left, nil
}

// listSessions prints --list-sessions: the finished sessions, newest first, or with all every
// one of them.
func listSessions(w io.Writer, root string, all, asJSON bool, now time.Time) error {
	keep := func(s runlog.Session) bool {
		st := s.Status()
		return all || st == "completed" || st == "timeout"
	}
	limit := listLimit
	if all {
		limit = 0
	}
	rows, left, err := sessionRows(root, limit, keep, now)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, rows)
	}
	tw := termtext.NewWriter(w)
	if len(rows) == 0 {
		if left == 0 {
			fmt.Fprintf(tw, "No sessions in %s yet: massgen \"your question\" starts one.\n", root)
		} else {
			fmt.Fprintf(tw, "No finished session in %s (%d unfinished or failed): massgen --list-sessions --all lists them.\n", root, left)
		}
		return nil
	}
	t := tabwriter.NewWriter(tw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "ID\tWHEN\tTURNS\tSTATUS\tWINNER\tFIRST QUESTION")
	for _, r := range rows {
		fmt.Fprintf(t, "%s\t%s\t%d\t%s\t%s\t%s\n", r.ID, when(r.Start), r.Turns, r.Status, cmp.Or(r.Winner, "-"), oneLine(r.FirstQuestion, 60))
	}
	_ = t.Flush()
	if left > 0 {
		more := "older"
		if !all {
			more = "older, unfinished or failed"
		}
		fmt.Fprintf(tw, "(%d more: %s; massgen --list-sessions --all shows every one)\n", left, more)
	}
	fmt.Fprintf(tw, "\nContinue the newest with massgen --continue [\"question\"], another with massgen --session-id ID.\n")
	resumeHint(tw, rows)
	return nil
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return cmp.Or(s, "-")
}

func absPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return exitf(ExitExecution, "encode JSON: %v", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// resumeHint says how to finish the interrupted sessions listed.
func resumeHint(w io.Writer, rows []sessionRow) {
	for _, r := range rows {
		if r.Resumable {
			fmt.Fprintf(w, "Interrupted sessions did not finish: massgen resume ID finishes one (%s, for example).\n", r.ID)
			return
		}
	}
}
