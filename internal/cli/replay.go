package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"massgen/internal/runlog"
	"massgen/internal/view"
)

func newReplay(stdout io.Writer) *cobra.Command {
	var table bool
	cmd := &cobra.Command{
		Use:   "replay LOGDIR",
		Short: "Print a finished session again from its events.jsonl",
		Long: `replay re-renders a session from its event log alone. LOGDIR is a log_<timestamp> folder
(every turn is replayed) or one of its turn_<n> folders.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			turns, err := runlog.FindTurns(args[0])
			if err != nil {
				return exitf(ExitConfig, "%v", err)
			}
			for i, dir := range turns {
				events, _, err := runlog.LoadTurn(dir)
				if err != nil {
					return exitf(ExitExecution, "%v", err)
				}
				if len(turns) > 1 {
					if i > 0 {
						fmt.Fprintln(stdout)
					}
					fmt.Fprintf(stdout, "== %s\n", dir)
				}
				p := view.NewPlain(stdout)
				for _, e := range events {
					p.Handle(e)
				}
				if table {
					fmt.Fprint(stdout, runlog.FormatTable(events))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&table, "table", false, "also print the coordination table")
	return cmd
}
