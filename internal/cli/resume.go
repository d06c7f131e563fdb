package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"massgen/internal/app"
	"massgen/internal/readmodel"
	"massgen/internal/runlog"
)

const resumeLong = `resume finishes a session whose process stopped before the end: killed (kill -9, out of
memory, the machine went down), crashed, or interrupted with Ctrl-C. Everything its log holds
stands: the accepted answers, the votes that still count, the labels, the agents' workspaces
and snapshots, failures, cost spent. Only the model calls that were in flight are made again;
agents holding a current vote do nothing more; a final answer already written is the answer.
The log goes on in the same turn folder, and status.json lists the resume under
meta.resumed (which turn, after which event).

LOGDIR is a turn folder (…/log_<timestamp>/turn_<n>), a session folder (its last turn), or a
session id under --log-root. The session's config is used again (metadata.json records it);
--config names it when it has moved. A log that finished, is still being written, is not
massgen's, or whose config changed since (config_hash in metadata.json) is refused (exit 1).

  massgen resume .massgen/massgen_logs/log_20260101_120000_000001
  massgen --continue            the same, for the newest session when its last turn is interrupted`

// newResume is massgen resume LOGDIR.
func newResume(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "resume LOGDIR",
		Short: "Finish a session that was killed, crashed or interrupted, from its log",
		Long:  resumeLong,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			it, err := findInterrupted(cmd.Flags().Changed("log-root"), o.logRoot, args[0], time.Now())
			if err != nil {
				return err
			}
			ro := resumeOptions(it, o, cmd)
			ro.sessions = &sessionFlags{resume: it, stderr: stderr, now: time.Now}
			return run(cmd.Context(), ro, it.State.Question, stdin, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.configPath, "config", "", "the config `FILE` the session ran with, when it is not where metadata.json says")
	f.StringVar(&o.logRoot, "log-root", "", "`DIR` holding the log folders, for a session id (default .massgen/massgen_logs)")
	f.BoolVar(&o.automation, "automation", false, "quiet output for scripts: the automation lines and status.json")
	f.BoolVar(&o.noDisplay, "no-display", false, "plain text output instead of the live view")
	f.BoolVar(&o.debug, "debug", false, "also write massgen_debug.log")
	f.StringVar(&o.outputFile, "output-file", "", "also write the final answer to `FILE`")
	f.BoolVar(&o.trust.all, "trust", false, "run the config the log names even if it starts programs or reaches other endpoints, without asking")
	return cmd
}

// resumeOptions are the run options of the session it was started with (its recorded
// command line: --orchestrator-timeout and the like apply again), with the resume's own
// config and display flags.
func resumeOptions(it *runlog.Interrupted, own runOptions, cmd *cobra.Command) runOptions {
	rec := &rootOptions{}
	root := &cobra.Command{Use: "massgen"}
	addRootFlags(root, rec)
	addSessionFlags(root, &rec.run)
	root.Flags().ParseErrorsAllowlist.UnknownFlags = true
	if len(it.Args) > 1 && root.Flags().Parse(it.Args[1:]) == nil {
		rec.run.timeoutSet = root.Flags().Changed("orchestrator-timeout")
	} else {
		rec = &rootOptions{}
	}
	o := rec.run
	o.sessions, o.web, o.args = nil, webOptions{}, it.Args
	o.configPath = it.ConfigPath
	// The log is not the user's word: its config runs only once trusted, and a --trust in
	// its recorded command line counts for nothing.
	o.trust = trustOptions{all: own.trust.all, from: "the log folder " + it.Dir}
	if own.configPath != "" {
		o.configPath, o.trust.from = own.configPath, ""
	}
	if o.configPath != "" {
		o.backend, o.model, o.baseURL, o.sysMessage = "", "", "", ""
	}
	o.logRoot = filepath.Dir(filepath.Dir(absPath(it.Dir)))
	o.automation, o.noDisplay, o.debug, o.outputFile = own.automation, own.noDisplay, own.debug, own.outputFile
	o.display, o.streamEvents, o.noLogs = "", false, false
	return o
}

