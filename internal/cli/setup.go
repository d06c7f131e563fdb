package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/private"
)

// setupOptions are --init, --quickstart and --generate-config with their flags: they write a
// config file instead of running one.
type setupOptions struct {
	init, quickstart, headless bool
	generate                   string
	agents                     []string
	count                      int
	backend, model, agentID    string
	contextPath                string
	force                      bool
}

var setupOnlyFlags = []string{"headless", "quickstart-agent", "config-agents", "config-backend", "config-model",
	"config-agent-id", "config-context-path", "force"}

func (s *setupOptions) requested() bool { return s.init || s.quickstart || s.generate != "" }

func (s *setupOptions) flagName() string {
	switch {
	case s.generate != "":
		return "--generate-config"
	case s.quickstart:
		return "--quickstart"
	}
	return "--init"
}

// strayFlags refuses the setup flags given without a setup command.
func (s *setupOptions) strayFlags(f *pflag.FlagSet) error {
	for _, n := range setupOnlyFlags {
		if f.Changed(n) {
			return exitf(ExitConfig, "--%s goes with --init, --quickstart or --generate-config PATH (they write a config)", n)
		}
	}
	return nil
}

// member is one agent of the config to write.
type member struct {
	id, backend, model, effort string
}

// run writes the config. It asks only when it must and may (stdin is a terminal, no
// --headless, no --generate-config): for a backend when no API key is set, and before
// overwriting a file.
func (s *setupOptions) run(cmd *cobra.Command, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := app.LoadDotEnv(stderr); err != nil {
		return exitf(ExitConfig, "%v", err)
	}
	var ask *asker
	if !s.headless && s.generate == "" && isTerminal(stdout, stdin) {
		ask = &asker{in: bufio.NewReader(stdin), out: stdout}
	}
	path := s.outputPath(cmd.Flags().Lookup("config").Value.String(), ask != nil)
	team, keys, err := s.team(ask)
	if err != nil {
		return err
	}
	data := renderConfig(team, keys, s.contextPath, s.flagName(), path)
	if _, rep := config.Parse(path, data); !rep.OK() {
		var lines []string
		for _, is := range rep.Errors {
			is.File, is.Line, is.Column = "", 0, 0
			lines = append(lines, is.String())
		}
		return exitf(ExitConfig, "%s: the config to write would not be valid:\nmassgen: %s", s.flagName(), strings.Join(lines, "\nmassgen: "))
	}
	if _, err := os.Stat(path); err == nil && !s.force {
		if ask == nil {
			return exitf(ExitConfig, "%s already exists: pass --force to overwrite it, or write another file (--generate-config PATH)", path)
		}
		if !ask.yes(fmt.Sprintf("%s already exists. Overwrite it?", path)) {
			return exitf(ExitConfig, "%s kept as it was; nothing written", path)
		}
	}
	// A config may hold keys (api_key): it is the user's alone, as ~/.massgen's files are.
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return exitf(ExitConfig, "cannot create the folder of %s: %v", path, osReason(err))
	}
	if err := private.WriteFile(path, data); err != nil {
		return exitf(ExitConfig, "cannot write %s: %v", path, osReason(err))
	}
	ids := make([]string, len(team))
	for i, m := range team {
		ids[i] = fmt.Sprintf("%s (%s %s)", m.id, m.backend, m.model)
	}
	fmt.Fprintf(stdout, "wrote %s: %s: %s\n", path, plural(len(team), "agent"), strings.Join(ids, ", "))
	for _, m := range team {
		if _, _, err := app.APIKey(config.Backend{Type: m.backend}, os.Getenv); err != nil {
			fmt.Fprintf(stderr, "warning: agent %s: %v\n", m.id, err)
		}
	}
	if filepath.Clean(path) == defaultConfigPath {
		fmt.Fprintln(stdout, "run it: massgen \"your question\"   (massgen reads .massgen/config.yaml by itself)")
	} else {
		fmt.Fprintf(stdout, "run it: massgen --config %s \"your question\"\n", path)
	}
	return nil
}

// outputPath is where the config goes: --generate-config PATH, --config FILE (for a terminal
// quickstart, MassGen takes only its name, under .massgen/), or .massgen/config.yaml.
func (s *setupOptions) outputPath(configFlag string, interactive bool) string {
	switch {
	case s.generate != "":
		return s.generate
	case configFlag == "":
		return defaultConfigPath
	case interactive:
		name := filepath.Base(configFlag)
		if filepath.Ext(name) == "" {
			name += ".yaml"
		}
		return filepath.Join(".massgen", name)
	}
	return configFlag
}

