package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"massgen/internal/suggest"
)

// rootOptions are the flags of the root command.
type rootOptions struct {
	run runOptions

	validate                   optionalValue // --validate [FILE]; the file may be positional
	strict, asJSON, version    bool
	listExamples, listBackends bool
	example                    string
	showSchema, withExamples   bool
	schemaBackend              string
	setup                      setupOptions
}

// Help groups, in the order --help shows them.
const (
	groupRun      = "Team and question"
	groupDisplay  = "Display and logs"
	groupAuto     = "Automation (scripts and other agents)"
	groupModes    = "Modes (MassGen's mode flags)"
	groupWeb      = "Web dashboard"
	groupSetup    = "Writing a config"
	groupList     = "Examples, validation and information"
	groupOther    = "Other flags"
	groupAnnotKey = "massgen_help_group"
)

var groupOrder = []string{groupRun, groupDisplay, groupAuto, groupModes, groupWeb, groupSetup, groupList, groupOther}

// optionalAlone is pflag's value for an optional-value flag given alone.
const optionalAlone = "true"

// optionalValue is a flag whose value may be left out (--single-agent [ID]).
type optionalValue struct {
	set   bool
	value string // "" when given alone
}

func (v *optionalValue) String() string { return v.value }
func (v *optionalValue) Set(s string) error {
	v.set = true
	if s != optionalAlone {
		v.value = s
	}
	return nil
}

// Type is "bool" so that help shows `--single-agent ID` and nothing of the switch's value.
func (v *optionalValue) Type() string { return "bool" }

