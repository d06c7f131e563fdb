// Package cli is the massgen command line: flags, the wiring of config, providers, engine and
// views, and the exit codes. cmd/massgen only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"massgen/internal/event"
	"massgen/internal/termtext"
	"massgen/internal/view"
)

// Main runs the command line and returns the process exit code. Ctrl-C (or SIGTERM) cancels
// the session, which then ends with exit 4 after writing what it has; a second one kills the
// process.
func Main(args []string, stdout, stderr io.Writer) int {
	// Some SDKs (genai) write to the standard logger; that would tear through the live view.
	log.SetOutput(io.Discard)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal gets the default behaviour
	}()
	defer stop()
	return Execute(ctx, args, os.Stdin, stdout, stderr)
}

// Execute runs the command line under ctx and returns the exit code. stdin feeds the
// interactive mode and the questions of --init.
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Errors and warnings quote file names, servers and models: nothing on stderr may drive
	// the terminal. (The live view, on stdout, sanitises its own text.)
	stderr = termtext.NewWriter(stderr)
	root := newRoot(stdin, stdout, stderr)
	// Before any command does anything: one that needs Temporal runs in massgen-temporal when
	// this build has no Temporal client.
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return handOffTemporal(cmd, args) }
	// Last, so that every flag a command registered wins; the MassGen flags left over are
	// refused by name.
	addUnbuiltFlags(root.Flags())
	root.SetArgs(joinOptionalValues(root, args))
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code, msg := ExitConfig, err.Error() // flag and argument errors from cobra are usage errors
	var ee *exitError
	if errors.As(err, &ee) {
		code, msg = ee.code, ""
		if ee.err != nil {
			msg = ee.err.Error()
		}
	}
	if msg != "" {
		fmt.Fprintf(stderr, "massgen: %s\n", msg)
	}
	if w := automationWriter(cmd, stdout, stderr); w != nil && (ee == nil || !ee.reported) {
		// Every automation line is KEY: value, an error included, also when the run stopped
		// before its session (and so its automation view) started.
		if ee != nil && ee.summary != "" {
			msg = ee.summary
		}
		fmt.Fprintln(w, termtext.Clean(view.ErrorLine(exitStatus(code), code, msg)))
	}
	return code
}

// automationWriter is where cmd's automation lines go when it was asked for them (--automation:
// stdout; --stream-events: stderr, since stdout carries the events), else nil.
func automationWriter(cmd *cobra.Command, stdout, stderr io.Writer) io.Writer {
	on := func(name string) bool {
		f := cmd.Flags().Lookup(name)
		return f != nil && f.Value.String() == "true"
	}
	switch {
	case cmd == nil:
	case on("stream-events"):
		return stderr
	case on("automation"):
		return stdout
	}
	return nil
}

// exitStatus names an exit code as an automation ERROR: line does.
func exitStatus(code int) string {
	switch code {
	case ExitConfig:
		return "configuration error"
	case ExitTimeout:
		return event.StatusTimeout
	case ExitInterrupted:
		return event.StatusInterrupted
	}
	return event.StatusFailed
}

const rootLong = `massgen runs a team of LLM agents on the same question. Each writes an answer, reads the
others' answers (anonymised as agent1, agent2, ...), improves on them or votes for the best;
the most-voted agent presents the final answer.

Try it offline with the scripted demo team:
  massgen --config @examples/demo "What is the capital of France?"
Without a question it asks for one, turn after turn, carrying the conversation (/help there).
Without --config it uses .massgen/config.yaml, then ~/.config/massgen/config.yaml, then a team
built from the API keys that are set (massgen --init saves one). Built-in examples:
massgen --list-examples, then --config @examples/NAME.

One-word rule: so that a mistyped subcommand never starts a paid run, a question whose first
argument is a single word equal to a subcommand or within a letter or two of one (serv,
replya, Version, viewer) is refused with a did-you-mean. To ask it anyway, end it with '?',
quote the whole question with more words, or put it after --: massgen -- serve.

@path in the question (@src/main.py, @docs/, @"a b.txt", @notes.md:w) shares that file or
folder with every agent, read-only unless :w marks it writable for the final answer; the
question itself is kept as written (\@ is a literal @; e-mail addresses are never taken).
--no-parse-at-references turns this off.

MassGen flags this build does not have (--plan-and-execute, --eval-criteria, --fast, --setup, ...) are
refused by name with what to use instead.

Coding agents: massgen mcp serves the teams as MCP tools (ask_team); massgen eval measures a
team on a dataset.

Exit codes: 0 ok, 1 configuration or usage error, 2 execution error (every agent failed, or no
answer), 3 session timeout (the best answer is still written), 4 interrupted (Ctrl-C; everything
produced so far is kept).`

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	o := &rootOptions{}
	root := &cobra.Command{
		Use:           "massgen [flags] \"question\"",
		Short:         "Several LLM agents answer, read each other's answers, improve them and vote",
		Long:          rootLong,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.dispatch(cmd, args, stdin, stdout, stderr)
		},
	}
	addRootFlags(root, o)
	addSessionFlags(root, &o.run)
	root.AddCommand(newReplay(stdin, stdout))
	root.AddCommand(newServe(stdout, stderr))
	root.AddCommand(newWorker(stdout, stderr))
	root.AddCommand(newEval(stdout, stderr))
	root.AddCommand(newMCP(stdin, stdout, stderr))
	root.AddCommand(newLogs(stdin, stdout))
	root.AddCommand(newMemory(stdout, stderr))
	root.AddCommand(newResume(stdin, stdout, stderr))
	root.AddCommand(newViewer(stdin, stdout, stderr))
	root.AddCommand(newVersion(stdout))
	root.AddCommand(newMan(stdout))
	for _, c := range missingSubcommands {
		root.AddCommand(newMissing(c.name, c.what, c.instead))
	}
	root.SetFlagErrorFunc(flagError)
	setGroupedUsage(root)
	return root
}

// newMissing is a MassGen subcommand this build does not have: it is refused by name, so its
// name never becomes a paid question.
func newMissing(name, what, instead string) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              "MassGen's " + name + " (not supported yet)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(*cobra.Command, []string) error {
			return exitf(ExitConfig, "massgen %s (%s) is not supported yet: %s", name, what, instead)
		},
	}
}

// subcommandNames are the names a first argument is compared with by the one-word rule.
func subcommandNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		names = append(names, c.Name())
		names = append(names, c.Aliases...)
	}
	return names
}