// team decides the agents: --quickstart-agent specs, or --config-backend with
// --config-agents, or the providers whose API keys are set (the team massgen builds without a
// config). keys names the variables that team was built from.
func (s *setupOptions) team(ask *asker) (team []member, keys []string, err error) {
	if s.count < 0 {
		return nil, nil, exitf(ExitConfig, "--config-agents %d: use 1 or more", s.count)
	}
	if len(s.agents) > 0 {
		if s.backend != "" || s.model != "" || s.agentID != "" || s.count != 0 {
			return nil, nil, exitf(ExitConfig, "--quickstart-agent cannot be combined with --config-backend, --config-model, --config-agent-id or --config-agents: it names each agent itself")
		}
		team, err := parseAgentSpecs(s.agents)
		return team, nil, err
	}
	if s.agentID != "" && s.count > 1 {
		return nil, nil, exitf(ExitConfig, "--config-agent-id names the single agent; with --config-agents %d the agents are named TYPE_1 to TYPE_%d", s.count, s.count)
	}
	if s.model != "" && s.backend == "" {
		if s.backend = config.InferType(s.model); s.backend == "" {
			return nil, nil, exitf(ExitConfig, "--config-model %s: add --config-backend TYPE, which cannot be told from the model (massgen --list-backends lists the types)", s.model)
		}
	}
	if s.backend == "" && s.generate != "" {
		return nil, nil, exitf(ExitConfig, "--generate-config needs --config-backend TYPE (and --config-model MODEL unless the type has a default): massgen --generate-config %s --config-backend openai --config-model gpt-5-mini", s.generate)
	}
	if s.backend != "" {
		team, err := s.sameBackend(s.backend, s.model, max(s.count, 1))
		return team, nil, err
	}
	yaml, err := app.DefaultTeam(os.Getenv)
	if err != nil {
		if ask == nil {
			return nil, nil, exitf(ExitConfig, "no API key is set, so there is no team to write: set one (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or XAI_API_KEY, in the environment, ./.env or ~/.massgen/.env), "+
				"or name the agents: --config-backend TYPE [--config-model MODEL] [--config-agents N], or --quickstart-agent backend=TYPE,model=MODEL")
		}
		return s.askTeam(ask)
	}
	cfg, rep := config.Parse("", []byte(yaml))
	if !rep.OK() {
		return nil, nil, exitf(ExitExecution, "the team built from the API keys is not valid: %v", rep.Err())
	}
	var providers []member
	for _, a := range cfg.Agents {
		m := member{backend: a.Backend.Type, model: a.Backend.Model}
		if !slices.ContainsFunc(providers, func(p member) bool { return p.backend == m.backend }) {
			providers = append(providers, m)
		}
		for _, env := range config.BackendTypes[m.backend].APIKeyEnv {
			if os.Getenv(env) != "" && !slices.Contains(keys, env) {
				keys = append(keys, env)
				break
			}
		}
	}
	n := s.count
	if n == 0 {
		n = len(cfg.Agents) // one agent per provider, or three of the only one
	}
	if s.agentID != "" && n != 1 {
		return nil, nil, exitf(ExitConfig, "--config-agent-id names a single agent, and the team from your API keys has %d: add --config-agents 1", n)
	}
	count := map[string]int{}
	for i := range n {
		m := providers[i%len(providers)]
		count[m.backend]++
		m.id = fmt.Sprintf("%s_%d", m.backend, count[m.backend])
		if n == 1 && s.agentID != "" {
			m.id = s.agentID
		}
		team = append(team, m)
	}
	return team, keys, nil
}

// sameBackend is n agents of one backend type.
func (s *setupOptions) sameBackend(backend, model string, n int) ([]member, error) {
	bt, ok := config.BackendTypes[backend]
	if !ok {
		return nil, exitf(ExitConfig, "--config-backend %s: no such backend type (massgen --list-backends lists them)", backend)
	}
	if model == "" {
		if bt.DefaultModel == config.CustomModel || bt.DefaultModel == "" {
			return nil, exitf(ExitConfig, "--config-backend %s has no default model: add --config-model MODEL", backend)
		}
		model = bt.DefaultModel
	}
	team := make([]member, n)
	for i := range team {
		team[i] = member{id: fmt.Sprintf("%s_%d", backend, i+1), backend: backend, model: model}
	}
	if n == 1 && s.agentID != "" {
		team[0].id = s.agentID
	}
	return team, nil
}

// askTeam asks for a backend, a model and a number of agents: the only questions, asked when
// no API key is set.
func (s *setupOptions) askTeam(ask *asker) ([]member, []string, error) {
	fmt.Fprintln(ask.out, "No API key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, XAI_API_KEY), so massgen cannot pick a team for you.")
	backend := ask.line("Backend type (openai, claude, gemini, grok, ollama, ...; massgen --list-backends lists them)", "ollama")
	bt, ok := config.BackendTypes[backend]
	if !ok {
		return nil, nil, exitf(ExitConfig, "%q is not a backend type (massgen --list-backends lists them)", backend)
	}
	def := bt.DefaultModel
	if def == config.CustomModel {
		def = ""
	}
	model := ask.line("Model", def)
	n, err := strconv.Atoi(ask.line("Number of agents", "3"))
	if err != nil || n < 1 {
		return nil, nil, exitf(ExitConfig, "the number of agents must be a whole number, 1 or more")
	}
	team, err := s.sameBackend(backend, model, n)
	return team, nil, err
}

