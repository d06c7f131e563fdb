package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"massgen/internal/app"
	"massgen/internal/memory"
	"massgen/internal/termtext"
)

// memoryFlags select the store and the memories a memory subcommand works on.
type memoryFlags struct {
	store, agent, session, team, model string
	asJSON                             bool
}

func (f *memoryFlags) open(stderr io.Writer) (*memory.Store, error) {
	dir := f.store
	if dir == "" {
		var err error
		if dir, err = app.StoreDir(); err != nil {
			return nil, exitf(ExitConfig, "%v", err)
		}
	}
	st, opened, err := memory.Open(dir, time.Now())
	if err != nil {
		return nil, exitf(ExitExecution, "%v", err)
	}
	if opened.SetAside != "" {
		fmt.Fprintf(stderr, "warning: the memory store %s could not be read (%v); it was moved to %s\n", dir, opened.Err, opened.SetAside)
	}
	return st, nil
}

func (f *memoryFlags) keep(m memory.Memory) bool {
	return (f.agent == "" || m.Agent == f.agent) && (f.session == "" || m.Session == f.session) &&
		(f.team == "" || m.Team == f.team) && (f.model == "" || m.Model == f.model)
}

func newMemory(stdout, stderr io.Writer) *cobra.Command {
	var mf memoryFlags
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "List, search and forget what agents remembered (persistent memory)",
		Long: `The facts persistent memory (memory: {enabled: true}) stored, kept in ~/.massgen/memory
unless the config names another store (persistent_memory.qdrant.path; --store here).

  massgen memory list [--agent A] [--session S]   every memory, oldest first
  massgen memory search WORDS [--limit N]         memories holding the words, best first
  massgen memory forget ID... | --agent A | --session S | --all

search matches words, offline and free; agents retrieve memories by meaning, through their
provider's embeddings.`,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&mf.store, "store", "", "the store's folder `DIR` (default ~/.massgen/memory)")
	pf.StringVar(&mf.agent, "agent", "", "only this agent's memories")
	pf.StringVar(&mf.session, "session", "", "only this session's memories (session_name, or the log session)")
	pf.StringVar(&mf.team, "team", "", "only this team's memories (its config file)")
	pf.StringVar(&mf.model, "model", "", "only the memories of this embedding model (type/model)")
	pf.BoolVar(&mf.asJSON, "json", false, "print JSON")

	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "Every memory, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := mf.open(stderr)
			if err != nil {
				return err
			}
			return printMemories(stdout, st.List(cmd.Context(), mf.keep), mf.asJSON)
		},
	})

	var limit int
	search := &cobra.Command{
		Use:   "search WORDS",
		Short: "Memories holding the words, best first",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 {
				return exitf(ExitConfig, "--limit %d: use 1 or more", limit)
			}
			st, err := mf.open(stderr)
			if err != nil {
				return err
			}
			return printMemories(stdout, memory.Search(st.List(cmd.Context(), mf.keep), strings.Join(args, " "), limit), mf.asJSON)
		},
	}
	search.Flags().IntVar(&limit, "limit", 10, "at most `N` memories")
	cmd.AddCommand(search)

	var all bool
	forget := &cobra.Command{
		Use:   "forget [ID...]",
		Short: "Delete memories by id, or every memory the filters select",
		RunE: func(cmd *cobra.Command, args []string) error {
			filtered := mf.agent != "" || mf.session != "" || mf.team != "" || mf.model != ""
			if len(args) == 0 && !filtered && !all {
				return exitf(ExitConfig, "name the memories to forget: their ids (massgen memory list), --agent, --session, --team, --model, or --all")
			}
			st, err := mf.open(stderr)
			if err != nil {
				return err
			}
			n, err := st.Forget(cmd.Context(), func(m memory.Memory) bool {
				return (len(args) == 0 || slices.Contains(args, m.ID)) && mf.keep(m)
			})
			if err != nil {
				return exitf(ExitExecution, "%v", err)
			}
			if mf.asJSON {
				return json.NewEncoder(stdout).Encode(map[string]int{"forgotten": n})
			}
			fmt.Fprintf(stdout, "%d memories forgotten\n", n)
			return nil
		},
	}
	forget.Flags().BoolVar(&all, "all", false, "forget every memory of the store")
	cmd.AddCommand(forget)
	return cmd
}

func printMemories(w io.Writer, ms []memory.Memory, asJSON bool) error {
	if asJSON {
		if ms == nil {
			ms = []memory.Memory{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ms)
	}
	if len(ms) == 0 {
		fmt.Fprintln(w, "no memories")
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tSESSION\tTURN\tCREATED\tFACT")
	for _, m := range ms {
		who := m.Agent
		if m.Winner {
			who += " (winner)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", m.ID, termtext.Clean(who), termtext.Clean(m.Session), m.Turn,
			m.Created.Local().Format("2006-01-02 15:04"), termtext.Clean(m.Text))
	}
	return tw.Flush()
}