func addRootFlags(root *cobra.Command, o *rootOptions) {
	f := root.Flags()
	r := &o.run
	in := func(group string, names ...string) {
		for _, n := range names {
			_ = f.SetAnnotation(n, groupAnnotKey, []string{group})
		}
	}
	f.StringVar(&r.configPath, "config", "", "YAML or JSON config `FILE` (MassGen format), or @examples/NAME")
	f.StringVar(&r.backend, "backend", "", "quick setup without a file: backend `TYPE` of a single agent")
	f.StringVar(&r.model, "model", "", "quick setup: `MODEL` of the single agent")
	f.StringVar(&r.baseURL, "base-url", "", "quick setup: base `URL` of the backend")
	f.StringVar(&r.sysMessage, "system-message", "", "quick setup: system message `TEXT` of the agent")
	f.IntVar(&r.orchestratorTimeout, "orchestrator-timeout", 0, "session timeout in `SECONDS` (overrides timeout_settings.orchestrator_timeout_seconds)")
	f.BoolVar(&r.trust.all, "trust", false, "run a config massgen found (./.massgen/config.yaml, a log folder's for --continue) even if it starts programs or reaches other endpoints, without asking")
	in(groupRun, "config", "backend", "model", "base-url", "system-message", "orchestrator-timeout", "trust")

	f.BoolVar(&r.noDisplay, "no-display", false, "plain streaming text instead of the live view")
	f.StringVar(&r.display, "display", "", "`MODE` rich or textual: the live view (both are massgen's one live view)")
	f.BoolVar(&r.noLogs, "no-logs", false, "write no log directory")
	f.BoolVar(&r.debug, "debug", false, "also write massgen_debug.log with reasoning and every model call")
	in(groupDisplay, "no-display", "display", "no-logs", "debug")

	f.BoolVar(&r.automation, "automation", false, "print only MassGen's parseable lines (LOG_DIR, STATUS, WINNER, ANSWER_FILE, ...); logging forced on")
	f.StringVar(&r.outputFile, "output-file", "", "also write the final answer to `FILE` (its folder is created)")
	f.BoolVar(&r.streamEvents, "stream-events", false, "print every event as a JSON line on stdout (the events.jsonl lines); implies --automation, whose lines go to stderr")
	f.StringVar(&r.cwdContext, "cwd-context", "", "share the current directory with every agent, `MODE` ro|read (read-only) or rw|write (writable for the final answer)")
	f.BoolVar(&r.noAtRefs, "no-parse-at-references", false, "take @words in the question as plain text, not as files to share")
	f.BoolVar(&r.skipAgentSelector, "skip-agent-selector", false, "accepted for MassGen scripts: massgen always exits after the final answer")
	f.StringVar(&r.inboxDir, "inbox-dir", "", "answer the agents' questions and message them by dropping msg_*.json files into `DIR` (automation prints it as RUNTIME_INBOX)")
	in(groupAuto, "automation", "output-file", "stream-events", "cwd-context", "no-parse-at-references", "skip-agent-selector", "inbox-dir")

	f.BoolVar(&r.quick, "quick", false, "one answer per agent, no refinement: independent answers, one vote, synthesized final answer (with --single-agent: no vote, the answer as is)")
	f.Var(&r.singleAgent, "single-agent", "keep only agent `ID` (default: the first agent)")
	f.Lookup("single-agent").NoOptDefVal = optionalAlone
	f.StringVar(&r.coordinationMode, "coordination-mode", "", "`MODE` parallel: every agent answers the whole question and they vote; decomposition: each agent owns a subtask, the presenter integrates the parts")
	f.StringVar(&r.personas, "personas", "", "generate diverse personas in `MODE` perspective|implementation|methodology, or off")
	f.StringVar(&r.broadcast, "broadcast", "", "let agents ask questions with ask_others: `MODE` agents (each other), human (you) or false")
	f.BoolVar(&r.plan, "plan", false, "make a task plan instead of doing the work: the agents answer with a project plan, written to plan.json in the log folder")
	f.StringVar(&r.planDepth, "plan-depth", "", "with --plan: plan size `DEPTH` dynamic (default), shallow (5-10 tasks), medium (20-50) or deep (100-200)")
	f.IntVar(&r.planSteps, "plan-steps", 0, "with --plan: about `N` tasks, instead of --plan-depth's range")
	f.StringVar(&r.executePlan, "execute-plan", "", "carry out a plan made with --plan: `PLAN` latest, a plan.json, or its log folder; a question given too adds instructions")
	in(groupModes, "quick", "single-agent", "coordination-mode", "personas", "broadcast", "plan", "plan-depth", "plan-steps", "execute-plan")

	f.BoolVar(&r.web.on, "web", false, "serve the web dashboard (as massgen serve) and run the question there")
	f.StringVar(&r.web.host, "web-host", "127.0.0.1", "with --web: `HOST` to listen on")
	f.IntVar(&r.web.port, "web-port", 8000, "with --web: `PORT` to listen on")
	f.BoolVar(&r.web.noBrowser, "no-browser", false, "with --web: print the URL instead of opening a browser")
	r.web.token.add(f, "with --web: ", false)
	in(groupWeb, "web", "web-host", "web-port", "no-browser", "token-file", "no-token")
	addTemporalFlags(f, &r.temporal)
	in(groupRun, "temporal", "temporal-namespace", "temporal-task-queue")

	s := &o.setup
	f.BoolVar(&s.init, "init", false, "write a config from the API keys that are set (asks only what it must); default .massgen/config.yaml")
	f.BoolVar(&s.quickstart, "quickstart", false, "the same as --init; with --config FILE, write FILE")
	f.BoolVar(&s.headless, "headless", false, "with --init/--quickstart: never ask, fail instead")
	f.StringArrayVar(&s.agents, "quickstart-agent", nil, "`SPEC` of an agent of the config to write: id=NAME,backend=TYPE,model=MODEL (repeat for more)")
	f.StringVar(&s.generate, "generate-config", "", "write a config to `PATH` without asking, from --config-backend/--config-model")
	f.IntVar(&s.count, "config-agents", 0, "number `N` of agents of the written config")
	f.StringVar(&s.backend, "config-backend", "", "backend `TYPE` of the written config's agents")
	f.StringVar(&s.model, "config-model", "", "`MODEL` of the written config's agents")
	f.StringVar(&s.agentID, "config-agent-id", "", "`ID` of the written config's single agent")
	f.StringVar(&s.contextPath, "config-context-path", "", "a `PATH` the written config shares read-only with every agent")
	f.BoolVar(&s.force, "force", false, "overwrite the config file if it exists")
	in(groupSetup, "init", "quickstart", "headless", "quickstart-agent", "generate-config", "config-agents", "config-backend",
		"config-model", "config-agent-id", "config-context-path", "force")

	f.BoolVar(&o.listExamples, "list-examples", false, "list the example configs built into massgen")
	f.StringVar(&o.example, "example", "", "print example config `NAME` (massgen --example demo > my.yaml)")
	f.BoolVar(&o.listBackends, "list-backends", false, "list the backend types, their default models and API key variables")
	f.BoolVar(&o.showSchema, "show-schema", false, "print every config key, its type and default, and what this build does with it (--json: as JSON)")
	f.StringVar(&o.schemaBackend, "schema-backend", "", "with --show-schema: only the backend keys backend `TYPE` takes")
	f.BoolVar(&o.withExamples, "with-examples", false, "with --show-schema: also list the example configs")
	f.Var(&o.validate, "validate", "validate config `FILE` and exit (0 valid, 1 invalid); the file may also follow the other flags")
	f.Lookup("validate").NoOptDefVal = optionalAlone
	f.BoolVar(&o.strict, "strict", false, "with --validate: warnings count as failures")
	f.BoolVar(&o.asJSON, "json", false, "with --validate or --show-schema: print JSON")
	f.BoolVar(&r.skipValidation, "skip-validation", false, "do not print config warnings (errors still stop the run: it cannot run a config it cannot read)")
	f.BoolVar(&r.strictValidation, "strict-validation", false, "config warnings stop the run (exit 1) before any model is called")
	f.BoolVar(&o.version, "version", false, "print the version and exit")
	in(groupList, "list-examples", "example", "list-backends", "show-schema", "schema-backend", "with-examples", "validate", "strict", "json", "skip-validation",
		"strict-validation", "version")

	// Accepted for MassGen callers (its subruns pass it); there is no session registry here.
	f.BoolVar(&r.noSessionRegistry, "no-session-registry", false, "accepted for MassGen scripts: this build keeps no session registry")
	_ = f.MarkHidden("no-session-registry")
}

