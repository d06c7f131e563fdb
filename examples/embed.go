// Package examples holds the example configs built into the massgen binary: `massgen
// --list-examples` lists them, `--example NAME` prints one and `--config @examples/NAME` runs
// one. Every file here is embedded, so what the binary offers is exactly this folder.
package examples

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"massgen/internal/suggest"
)

//go:embed *.yaml
var files embed.FS

// Example is one embedded config.
type Example struct {
	// Name is the file name without .yaml: what @examples/NAME and --example NAME take.
	Name string
	// File is the embedded file name.
	File string
	// Aliases are MassGen's names for the same setup (its configs/ folder paths, such as
	// basic/multi/three_agents_default), so commands copied from MassGen's docs resolve.
	Aliases []string
	// Summary is the first line of the file's header comment.
	Summary string
	// Keys is the header's "# Keys:" line: the API keys the example needs ("none" when it
	// runs without one).
	Keys string
	// Data is the file's content.
	Data []byte
}

// massgenNames maps an example to MassGen's own names for it. Only configs that are the same
// setup are aliased: a MassGen name never resolves to something that only looks alike.
var massgenNames = map[string][]string{
	"single_openai":        {"basic/single/single_gpt5nano", "providers/openai/gpt5_nano"},
	"single_claude":        {"providers/claude/claude"},
	"three_agents_default": {"basic/multi/three_agents_default"},
	"local_vllm":           {"basic/multi/two_qwen_vllm"},
	"task_planning":        {"tools/planning/simple_task_planning"},
}

// List returns every example, sorted by name.
func List() []Example {
	entries, err := fs.ReadDir(files, ".")
	if err != nil { // cannot happen: the directory is embedded
		return nil
	}
	var out []Example
	for _, e := range entries {
		data, err := files.ReadFile(e.Name())
		if err != nil {
			continue
		}
		name := strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		ex := Example{Name: name, File: e.Name(), Aliases: massgenNames[name], Data: data}
		ex.Summary, ex.Keys = header(data)
		out = append(out, ex)
	}
	slices.SortFunc(out, func(a, b Example) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// header reads the first comment line and the "# Keys:" line of a file.
func header(data []byte) (summary, keys string) {
	for i, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		text := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		if i == 0 {
			summary = text
		}
		if k, ok := strings.CutPrefix(text, "Keys:"); ok {
			keys = strings.TrimSpace(k)
		}
	}
	return summary, keys
}

// Lookup finds an example by name. It accepts NAME, @examples/NAME, NAME.yaml, MassGen's
// folder-style names (basic/multi/three_agents_default, also with a massgen/configs/ prefix)
// and the underscore form MassGen's --list-examples prints (basic_multi_three_agents_default).
// A name that matches nothing exactly resolves when it is part of exactly one example's name
// or alias, as MassGen's @examples/ lookup does; several such matches are an error that
// lists them.
func Lookup(name string) (Example, error) {
	key := normalize(name)
	all := List()
	for _, ex := range all {
		for _, n := range names(ex) {
			if n == key {
				return ex, nil
			}
		}
	}
	var found []Example
	for _, ex := range all {
		if key != "" && slices.ContainsFunc(names(ex), func(n string) bool { return strings.Contains(n, key) }) {
			found = append(found, ex)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		if near := closestExample(key, all); near != "" {
			return Example{}, fmt.Errorf("no example is called %q: did you mean @examples/%s? (massgen --list-examples lists them)", name, near)
		}
		return Example{}, fmt.Errorf("no example is called %q: massgen --list-examples lists them", name)
	}
	matches := make([]string, len(found))
	for i, ex := range found {
		matches[i] = ex.Name
	}
	return Example{}, fmt.Errorf("example %q is ambiguous: it matches %s; name one of them", name, strings.Join(matches, ", "))
}

// closestExample is the name of the example whose name or alias is nearest to key, when key
// looks like a typo of it ("dmeo" for demo); "" otherwise.
func closestExample(key string, all []Example) string {
	var keys []string
	owner := map[string]string{}
	for _, ex := range all {
		for _, n := range names(ex) {
			keys = append(keys, n)
			owner[n] = ex.Name
		}
	}
	return owner[suggest.Closest(key, keys)]
}

// names are the keys an example is found under, normalised.
func names(ex Example) []string {
	out := []string{ex.Name}
	for _, a := range ex.Aliases {
		out = append(out, a, strings.ReplaceAll(a, "/", "_"))
	}
	return out
}

func normalize(name string) string {
	n := strings.TrimSpace(name)
	n = strings.TrimPrefix(n, "@examples/")
	n = strings.TrimPrefix(n, "massgen/configs/")
	n = strings.TrimPrefix(n, "configs/")
	for _, ext := range []string{".yaml", ".yml"} {
		n = strings.TrimSuffix(n, ext)
	}
	return n
}
