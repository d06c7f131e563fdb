package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"massgen/internal/config"
)

// listBackends is --list-backends: every backend type a config may name, what this build does
// with it, its default model and the variables its key is read from.
func listBackends(stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tSTATUS\tDEFAULT MODEL\tAPI KEY\tDEFAULT BASE URL")
	for _, name := range config.BackendTypeNames() {
		bt := config.BackendTypes[name]
		status := "supported"
		switch {
		case bt.Refused:
			status = "not supported yet"
		case !bt.Implemented:
			status = "not in this build"
		}
		model := bt.DefaultModel
		switch model {
		case config.CustomModel:
			model = "(model required)"
		case "":
			model = "-"
		}
		key := strings.Join(bt.APIKeyEnv, " or ")
		if key == "" || isLocal(name) {
			key = "none needed" + optional(key)
		}
		base := bt.DefaultBaseURL
		if base == "" {
			base = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, status, model, key, base)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\nUse one:  massgen --backend TYPE --model MODEL \"question\"   or   massgen --init --config-backend TYPE")
	return nil
}

// isLocal are the types that run on the user's machine and accept requests without a key.
func isLocal(name string) bool {
	return slices.Contains([]string{"ollama", "lmstudio", "vllm", "sglang", "scripted"}, name)
}

func optional(key string) string {
	if key == "" {
		return ""
	}
	return " (" + key + " if the server wants one)"
}

// showSchema is --show-schema: every config key this build reads, by section, with its type,
// default and what this build does with it. backend limits the backend keys to one type.
func showSchema(stdout io.Writer, asJSON bool, backend string, withExamples bool) error {
	keys := config.Keys()
	if backend != "" {
		if _, ok := config.BackendTypes[backend]; !ok {
			return exitf(ExitConfig, "--schema-backend %q: no such backend type (massgen --list-backends lists them)", backend)
		}
		keys = slices.DeleteFunc(keys, func(k config.KeyInfo) bool {
			return len(k.Types) > 0 && !slices.Contains(k.Types, backend)
		})
	}
	if asJSON {
		data, err := json.MarshalIndent(keys, "", "  ")
		if err != nil {
			return exitf(ExitExecution, "--show-schema: %v", err)
		}
		fmt.Fprintf(stdout, "%s\n", data)
		return nil
	}
	section := "\x00"
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, k := range keys {
		if k.Section != section {
			section = k.Section
			title := section
			if title == "" {
				title = "top level"
			}
			fmt.Fprintf(tw, "\n%s:\n", title)
		}
		typ := k.Type
		if len(k.Enum) > 0 {
			values := k.Enum
			if len(k.Supported) > 0 {
				values = k.Supported // the values this build runs; the others are refused
			}
			typ = strings.Join(values, "|")
		}
		status := k.Status
		if k.Default != "" {
			status += ", default " + k.Default
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", k.Name, typ, status, k.Doc)
	}
	tw.Flush()
	if withExamples {
		fmt.Fprintln(stdout)
		return listExamples(stdout)
	}
	return nil
}