// joinOptionalValues rewrites `--single-agent ID` to `--single-agent=ID`, as MassGen's parser
// reads its optional value from the next argument; pflag would take ID as part of the
// question. Only arguments of the root command are rewritten, up to a "--".
func joinOptionalValues(root *cobra.Command, args []string) []string {
	if len(args) > 0 {
		if c, _, err := root.Find(args); err == nil && c != root {
			return args
		}
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		out = append(out, a)
		name, hasValue := strings.CutPrefix(a, "--")
		if !hasValue || strings.Contains(name, "=") {
			continue
		}
		fl := root.Flags().Lookup(name)
		if fl == nil {
			continue
		}
		switch {
		case fl.Name == "single-agent":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				out[len(out)-1] = a + "=" + args[i+1]
				i++
			}
		case fl.NoOptDefVal == "" && i+1 < len(args):
			// A flag's value is never itself a flag to rewrite.
			out = append(out, args[i+1])
			i++
		}
	}
	return out
}

// flagHints say what a flag's value must be, for messages about a bad one.
var flagHints = map[string]string{
	"orchestrator-timeout": "a whole number of seconds",
	"web-port":             "a port number, 1 to 65535",
	"config-agents":        "a whole number of agents",
	"max-sessions":         "a whole number of sessions",
	"speed":                "a number (1: the recorded pace, 4: four times faster, 0: as fast as possible)",
}

// flagError turns pflag's and cobra's flag errors into messages about the flag, without Go's
// parser text: `--orchestrator-timeout abc: must be a whole number of seconds`.
func flagError(cmd *cobra.Command, err error) error {
	var inv *pflag.InvalidValueError
	if errors.As(err, &inv) {
		fl := inv.GetFlag()
		hint := flagHints[fl.Name]
		if hint == "" {
			switch fl.Value.Type() {
			case "int", "int64", "uint":
				hint = "a whole number"
			case "float64", "float32":
				hint = "a number"
			case "bool":
				hint = "true or false (or the flag alone)"
			default:
				hint = "a valid value"
			}
		}
		return exitf(ExitConfig, "--%s %q: must be %s", fl.Name, inv.GetValue(), hint)
	}
	var missing *pflag.NotExistError
	if errors.As(err, &missing) {
		name := missing.GetSpecifiedName()
		if cmd.HasParent() && cmd.Root().Flags().Lookup(name) != nil {
			return exitf(ExitConfig, "--%s is a flag of a massgen run, not of `massgen %s`: subcommands come first and take their own flags (massgen %s --help)",
				name, cmd.Name(), cmd.Name())
		}
		var names []string
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if !fl.Hidden {
				names = append(names, fl.Name)
			}
		})
		if best := suggest.Closest(name, names); best != "" {
			return exitf(ExitConfig, "%v: did you mean --%s? (%s --help lists the flags)", err, best, cmd.CommandPath())
		}
		return exitf(ExitConfig, "%v (%s --help lists the flags)", err, cmd.CommandPath())
	}
	var need *pflag.ValueRequiredError
	if errors.As(err, &need) {
		return exitf(ExitConfig, "--%s needs a value: %s", need.GetSpecifiedName(), need.GetFlag().Usage)
	}
	return exitf(ExitConfig, "%v (massgen --help lists the flags)", err)
}

// setGroupedUsage makes the root's usage list its flags by group; subcommands keep cobra's.
func setGroupedUsage(root *cobra.Command) {
	plain := root.UsageFunc()
	root.SetUsageFunc(func(c *cobra.Command) error {
		if c != root {
			return plain(c)
		}
		w := c.OutOrStderr()
		fmt.Fprintf(w, "Usage:\n  %s\n  %s [command]\n\nCommands:\n", c.UseLine(), c.CommandPath())
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(w, "  %-12s %s\n", sub.Name(), sub.Short)
			}
		}
		groups := map[string]*pflag.FlagSet{}
		c.LocalFlags().VisitAll(func(fl *pflag.Flag) {
			g := groupOther
			if v := fl.Annotations[groupAnnotKey]; len(v) == 1 {
				g = v[0]
			}
			if groups[g] == nil {
				groups[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
				groups[g].SortFlags = false
			}
			groups[g].AddFlag(fl)
		})
		for _, g := range groupOrder {
			if fs := groups[g]; fs != nil && fs.HasAvailableFlags() {
				fmt.Fprintf(w, "\n%s:\n%s", g, fs.FlagUsagesWrapped(100))
			}
		}
		fmt.Fprintf(w, "\nUse \"%s [command] --help\" for more about a command.\n", c.CommandPath())
		return nil
	})
}
