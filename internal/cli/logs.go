package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"massgen/internal/event"
	"massgen/internal/runlog"
	"massgen/internal/termtext"
	"massgen/internal/usage"
)

// logsEnv is what massgen logs needs from the machine, replaced in tests.
type logsEnv struct {
	now      func() time.Time
	terminal bool                                        // stdin and stdout are a terminal
	open     func(ctx context.Context, dir string) error // shows dir in a file manager; nil: no desktop
}

// logsFlags are the flags every logs subcommand takes.
type logsFlags struct {
	logDir, root string
	asJSON       bool
}

func newLogs(stdin io.Reader, stdout io.Writer) *cobra.Command {
	return newLogsWith(stdout, logsEnv{now: time.Now, terminal: isTerminal(stdout, stdin), open: desktopOpener(os.Getenv)})
}

func newLogsWith(stdout io.Writer, env logsEnv) *cobra.Command {
	var lf logsFlags
	summary := func(cmd *cobra.Command, args []string) error {
		dir, err := lf.target(args, env.now())
		if err != nil {
			return err
		}
		return logsSummary(stdout, dir, lf.asJSON, env.now())
	}
	cmd := &cobra.Command{
		Use:   "logs [summary|tools|list|open] [LOGDIR]",
		Short: "Summarise past runs from their log folders",
		Long: `logs reads the log folders massgen writes (.massgen/massgen_logs/log_<timestamp>/turn_<n>)
and reports on them; it never calls a model. LOGDIR is a session folder (every turn), one of
its turn_<n> folders, or a session id; the default is the newest session.

  massgen logs [summary] [LOGDIR]        question, agents, answers, votes, winner, tokens, cost,
                                         duration and status of each turn
  massgen logs tools [LOGDIR] [--sort time|calls]
                                         tool calls per tool: count, errors, refusals, total,
                                         mean and longest duration
  massgen logs list [--limit N]          the newest runs (0: all of them)
  massgen logs open [LOGDIR]             print the folder's path, and open it on a desktop

--json prints any of them as JSON. MassGen's logs analyze (an LLM writing ANALYSIS_REPORT.md)
is not in this build.`,
		Args: cobra.MaximumNArgs(1),
		RunE: summary,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&lf.logDir, "log-dir", "", "the log folder `DIR` to read (the same as LOGDIR)")
	pf.StringVar(&lf.root, "log-root", "", "`DIR` holding the log folders (default .massgen/massgen_logs)")
	pf.BoolVar(&lf.asJSON, "json", false, "print JSON")

	cmd.AddCommand(&cobra.Command{
		Use:   "summary [LOGDIR]",
		Short: "Question, agents, answers, votes, winner, tokens, cost, duration and status of each turn",
		Args:  cobra.MaximumNArgs(1),
		RunE:  summary,
	})

	var sortBy string
	tools := &cobra.Command{
		Use:   "tools [LOGDIR]",
		Short: "Tool calls per tool: count, errors, refusals and durations",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if sortBy != "time" && sortBy != "calls" {
				return exitf(ExitConfig, "--sort %q: use time (total duration) or calls", sortBy)
			}
			dir, err := lf.target(args, env.now())
			if err != nil {
				return err
			}
			return logsTools(stdout, dir, sortBy, lf.asJSON)
		},
	}
	tools.Flags().StringVar(&sortBy, "sort", "time", "order: time (total duration) or calls")
	cmd.AddCommand(tools)

	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "The newest runs, one line each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 0 {
				return exitf(ExitConfig, "--limit %d: use a positive number, or 0 for every run", limit)
			}
			return logsList(stdout, lf.rootDir(), limit, lf.asJSON, env.now())
		},
	}
	list.Flags().IntVar(&limit, "limit", 10, "how many runs (0: all)")
	cmd.AddCommand(list)

	cmd.AddCommand(&cobra.Command{
		Use:   "open [LOGDIR]",
		Short: "Print a log folder's path, and open it in the file manager on a desktop",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := lf.target(args, env.now())
			if err != nil {
				return err
			}
			dir = absPath(dir)
			if lf.asJSON {
				return writeJSON(stdout, map[string]string{"path": dir})
			}
			fmt.Fprintln(termtext.NewWriter(stdout), dir)
			if env.terminal && env.open != nil {
				ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
				defer cancel()
				if err := env.open(ctx, dir); err != nil {
					fmt.Fprintf(termtext.NewWriter(stdout), "(could not open it in a file manager: %v)\n", err)
				}
			}
			return nil
		},
	})

	cmd.AddCommand(&cobra.Command{
		Use:                "analyze",
		Short:              "MassGen's LLM analysis of a log (not in this build)",
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return exitf(ExitConfig, "massgen logs analyze (agents reading a log and writing ANALYSIS_REPORT.md) is not supported: "+
				"massgen logs summary and massgen logs tools summarise a run without a model, and massgen replay LOGDIR --table prints its coordination table")
		},
	})
	return cmd
}

