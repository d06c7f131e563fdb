package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// turnPrep holds what every turn of a run shares: the config with the command line applied,
// and where the views and the answer go.
type turnPrep struct {
	o       runOptions
	cfg     *config.Config
	stderr  io.Writer
	out     string // --output-file, absolute ("" for none)
	lines   io.Writer
	display string
}

// config returns the config of a turn asking q: the run's, plus the files q refers to.
func (p turnPrep) config(q string) (*config.Config, error) {
	if p.o.noAtRefs {
		return p.cfg, nil
	}
	refs := parseAtRefs(q)
	if len(refs) == 0 {
		return p.cfg, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return nil, exitf(ExitConfig, "cannot tell the current directory for the @paths of the question: %v", err)
	}
	home, _ := os.UserHomeDir()
	paths, err := resolveAtRefs(refs, dir, home)
	if err != nil {
		return nil, &exitError{code: ExitConfig, err: err}
	}
	var shown []string
	for _, c := range paths {
		perm := "read-only"
		if c.Write {
			perm = "writable"
		}
		shown = append(shown, fmt.Sprintf("%s (%s)", c.Path, perm))
	}
	fmt.Fprintf(p.stderr, "context paths from the question: %s\n", strings.Join(shown, ", "))
	cfg := *p.cfg
	cfg.Orchestrator.ContextPaths = mergeContextPaths(p.cfg.Orchestrator.ContextPaths, paths)
	return &cfg, nil
}

// question is the question as the agents read it.
func (p turnPrep) question(q string) string {
	if p.o.noAtRefs {
		return q
	}
	return unescapeAt(q)
}

// sinks are the views of a turn without the live view.
func (p turnPrep) sinks(stdout io.Writer) []event.Sink {
	switch {
	case p.o.streamEvents:
		return []event.Sink{newStreamSink(stdout), view.NewAutomation(p.lines)}
	case p.display == "silent":
		return []event.Sink{view.NewAutomation(stdout)}
	}
	return []event.Sink{view.NewPlain(stdout)}
}

// finish reports what a plain or automation view does not: unwritable log files, the answer
// file and, for people, where the logs are.
func (p turnPrep) finish(res app.Result, stdout io.Writer) error {
	if res.CloseErr != nil {
		fmt.Fprintf(p.stderr, "massgen: some log files could not be written: %v\n", res.CloseErr)
	}
	if p.out != "" && res.FinalAnswer != "" {
		if err := writeOutputFile(p.out, res.FinalAnswer); err != nil {
			return err
		}
		if p.display == "silent" {
			fmt.Fprintf(p.lines, "OUTPUT_FILE: %s\n", p.out)
		} else {
			fmt.Fprintf(stdout, "answer written to %s\n", p.out)
		}
	}
	if p.display != "silent" && res.Dir != "" {
		fmt.Fprintf(stdout, "logs: %s\n", res.Dir)
	}
	return nil
}
