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
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"massgen/internal/config"
	"massgen/internal/termtext"
)

// Version is set at build time with -ldflags "-X massgen/internal/cli.Version=...".
var Version = "0.1.0-dev"

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
// interactive mode.
func Execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Errors and warnings quote file names, servers and models: nothing on stderr may drive
	// the terminal. (The live view, on stdout, sanitises its own text.)
	stderr = termtext.NewWriter(stderr)
	root := newRoot(stdin, stdout, stderr)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" && ee.err.Error() != "invalid configuration" {
			fmt.Fprintf(stderr, "massgen: %v\n", ee.err)
		}
		return ee.code
	}
	// Flag and argument errors from cobra are usage errors, like a bad config.
	fmt.Fprintf(stderr, "massgen: %v\n", err)
	return ExitConfig
}

func newRoot(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var o runOptions
	var validate string
	var strict, asJSON, version bool
	root := &cobra.Command{
		Use:   "massgen [flags] \"question\"",
		Short: "Several LLM agents answer, read each other's answers, improve them and vote",
		Long: `massgen runs a team of LLM agents on the same question. Each writes an answer, reads the
others' answers (anonymised as agent1, agent2, ...), improves on them or votes for the best;
the most-voted agent presents the final answer.

Try it offline with the scripted demo team:
  massgen --config examples/demo.yaml "What is the capital of France?"
Without a question it asks for one, turn after turn, carrying the conversation (/help there).

Exit codes: 0 ok, 1 configuration or usage error, 2 execution error (every agent failed, or no
answer), 3 session timeout (the best answer is still written), 4 interrupted (Ctrl-C; everything
produced so far is kept).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case version:
				fmt.Fprintf(stdout, "massgen %s\n", Version)
				return nil
			case validate != "":
				return runValidate(validate, strict, asJSON, stdout)
			case strict || asJSON:
				return exitf(ExitConfig, "--strict and --json go with --validate FILE")
			}
			o.args = os.Args
			question := strings.TrimSpace(strings.Join(args, " "))
			if len(args) > 0 && question == "" {
				return exitf(ExitConfig, "the question is empty: pass a non-empty question, or none for interactive mode")
			}
			return run(cmd.Context(), o, question, stdin, stdout, stderr)
		},
	}
	f := root.Flags()
	f.StringVar(&o.configPath, "config", "", "YAML or JSON config file (MassGen format)")
	f.StringVar(&o.backend, "backend", "", "quick setup without a file: backend type of a single agent")
	f.StringVar(&o.model, "model", "", "quick setup: model of the single agent")
	f.StringVar(&o.baseURL, "base-url", "", "quick setup: base URL of the backend")
	f.StringVar(&o.sysMessage, "system-message", "", "quick setup: system message of the agent")
	f.BoolVar(&o.automation, "automation", false, "print only MassGen's parseable lines (LOG_DIR, STATUS, WINNER, ANSWER_FILE, ...); logging forced on")
	f.BoolVar(&o.noDisplay, "no-display", false, "plain streaming text instead of the live view")
	f.BoolVar(&o.noLogs, "no-logs", false, "write no log directory")
	f.BoolVar(&o.debug, "debug", false, "also write massgen_debug.log with reasoning and every model call")
	f.IntVar(&o.orchestratorTimeout, "orchestrator-timeout", 0, "session timeout in seconds (overrides timeout_settings.orchestrator_timeout_seconds)")
	f.StringVar(&validate, "validate", "", "validate a config file and exit (0 valid, 1 invalid)")
	f.BoolVar(&strict, "strict", false, "with --validate: warnings count as failures")
	f.BoolVar(&asJSON, "json", false, "with --validate: print the report as JSON")
	f.BoolVar(&version, "version", false, "print the version and exit")
	root.AddCommand(newReplay(stdin, stdout))
	root.AddCommand(newServe(stdout, stderr))
	return root
}

func runValidate(path string, strict, asJSON bool, stdout io.Writer) error {
	_, rep := config.Load(path)
	if strict {
		rep.Errors = append(rep.Errors, rep.Warnings...)
		rep.Warnings = nil
	}
	if asJSON {
		fmt.Fprintf(stdout, "%s\n", rep.JSON())
	} else {
		fmt.Fprint(stdout, rep.Text())
	}
	if !rep.OK() {
		return &exitError{code: ExitConfig, err: errors.New("invalid configuration")}
	}
	return nil
}