func (lf *logsFlags) rootDir() string {
	return cmp.Or(lf.root, filepath.Join(".massgen", "massgen_logs"))
}

// target is the log folder args or --log-dir name: a folder, a session id under the log root,
// or, with neither, the newest session.
func (lf *logsFlags) target(args []string, now time.Time) (string, error) {
	arg := lf.logDir
	if len(args) == 1 {
		if arg != "" && arg != args[0] {
			return "", exitf(ExitConfig, "LOGDIR %s and --log-dir %s name two folders: give one", args[0], arg)
		}
		arg = args[0]
	}
	return logTarget(lf.rootDir(), arg, now)
}

// sessionReport is massgen logs summary.
type sessionReport struct {
	Dir       string              `json:"dir"`
	Turns     []runlog.TurnReport `json:"turns"`
	Duration  float64             `json:"duration_seconds"`
	Tokens    runlog.Tokens       `json:"tokens"`
	CostUSD   float64             `json:"cost_usd"`
	CostKnown bool                `json:"cost_known"`
}

// turnDirs returns the turn folders of dir (a session or a turn folder) with their numbers.
func turnDirs(dir string) ([]string, []int, error) {
	dirs, err := runlog.FindTurns(dir)
	if err != nil {
		return nil, nil, exitf(ExitConfig, "%v", err)
	}
	ns := make([]int, len(dirs))
	for i, d := range dirs {
		fmt.Sscanf(filepath.Base(d), "turn_%d", &ns[i])
	}
	return dirs, ns, nil
}

func logsSummary(w io.Writer, dir string, asJSON bool, now time.Time) error {
	dirs, ns, err := turnDirs(dir)
	if err != nil {
		return err
	}
	rep := sessionReport{Dir: absPath(dir), CostKnown: true}
	for i, d := range dirs {
		t := runlog.ReportTurn(runlog.ReadTurnSummary(absPath(d), ns[i], now), now)
		rep.Turns = append(rep.Turns, t)
		rep.Duration += t.DurationSeconds
		rep.Tokens.Add(t.Tokens)
		rep.CostUSD += t.CostUSD
		rep.CostKnown = rep.CostKnown && t.CostKnown
	}
	if asJSON {
		return writeJSON(w, rep)
	}
	// Questions, answers' labels and errors come from the log, which models wrote into.
	tw := termtext.NewWriter(w)
	fmt.Fprintf(tw, "%s · %s\n", rep.Dir, plural(len(rep.Turns), "turn"))
	for _, t := range rep.Turns {
		fmt.Fprintf(tw, "\nTurn %d · %s · %s · %s\n", t.Turn, statusText(t), seconds(t.DurationSeconds), turnCost(t))
		fmt.Fprintf(tw, "  Question: %s\n", oneLine(t.Question, 200))
		var agents []string
		for _, a := range t.Agents {
			agents = append(agents, fmt.Sprintf("%s (%s): %s, %s%s", a.ID, strings.TrimSpace(a.Backend+" "+a.Model),
				plural(a.Answers, "answer"), plural(a.VotesCast, "vote"), errorsText(a.Errors)))
		}
		fmt.Fprintf(tw, "  Agents:   %s\n", cmp.Or(strings.Join(agents, "; "), "-"))
		var votes []string
		for _, v := range t.Tally {
			votes = append(votes, fmt.Sprintf("%s by %s: %d (%s)", v.Answer, v.Author, v.Votes, strings.Join(v.Voters, ", ")))
		}
		fmt.Fprintf(tw, "  Answers:  %d · votes: %s\n", t.Answers, cmp.Or(strings.Join(votes, "; "), "none counted"))
		for _, r := range t.Restarts {
			fmt.Fprintf(tw, "  Restart:  attempt %d/%d asked by %s: %s\n", r.Attempt, t.MaxAttempts, r.Agent, oneLine(r.Reason, 200))
		}
		if t.Winner != "" {
			attempt := ""
			if t.MaxAttempts > 0 {
				attempt = fmt.Sprintf(" in attempt %d/%d", t.Attempt, t.MaxAttempts)
			}
			fmt.Fprintf(tw, "  Winner:   %s (%s)%s\n", t.Winner, t.WinnerAnswer, attempt)
		}
		fmt.Fprintf(tw, "  Tokens:   %s\n", tokenText(t.Tokens))
		if t.Latency != nil && len(t.Latency.CriticalPath) > 0 {
			fmt.Fprintf(tw, "  Latency:  %s\n", t.Latency.Summary)
		}
		if t.Error != "" {
			fmt.Fprintf(tw, "  Error:    %s\n", oneLine(t.Error, 300))
		}
		if t.Incomplete != "" {
			fmt.Fprintf(tw, "  Note:     %s\n", t.Incomplete)
		}
	}
	if len(rep.Turns) > 1 {
		fmt.Fprintf(tw, "\nTotal: %s · %s · %s\n", seconds(rep.Duration), tokenText(rep.Tokens), usage.Amount{USD: rep.CostUSD, Known: rep.CostKnown, Estimated: rep.Tokens.Estimated})
	}
	return nil
}

