package cli

import (
	"github.com/spf13/pflag"
)

// unbuiltFlag is a MassGen flag this build does not have. It is accepted by the parser, so
// that using it says what to do instead of cobra's bare "unknown flag".
type unbuiltFlag struct {
	name    string
	value   bool // takes a value (--plan-depth deep), so the value is not read as the question
	instead string
}

const notYet = " is not supported yet"

// unbuiltFlags are the flags of MassGen's main parser (latest.md section 2) that massgen
// refuses. A flag massgen builds must not be here (TestUnbuilt_NoneIsBuilt): its entry would
// be dead, and would say "not supported yet" in the help of a flag that works.
var unbuiltFlags = []unbuiltFlag{
	{"select", false, "--select (pick a config from a menu)" + notYet + ": massgen --list-examples lists the built-in configs; run one with --config @examples/NAME"},
	{"textual-serve", false, "--textual-serve (the terminal UI in a browser)" + notYet + ": massgen --web serves massgen's web dashboard"},
	{"textual-serve-port", true, "--textual-serve-port goes with --textual-serve, which" + notYet + ": massgen --web --web-port PORT serves the web dashboard"},
	{"save-streaming-buffers", false, "--save-streaming-buffers" + notYet + ": every streamed chunk is in the log folder's events.jsonl, and --debug logs every model call"},
	{"logfire", false, "--logfire (Logfire tracing)" + notYet + ": --debug writes every model call to massgen_debug.log, and events.jsonl records the whole session"},
	{"web-quickstart", false, "--web-quickstart (setup in a browser)" + notYet + ": massgen --quickstart writes a config from the API keys that are set, then massgen --web serves it"},
	{"web-review", false, "--web-review (approving git diffs in the browser)" + notYet + ": context paths marked writable (@path:w, --cwd-context rw) are written by the final presenter only"},
	{"step", false, "--step (one agent, one step)" + notYet + ": run the whole team with --automation"},
	{"session-dir", true, "--session-dir goes with --step, which" + notYet + ": run the whole team with --automation"},
	{"plan-thoroughness", true, "--plan-thoroughness (a thorough planning prompt)" + notYet + ": use --plan with --plan-depth deep, and say in the question what the plan must weigh"},
	{"plan-chunks", true, "--plan-chunks (plans executed one chunk per run)" + notYet + ": --execute-plan carries out the whole plan in one run; make smaller plans with --plan-depth shallow"},
	{"plan-and-execute", false, "--plan-and-execute" + notYet + ": run massgen --plan \"question\", check plan.json, then massgen --execute-plan latest"},
	{"spec", false, "--spec (requirements specification mode)" + notYet + ": ask for a specification in the question itself"},
	{"execute-spec", true, "--execute-spec" + notYet + ": pass the specification with @SPEC_FILE in the question"},
	{"eval-criteria", true, "--eval-criteria (checklist-gated voting)" + notYet + ": put the criteria in the question, and tune votes with orchestrator.voting_sensitivity"},
	{"checklist-criteria-preset", true, "--checklist-criteria-preset (checklist-gated voting)" + notYet + ": put the criteria in the question, and tune votes with orchestrator.voting_sensitivity"},
	{"config-docker", false, "--config-docker" + notYet + ": commands run on this machine, confined to the agent's workspace (enable_mcp_command_line)"},
	{"setup", false, "--setup (the API key wizard)" + notYet + ": put keys in ./.env or ~/.massgen/.env (OPENAI_API_KEY=..., ANTHROPIC_API_KEY=...), then massgen --init writes a config from them"},
	{"setup-skills", false, "--setup-skills" + notYet + ": skills are not part of this build"},
	{"setup-docker", false, "--setup-docker" + notYet + ": this build runs no Docker images"},
	{"rate-limit", false, "--rate-limit (rate_limits.yaml)" + notYet + ": rate-limited calls (HTTP 429) are retried with backoff"},
	{"fast", false, "--fast" + notYet + ": it tunes checklist-gated rounds (fast_iteration_mode, max_verifications_per_round), which this build does not have; --quick is the speed preset here"},
}

// serveUnbuiltFlags are the flags of MassGen's serve subcommand that massgen serve refuses.
var serveUnbuiltFlags = []unbuiltFlag{
	{"reload", false, "--reload (restart the server when MassGen's Python code changes, a development aid)" + notYet +
		": massgen serve reads its configs when it starts; restart it after changing one"},
}

// addUnbuiltFlags registers the refused flags that nothing else registered, hidden from help.
func addUnbuiltFlags(f *pflag.FlagSet) { addUnbuilt(f, unbuiltFlags) }

func addUnbuilt(f *pflag.FlagSet, flags []unbuiltFlag) {
	for _, u := range flags {
		if f.Lookup(u.name) != nil {
			continue
		}
		if u.value {
			f.String(u.name, "", u.instead)
		} else {
			f.Bool(u.name, false, u.instead)
		}
		_ = f.SetAnnotation(u.name, unbuiltAnnotKey, []string{u.instead})
		_ = f.MarkHidden(u.name)
	}
}

const unbuiltAnnotKey = "massgen_unbuilt"

// missingSubcommands are MassGen's subcommands this build does not have: each is refused by
// name (newMissing), so its name never becomes a paid question. A subcommand massgen builds
// must not be here (TestUnbuilt_NoneIsBuilt).
var missingSubcommands = []struct{ name, what, instead string }{
	{"export", "upload a session to a GitHub Gist for MassGen-Viewer",
		"sessions stay in the log folder: massgen serve --config FILE shows and replays them in a browser"},
	{"shares", "list or delete the sessions shared with massgen export",
		"nothing is shared from this build (massgen export is not supported either)"},
}

// refuseUnbuilt returns the refusal of the first unbuilt flag that was given.
func refuseUnbuilt(f *pflag.FlagSet) error {
	var err error
	f.Visit(func(fl *pflag.Flag) {
		if msg := fl.Annotations[unbuiltAnnotKey]; err == nil && len(msg) == 1 {
			err = exitf(ExitConfig, "%s", msg[0])
		}
	})
	return err
}
