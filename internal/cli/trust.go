package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"massgen/internal/config"
	"massgen/internal/termtext"
	"massgen/internal/trust"
)

// trustOptions say how a run trusts a config that massgen found rather than the user named:
// a project's .massgen/config.yaml, or the config a log folder names for resume and
// --continue. Such a config is a stranger's until accepted: a cloned repository's or a
// planted log's could start any program the moment massgen runs.
type trustOptions struct {
	// all is --trust: run a found config without asking.
	all bool
	// from names where a config taken from a log folder came from ("" otherwise): set by
	// resume and --continue, which fill configPath (or the quick-setup flags) from the log.
	from string
	// ask puts a question to the person at the terminal; nil when there is none (no
	// terminal, --automation, serve, mcp), and a found config that needs trust is refused.
	ask func(question string) bool
	// store remembers accepted configs; the zero value means trust.DefaultStore().
	store *trust.Store
	// offerFlag says the command has --trust (massgen and resume do; serve, mcp and eval
	// trust only a config named with --config).
	offerFlag bool
}

// foundConfig is a config massgen is about to run without the user having named it.
type foundConfig struct {
	// where says where it was found, for messages; key and content identify it in the store.
	where   string
	key     string
	content []byte
	// name is how the user names it with --config ("" when it is no file).
	name string
}

// check lets cfg run when it needs no trust, is trusted, or the person accepts it; otherwise
// the run stops (exit 1) saying how to trust it.
func (t trustOptions) check(cfg *config.Config, f *foundConfig, stderr io.Writer) error {
	if f == nil {
		return nil
	}
	reasons := trust.Reasons(cfg)
	if len(reasons) == 0 || t.all {
		return nil
	}
	store := t.storeOrDefault()
	if store.Trusted(f.key, f.content) {
		return nil
	}
	var list strings.Builder
	for _, r := range reasons {
		fmt.Fprintf(&list, "  - %s\n", termtext.Clean(r)) // the config's own text: no escapes
	}
	if t.ask == nil {
		var ways []string
		if t.offerFlag {
			ways = append(ways, "pass --trust")
		}
		if f.name != "" {
			ways = append(ways, "name it: --config "+f.name)
		}
		how := strings.Join(ways, ", or ")
		return exitf(ExitConfig, "%s was found, not named by you, and it would:\n%smassgen runs it only once you trust it: read it, then %s",
			f.where, list.String(), how)
	}
	q := fmt.Sprintf("%s was found, not named by you, and it would:\n%sRun it, and trust it until it changes? [y/N] ", f.where, list.String())
	if !t.ask(q) {
		return exitf(ExitConfig, "not trusted, nothing was run: %s stays untrusted until you answer y", f.where)
	}
	if err := store.Remember(f.key, f.content); err != nil {
		fmt.Fprintf(stderr, "warning: %v; massgen will ask again next time\n", err)
	}
	return nil
}

// vouch remembers a config the user named with --config as trusted, so that --continue and
// resume of its sessions, which find it in the log, run it without asking while it is
// unchanged. It is best effort: without a writable home they ask.
func (t trustOptions) vouch(o runOptions, cfg *config.Config) {
	if o.configPath == "" || t.from != "" || cfg.Path == "" || strings.HasPrefix(cfg.Path, "@") || len(trust.Reasons(cfg)) == 0 {
		return
	}
	f, err := fileConfig(cfg.Path, cfg.Path)
	if err != nil {
		return
	}
	store := t.storeOrDefault()
	if !store.Trusted(f.key, f.content) {
		_ = store.Remember(f.key, f.content)
	}
}

func (t trustOptions) storeOrDefault() trust.Store {
	if t.store != nil {
		return *t.store
	}
	return trust.DefaultStore()
}

// found describes the config cfg when massgen found it by itself and nothing vouches for it:
// nil for a config the user named, their own ~/.config/massgen/config.yaml, and the examples
// built into massgen. o.configPath "" means loadConfig looked in the default places.
func (t trustOptions) found(o runOptions, cfg *config.Config) (*foundConfig, error) {
	builtIn := strings.HasPrefix(cfg.Path, "@")
	switch {
	case builtIn:
		return nil, nil
	case o.configPath == "" && t.from == "" && o.backend == "" && o.model == "":
		if cfg.Path == "" || !samePath(cfg.Path, defaultConfigPath) {
			return nil, nil // the user's own config, or the team built from the keys
		}
		return fileConfig(cfg.Path, "the config "+defaultConfigPath+" in this folder")
	case t.from == "":
		return nil, nil
	case cfg.Path != "":
		return fileConfig(cfg.Path, fmt.Sprintf("the config %s, which %s names,", cfg.Path, t.from))
	case o.backend == "" && o.model == "":
		return nil, nil // the team built from the keys, built again
	}
	// The quick setup a log recorded (--backend, --model, --base-url): no file to name.
	spec := fmt.Sprintf("backend=%s model=%s base_url=%s", o.backend, o.model, o.baseURL)
	return &foundConfig{where: "the agent " + t.from + " records (" + spec + ")", key: t.from, content: []byte(spec)}, nil
}

func fileConfig(path, where string) (*foundConfig, error) {
	content, err := os.ReadFile(path)
	if err != nil {
		return nil, exitf(ExitConfig, "%s: %v", where, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, exitf(ExitConfig, "%s: %v", where, err)
	}
	return &foundConfig{where: where, key: abs, content: content, name: path}, nil
}

// terminalPrompt asks the person at the terminal stdin a yes/no question on out; nil when
// stdin is no terminal. Reading gives up with ctx (Ctrl-C), which counts as no.
func terminalPrompt(ctx context.Context, stdin io.Reader, out io.Writer) func(string) bool {
	read := terminalReader(stdin)
	if read == nil {
		return nil
	}
	return func(q string) bool {
		fmt.Fprint(out, q)
		line, ok := read(ctx, func() bool { return ctx.Err() != nil })
		if !ok {
			fmt.Fprintln(out)
			return false
		}
		l := strings.ToLower(strings.TrimSpace(line))
		return l == "y" || l == "yes"
	}
}
