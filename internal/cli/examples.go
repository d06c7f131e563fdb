package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"massgen/examples"
	"massgen/internal/config"
)

// loadFile loads a config named by --config or --validate: a file, @examples/NAME, or (when
// no such file exists) a MassGen config path that names a built-in example, such as
// basic/multi/three_agents_default.yaml. note says when a name was taken as an example.
func loadFile(path string) (*config.Config, config.Report, string) {
	if name, ok := strings.CutPrefix(path, "@examples/"); ok {
		ex, err := examples.Lookup(name)
		if err != nil {
			return nil, config.Report{Errors: []config.Issue{{Severity: config.SeverityError, File: path, Message: err.Error()}}}, ""
		}
		cfg, rep := config.Parse("@examples/"+ex.File, ex.Data)
		return cfg, rep, ""
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if ex, ok := exampleByPath(path); ok {
			cfg, rep := config.Parse("@examples/"+ex.File, ex.Data)
			return cfg, rep, fmt.Sprintf("%s is not a file here; using the built-in example @examples/%s (MassGen's %s)", path, ex.Name, path)
		}
	}
	cfg, rep := config.Load(path)
	return cfg, rep, ""
}

// exampleByPath finds the example a missing config path stands for, as MassGen looks a
// missing --config up among its packaged configs: the path must end with the example's name
// or one of its MassGen names (examples/demo.yaml, massgen/configs/basic/multi/
// three_agents_default.yaml). Nothing looser counts: running a config the user did not name
// would be a surprise on the bill.
func exampleByPath(path string) (examples.Example, bool) {
	trimmed, ok := strings.CutSuffix(filepath.ToSlash(path), ".yaml")
	if !ok {
		if trimmed, ok = strings.CutSuffix(filepath.ToSlash(path), ".yml"); !ok {
			return examples.Example{}, false
		}
	}
	for _, ex := range examples.List() {
		for _, n := range append([]string{ex.Name}, ex.Aliases...) {
			if trimmed == n || strings.HasSuffix(trimmed, "/"+n) {
				return ex, true
			}
		}
	}
	return examples.Example{}, false
}

// listExamples is --list-examples.
func listExamples(stdout io.Writer) error {
	fmt.Fprintln(stdout, "Example configs built into massgen:")
	fmt.Fprintln(stdout)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, ex := range examples.List() {
		fmt.Fprintf(tw, "  @examples/%s\t%s\n", ex.Name, ex.Summary)
		detail := "keys: " + ex.Keys
		if len(ex.Aliases) > 0 {
			detail += "; also " + strings.Join(ex.Aliases, ", ")
		}
		fmt.Fprintf(tw, "  \t%s\n", detail)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "Run one:   massgen --config @examples/NAME \"your question\"")
	fmt.Fprintln(stdout, "Copy one:  massgen --example NAME > my-config.yaml")
	return nil
}

// printExample is --example NAME: the file as it is, comments included.
func printExample(name string, stdout io.Writer) error {
	ex, err := examples.Lookup(name)
	if err != nil {
		return exitf(ExitConfig, "--example: %v", err)
	}
	_, err = stdout.Write(ex.Data)
	return err
}