// parseAgentSpecs reads --quickstart-agent values, MassGen's id=..,backend=..,model=..
// (type= is backend=, reasoning_effort= sets the model's reasoning effort).
func parseAgentSpecs(specs []string) ([]member, error) {
	var team []member
	count := map[string]int{}
	for _, spec := range specs {
		var m member
		for item := range strings.SplitSeq(spec, ",") {
			k, v, ok := strings.Cut(item, "=")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || v == "" {
				return nil, exitf(ExitConfig, "--quickstart-agent %q: write key=value pairs, e.g. id=a,backend=claude,model=claude-sonnet-4-5", spec)
			}
			switch k {
			case "id":
				m.id = v
			case "backend", "type":
				m.backend = v
			case "model":
				m.model = v
			case "reasoning_effort":
				m.effort = v
			default:
				return nil, exitf(ExitConfig, "--quickstart-agent %q: unknown field %q (use id, backend, type, model, reasoning_effort)", spec, k)
			}
		}
		if m.backend == "" {
			return nil, exitf(ExitConfig, "--quickstart-agent %q needs backend=TYPE", spec)
		}
		bt, ok := config.BackendTypes[m.backend]
		if !ok {
			return nil, exitf(ExitConfig, "--quickstart-agent %q: no backend type %q (massgen --list-backends lists them)", spec, m.backend)
		}
		if m.model == "" {
			if bt.DefaultModel == config.CustomModel || bt.DefaultModel == "" {
				return nil, exitf(ExitConfig, "--quickstart-agent %q: backend %s has no default model: add model=MODEL", spec, m.backend)
			}
			m.model = bt.DefaultModel
		}
		if m.effort != "" && bt.Protocol != config.ProtocolResponses && bt.Protocol != config.ProtocolChat {
			return nil, exitf(ExitConfig, "--quickstart-agent %q: reasoning_effort is for OpenAI and Chat Completions backends, not %s", spec, m.backend)
		}
		count[m.backend]++
		if m.id == "" {
			m.id = fmt.Sprintf("%s_%d", m.backend, count[m.backend])
		}
		team = append(team, m)
	}
	return team, nil
}

// renderConfig writes the config as MassGen's quickstart does: the agents, the Textual
// display type (massgen shows its live view for it) and logging on.
func renderConfig(team []member, keys []string, contextPath, by, path string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by massgen %s on %s", by, time.Now().Format("2006-01-02"))
	if len(keys) > 0 {
		fmt.Fprintf(&b, " from the API keys set then (%s)", strings.Join(keys, ", "))
	}
	fmt.Fprintf(&b, ".\n# Check it: massgen --validate %s. Every key: massgen --show-schema.\nagents:\n", path)
	for _, m := range team {
		fmt.Fprintf(&b, "  - id: %s\n    backend:\n      type: %s\n      model: %s\n", strconv.Quote(m.id), m.backend, strconv.Quote(m.model))
		if m.effort != "" {
			if config.BackendTypes[m.backend].Protocol == config.ProtocolResponses {
				fmt.Fprintf(&b, "      reasoning: {effort: %s}\n", strconv.Quote(m.effort))
			} else {
				fmt.Fprintf(&b, "      reasoning_effort: %s\n", strconv.Quote(m.effort))
			}
		}
	}
	if contextPath != "" {
		fmt.Fprintf(&b, "orchestrator:\n  context_paths:\n    - {path: %s, permission: read}\n", strconv.Quote(contextPath))
	}
	b.WriteString("ui:\n  display_type: textual_terminal\n  logging_enabled: true\n")
	return []byte(b.String())
}

// asker asks questions on a terminal.
type asker struct {
	in  *bufio.Reader
	out io.Writer
}

// line asks for a value; an empty answer takes def.
func (a *asker) line(question, def string) string {
	if def != "" {
		fmt.Fprintf(a.out, "%s [%s]: ", question, def)
	} else {
		fmt.Fprintf(a.out, "%s: ", question)
	}
	s, err := a.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return def
	}
	if s = strings.TrimSpace(s); s == "" {
		return def
	}
	return s
}

// yes asks a yes/no question; anything but y or yes is no.
func (a *asker) yes(question string) bool {
	switch strings.ToLower(a.line(question+" [y/N]", "")) {
	case "y", "yes":
		return true
	}
	return false
}
