package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"massgen/internal/runlog"
	"massgen/internal/termtext"
	"massgen/internal/tui"
	"massgen/internal/view"
)

func newReplay(stdin io.Reader, stdout io.Writer) *cobra.Command {
	var table, live bool
	var speed float64
	cmd := &cobra.Command{
		Use:   "replay [LOGDIR]",
		Short: "Print a finished session again from its events.jsonl",
		Long: `replay re-renders a session from its event log alone. LOGDIR is a log_<timestamp> folder
(every turn is replayed) or one of its turn_<n> folders; without it, the newest session under
.massgen/massgen_logs. --live plays it through the live terminal view at its recorded pace
(--speed 4: four times faster; 0: as fast as possible), turn after turn, each turn's final
screen left on the terminal; q stops the whole replay.
A session whose process died is replayed as far as its log goes, then a warning says it did
not finish (the exit code is still 0).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			turns, err := replayTurns(args) // logs.go: LOGDIR, or the newest session
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			if speed < 0 {
				return exitf(ExitConfig, "--speed must be 0 (as fast as possible) or more")
			}
			if live && !isTerminal(stdout, stdin) {
				return exitf(ExitConfig, "--live needs a terminal; without it replay prints the session as text")
			}
			for i, dir := range turns {
				turn, err := runlog.ReadTurn(dir)
				if err != nil {
					return exitf(ExitExecution, "%v", err)
				}
				events := turn.Events
				if len(turns) > 1 {
					if i > 0 {
						fmt.Fprintln(stdout)
					}
					fmt.Fprintf(termtext.NewWriter(stdout), "== %s\n", dir)
				}
				if live {
					// Every turn but the last moves on by itself, its final screen left on the
					// terminal; q stops the whole replay, not only the turn it is in.
					opts := tui.Options{Input: stdin, Output: stdout, Leave: i < len(turns)-1}
					err := tui.Replay(cmd.Context(), events, speed, opts)
					switch {
					case errors.Is(err, tui.ErrReplayStopped):
						return nil
					case err != nil && cmd.Context().Err() == nil:
						return exitf(ExitExecution, "live view: %v", err)
					}
				} else {
					p := view.NewPlain(stdout)
					for _, e := range events {
						p.Handle(e)
					}
					if table {
						// The table quotes answers and vote reasons, which models wrote.
						fmt.Fprint(termtext.NewWriter(stdout), runlog.FormatTable(events))
					}
				}
				// A crashed session replays as far as its log goes, then says so on a line of its
				// own (the replay may have stopped mid-line); the exit code stays 0.
				if turn.Incomplete != "" {
					fmt.Fprintf(stdout, "\nwarning: %s\n", turn.Incomplete)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&table, "table", false, "also print the coordination table")
	cmd.Flags().BoolVar(&live, "live", false, "play the session through the live terminal view")
	cmd.Flags().Float64Var(&speed, "speed", 1, "with --live: pace relative to the recording (0: as fast as possible)")
	return cmd
}