func turnCost(t runlog.TurnReport) usage.Amount {
	return usage.Amount{USD: t.CostUSD, Known: t.CostKnown, Estimated: t.Tokens.Estimated}
}

func statusText(t runlog.TurnReport) string {
	if t.Status == runlog.StatusIncomplete {
		return "interrupted (killed or crashed: massgen resume finishes it)"
	}
	if t.ExitCode != nil {
		return fmt.Sprintf("%s (exit %d)", t.Status, *t.ExitCode)
	}
	return t.Status
}

func errorsText(n int) string {
	if n == 0 {
		return ""
	}
	return ", " + plural(n, "error")
}

func seconds(s float64) string {
	if s >= 120 {
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.1f s", s)
}

func tokenText(t runlog.Tokens) string {
	s := fmt.Sprintf("%s in (%s cached) / %s out (%s reasoning)", count(t.Input), count(t.CachedInput), count(t.Output), count(t.Reasoning))
	if t.Estimated {
		s += ", partly estimated"
	}
	return s
}

// count writes n with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// toolStat is one tool in massgen logs tools.
type toolStat struct {
	Tool    string  `json:"tool"`
	Calls   int     `json:"calls"`   // ran, refused ones included
	Errors  int     `json:"errors"`  // ran and returned an error
	Refused int     `json:"refused"` // refused before running (unknown tool, bad arguments, ...)
	TotalMS float64 `json:"total_ms"`
	MeanMS  float64 `json:"mean_ms"`
	MaxMS   float64 `json:"max_ms"`
	ran     int
}

// toolStats counts the tool calls of the turn folders from their events.jsonl, reading a
// line at a time and decoding only tool lines, at most runlog.MaxEventsRead bytes per turn.
func toolStats(dirs []string) (map[string]*toolStat, error) {
	stats := map[string]*toolStat{}
	get := func(name string) *toolStat {
		if stats[name] == nil {
			stats[name] = &toolStat{Tool: name}
		}
		return stats[name]
	}
	for _, d := range dirs {
		f, err := os.Open(filepath.Join(d, "events.jsonl"))
		if err != nil {
			return nil, exitf(ExitConfig, "%v", err)
		}
		sc := bufio.NewScanner(io.LimitReader(f, runlog.MaxEventsRead))
		sc.Buffer(make([]byte, 0, 64<<10), event.ReadLimit)
		for sc.Scan() {
			line := sc.Bytes()
			// A JSON string never holds an unescaped `"type":"`, so only envelopes match.
			if !bytes.Contains(line, []byte(`"type":"tool_result"`)) && !bytes.Contains(line, []byte(`"type":"tool_rejected"`)) {
				continue
			}
			var e event.Event
			if json.Unmarshal(line, &e) != nil {
				continue // a cut last line
			}
			switch p := e.Payload.(type) {
			case event.ToolResult:
				s := get(p.Tool)
				s.Calls++
				s.ran++
				if p.IsError {
					s.Errors++
				}
				s.TotalMS += p.DurationMS
				s.MaxMS = max(s.MaxMS, p.DurationMS)
			case event.ToolRejected:
				s := get(p.Tool)
				s.Calls++
				s.Refused++
			}
		}
		_ = f.Close()
	}
	for _, s := range stats {
		if s.ran > 0 {
			s.MeanMS = s.TotalMS / float64(s.ran)
		}
	}
	return stats, nil
}

func logsTools(w io.Writer, dir, sortBy string, asJSON bool) error {
	dirs, _, err := turnDirs(dir)
	if err != nil {
		return err
	}
	stats, err := toolStats(dirs)
	if err != nil {
		return err
	}
	list := make([]toolStat, 0, len(stats))
	for _, s := range stats {
		list = append(list, *s)
	}
	slices.SortFunc(list, func(a, b toolStat) int {
		if sortBy == "calls" {
			return cmp.Or(b.Calls-a.Calls, cmp.Compare(b.TotalMS, a.TotalMS), strings.Compare(a.Tool, b.Tool))
		}
		return cmp.Or(cmp.Compare(b.TotalMS, a.TotalMS), b.Calls-a.Calls, strings.Compare(a.Tool, b.Tool))
	})
	if asJSON {
		return writeJSON(w, map[string]any{"dir": absPath(dir), "sort": sortBy, "tools": list})
	}
	tw := termtext.NewWriter(w)
	if len(list) == 0 {
		fmt.Fprintf(tw, "No tool calls in %s (answers and votes are not tool calls here: massgen logs summary counts them).\n", absPath(dir))
		return nil
	}
	// Names left, numbers right.
	width := len("TOTAL")
	for _, s := range list {
		width = max(width, len(s.Tool))
	}
	row := func(name string, cells ...string) {
		fmt.Fprintf(tw, "%-*s", width, name)
		for _, c := range cells {
			fmt.Fprintf(tw, "  %7s", c)
		}
		fmt.Fprintln(tw)
	}
	row("TOOL", "CALLS", "ERRORS", "REFUSED", "TOTAL", "MEAN", "MAX")
	var total toolStat
	for _, s := range list {
		row(s.Tool, fmt.Sprint(s.Calls), fmt.Sprint(s.Errors), fmt.Sprint(s.Refused), ms(s.TotalMS), ms(s.MeanMS), ms(s.MaxMS))
		total.Calls, total.Errors, total.Refused, total.TotalMS = total.Calls+s.Calls, total.Errors+s.Errors, total.Refused+s.Refused, total.TotalMS+s.TotalMS
	}
	row("TOTAL", fmt.Sprint(total.Calls), fmt.Sprint(total.Errors), fmt.Sprint(total.Refused), ms(total.TotalMS))
	fmt.Fprintf(tw, "\n%s (sorted by %s)\n", absPath(dir), sortBy)
	return nil
}

func ms(v float64) string {
	switch {
	case v >= 60000:
		return fmt.Sprintf("%.1fm", v/60000)
	case v >= 1000:
		return fmt.Sprintf("%.1fs", v/1000)
	}
	return fmt.Sprintf("%.0fms", v)
}

func logsList(w io.Writer, root string, limit int, asJSON bool, now time.Time) error {
	rows, left, err := sessionRows(root, limit, func(runlog.Session) bool { return true }, now)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, rows)
	}
	tw := termtext.NewWriter(w)
	if len(rows) == 0 {
		fmt.Fprintf(tw, "No runs in %s yet: massgen \"your question\" starts one.\n", root)
		return nil
	}
	t := tabwriter.NewWriter(tw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(t, "#\tID\tWHEN\tTURNS\tSTATUS\tDURATION\tCOST\tQUESTION")
	for i, r := range rows {
		fmt.Fprintf(t, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", i+1, r.ID, when(r.Start), r.Turns, r.Status, seconds(r.Duration), r.cost(), oneLine(r.FirstQuestion, 50))
	}
	_ = t.Flush()
	if left > 0 {
		fmt.Fprintf(tw, "(%d older: massgen logs list --limit 0 shows every run)\n", left)
	}
	resumeHint(tw, rows)
	return nil
}

// desktopOpener returns what opens a folder in the desktop's file manager, or nil when there
// is no desktop to show it on (a server, a container, an SSH session without X).
func desktopOpener(getenv func(string) string) func(ctx context.Context, dir string) error {
	var name string
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		name = "explorer"
	default:
		if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
			return nil
		}
		name = "xdg-open"
	}
	if _, err := exec.LookPath(name); err != nil {
		return nil
	}
	return func(ctx context.Context, dir string) error {
		return exec.CommandContext(ctx, name, dir).Run()
	}
}