// findInterrupted finds the turn arg names (a turn folder, a session folder or a session id
// under root) and reads it for resuming.
func findInterrupted(rootSet bool, root, arg string, now time.Time) (*runlog.Interrupted, error) {
	if root == "" {
		root = filepath.Join(".massgen", "massgen_logs")
	}
	dir := arg
	if !isDirPath(arg) || rootSet && !strings.ContainsAny(arg, `/\`) {
		_, sess, err := findSession(root, arg, "massgen resume", now)
		if err != nil {
			return nil, err
		}
		dir = sess.Dir
	}
	// Absolute, so that what it prints (logs: DIR) is the same from any folder, as a new
	// session's is.
	turns, err := runlog.FindTurns(absPath(dir))
	if err != nil {
		return nil, exitf(ExitConfig, "massgen resume %s: %v", arg, err)
	}
	turn := turns[len(turns)-1]
	sessDir := filepath.Dir(turn)
	if sess, err := runlog.ReadSession(filepath.Dir(sessDir), filepath.Base(sessDir), now); err == nil {
		for _, t := range sess.Turns {
			if samePath(t.Dir, turn) && t.Status == runlog.StatusRunning {
				return nil, exitf(ExitConfig, "%s is running (its log was written moments ago): wait for it to end, or stop that process first", turn)
			}
		}
	}
	it, err := runlog.ReadInterrupted(turn)
	switch {
	case errors.Is(err, runlog.ErrFinished):
		id := filepath.Base(sessDir)
		note := ""
		if fixed, _ := runlog.RepairFinished(turn, now); fixed {
			note = " (its status.json and metadata.json were behind the log, killed right at its end, and are brought up to date)"
		}
		return nil, exitf(ExitConfig, "%s: %v%s; to ask a follow-up in that session: massgen --session-id %s \"question\"", turn, errors.Unwrap(err), note, id)
	case err != nil:
		return nil, exitf(ExitConfig, "massgen resume %s: %v", arg, err)
	}
	return it, nil
}

func isDirPath(p string) bool {
	info, err := os.Stat(p)
	return err == nil && info.IsDir()
}

// resumingNote says what a resume takes up.
func resumingNote(it *runlog.Interrupted) string {
	last := it.Events[len(it.Events)-1]
	how := "its process was killed or crashed"
	if it.Previous != "killed" {
		how = "it was " + it.Previous
	}
	s := it.State
	what := fmt.Sprintf("%s, %s", plural(s.Totals.Answers, "answer"), plural(currentVotes(s), "current vote"))
	if s.Final != nil {
		what += ", the final answer written"
	} else if s.CoordinationEnded {
		what += ", coordination over"
	}
	note := fmt.Sprintf("resuming %s turn %d (%s) after event %d (%s): %s", filepath.Base(filepath.Dir(it.Dir)), s.Turn, how, last.Seq, last.Payload.Type(), what)
	if it.Dropped != "" {
		note += "; " + it.Dropped
	}
	return note
}

func currentVotes(s *readmodel.State) int {
	n := 0
	for _, a := range s.Agents {
		if a.Vote != nil && a.Vote.Version == s.Version && !a.Dead {
			n++
		}
	}
	return n
}

// resumeTurn runs the resumed turn, and then, when the command line asked one, the question
// as the session's next turn.
func (s *sessionFlags) resumeTurn(runTurn func(app.Options) (app.Result, error)) (app.Result, error) {
	fmt.Fprintf(s.stderr, "massgen: %s\n", resumingNote(s.resume))
	res, err := runTurn(app.Options{Question: s.resume.State.Question, Resume: s.resume})
	if err != nil || s.then == "" || res.ExitCode != ExitOK {
		return res, err
	}
	sessDir := filepath.Dir(s.resume.Dir)
	sess, err := runlog.ReadSession(filepath.Dir(sessDir), filepath.Base(sessDir), s.now())
	if err != nil {
		return res, exitf(ExitExecution, "%v", err)
	}
	if s.plan, err = runlog.Continue(sess); err != nil {
		return res, exitf(ExitExecution, "%v", err)
	}
	s.resume = nil
	return s.once(s.then, runTurn)
}
