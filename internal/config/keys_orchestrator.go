package config

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/goccy/go-yaml/ast"

	"massgen/internal/suggest"
)

// Section paths of the schema.
const (
	secRoot        = ""
	secAgent       = "agents[]"
	secBackend     = "agents[].backend"
	secScripted    = "agents[].backend (scripted)"
	secMCP         = "agents[].backend.mcp_servers[]"
	secFault       = "agents[].backend.faults[]"
	secToolCall    = "agents[].backend.tool_calls[]"
	secContextPath = "context_paths[]"
	secOrch        = "orchestrator"
	secCoord       = "orchestrator.coordination"
	secPersona     = "orchestrator.coordination.persona_generator"
	secDecomposer  = "orchestrator.coordination.task_decomposer"
	secDSPy        = "orchestrator.dspy"
	secOrchTimeout = "orchestrator.timeout"
	secTimeouts    = "timeout_settings"
	secUI          = "ui"
)

// sectionTitle names a section in messages and docs.
func sectionTitle(path string) string {
	if path == secRoot {
		return "top level"
	}
	return path
}

var (
	sensitivity = []string{"lenient", "balanced", "strict", "checklist", "checklist_scored", "checklist_gated"}
	// An agent's own sensitivity cannot turn the session's checklist gate on or off: the
	// gate is the session's (one submit_checklist tool, one set of criteria).
	agentSensitivity = []string{"lenient", "balanced", "strict", "checklist", "checklist_scored"}
	// MassGen's voting sensitivities past those this build runs: ROI, sequential and
	// adversarial voting need their own tools and scoring.
	allSensitivity = append(slices.Clone(sensitivity), "roi", "roi_conservative", "roi_balanced", "roi_aggressive",
		"sequential", "adversarial", "consistency", "diversity", "reflective")
	strategies = []string{StrategyWinnerPresent, StrategyWinnerReuse, StrategySynthesize}
)

// needsChecklist is the feature the checklist speed knobs tune.
const needsChecklist = "orchestrator.voting_sensitivity"

func checklist(f func(c *Checklist, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(&t.cfg.Orchestrator.Checklist, v) }
}

func orch(f func(o *Orchestrator, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(&t.cfg.Orchestrator, v) }
}

func coordSub(sec string) func(*walker, *target, field) {
	return func(w *walker, t *target, f field) { w.walk(sec, f, t) }
}

func orchestratorKeys() []Key {
	return []Key{
		{Section: secOrch, Name: "voting_sensitivity", Type: TypeEnum, Enum: allSensitivity, Accept: sensitivity, Default: "lenient",
			Status: Implemented, Since: "0.1.12", Doc: "How critical agents are when voting.",
			Why: "ROI, sequential and adversarial voting are not built",
			set: orch(func(o *Orchestrator, v value) { o.VotingSensitivity = v.s })},
		{Section: secOrch, Name: "answer_novelty_requirement", Type: TypeEnum, Enum: sensitivity, Default: "lenient",
			Status: Implemented, Since: "0.1.12", Doc: "How different a new answer must be from the existing ones.",
			set: orch(func(o *Orchestrator, v value) { o.AnswerNovelty = v.s })},
		{Section: secOrch, Name: "max_new_answers_per_agent", Type: TypeInt, Default: "unlimited", Status: Implemented, Since: "0.1.12",
			Doc: "Cap on the answers each agent may submit.", hint: "use 1 or more, or null for no limit", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.MaxNewAnswersPerAgent = v.n })},
		{Section: secOrch, Name: "max_new_answers_global", Type: TypeInt, Default: "unlimited", Status: Implemented, Since: "0.1.9x",
			Doc: "Cap on the answers of all agents together.", hint: "use 1 or more, or null for no limit", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.MaxNewAnswersGlobal = v.n })},
		{Section: secOrch, Name: "final_answer_strategy", Type: TypeEnum, Enum: strategies, Default: StrategyWinnerPresent,
			Status: Implemented, Since: "0.1.9x", Doc: "How the final answer is made: the winner presents it, the winner's answer is reused as is, or a presenter synthesizes all answers.",
			set: func(_ *walker, t *target, v value) { t.final.strategy = &v }},
		{Section: secOrch, Name: "skip_final_presentation", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.9x",
			Doc: "Reuse the winner's answer without a presentation call (final_answer_strategy: winner_reuse).",
			set: func(_ *walker, t *target, v value) { t.final.skip = &v }},
		{Section: secOrch, Name: "final_presentation", Type: TypeEnum, Enum: []string{"regenerate", "verbatim"}, Default: "regenerate",
			Status: Implemented, Since: "port", Doc: "This port's older spelling of final_answer_strategy: regenerate is winner_present, verbatim is winner_reuse.",
			set: func(_ *walker, t *target, v value) { t.final.presentation = &v }},
		{Section: secOrch, Name: "presenter_agent", Type: TypeString, Status: Implemented, Since: "0.1.48",
			Doc: "Id of the agent that writes the final answer (default: the winner; in decomposition mode the last agent).", ex: "a",
			set: func(_ *walker, t *target, v value) { t.cfg.Orchestrator.PresenterAgent, t.presenterF = v.s, &v.f }},
		{Section: secOrch, Name: "defer_voting_until_all_answered", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.63",
			Doc: "Accept no vote until every live agent has an answer.",
			set: orch(func(o *Orchestrator, v value) { o.DeferVotingUntilAllAnswered = v.b })},
		{Section: secOrch, Name: "disable_injection", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.63",
			Doc: "Deliver new answers to a busy agent on its next turn only, never mid-turn.",
			set: orch(func(o *Orchestrator, v value) { o.DisableInjection = v.b })},
		{Section: secOrch, Name: "skip_voting", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.9x",
			Doc: "No vote round: the winner is chosen without votes.",
			set: orch(func(o *Orchestrator, v value) { o.SkipVoting = v.b })},
		{Section: secOrch, Name: "fairness_enabled", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.49",
			Doc: "Keep fast agents from lapping slow ones.",
			set: orch(func(o *Orchestrator, v value) { o.Fairness.Enabled = v.b })},
		{Section: secOrch, Name: "fairness_lead_cap_answers", Type: TypeInt, Default: "2", Status: Implemented, Since: "0.1.49",
			Doc:  "How many answers an agent may be ahead of the slowest live peer.",
			hint: "use 1 or more (MassGen's 0, strict lockstep, is not supported yet)", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.Fairness.LeadCapAnswers = v.n })},
		{Section: secOrch, Name: "max_midstream_injections_per_round", Type: TypeInt, Default: "2", Status: Implemented, Since: "0.1.49",
			Doc: "Cap on the peer updates delivered to one agent within one turn.", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.Fairness.MaxMidstreamInjectionsPerRound = v.n })},
		{Section: secOrch, Name: "voting_threshold", Type: TypeInt, Default: "5", Status: Implemented, Since: "0.1.49",
			Doc:  "Checklist voting: strictness of the gate, 0 (strictest: vote only when little is left to improve) to 10 (vote once answers are adequate).",
			hint: "use 0 to 10", check: between(0, 10),
			set: orch(func(o *Orchestrator, v value) { n := v.n; o.VotingThreshold = &n })},
		{Section: secOrch, Name: "checklist_require_gap_report", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.9x",
			Doc: "checklist_gated: require a gap report (report_path or report) with every checklist.",
			set: checklist(func(c *Checklist, v value) { c.RequireGapReport = v.b })},
		{Section: secOrch, Name: "gap_report_mode", Type: TypeEnum, Enum: []string{"changedoc", "separate", "none"}, Default: "changedoc",
			Status: Implemented, Since: "0.1.9x", Doc: "checklist_gated: none asks for no gap report; changedoc and separate ask for one, written as a separate report " +
				"(MassGen's changedoc-anchored checklist items are not built; the decision journal itself is, see enable_changedoc).",
			set: checklist(func(c *Checklist, v value) { c.GapReportMode = v.s })},
		{Section: secOrch, Name: "max_checklist_calls_per_round", Type: TypeInt, Default: "1", Status: Implemented, Since: "0.1.9x",
			check: atLeast(1), Doc: "checklist_gated: accepted submit_checklist calls per turn (one more when the answers change).",
			set: checklist(func(c *Checklist, v value) { c.MaxCallsPerRound = v.n })},
		{Section: secOrch, Name: "checklist_first_answer", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.9x",
			Doc: "checklist_gated: allow submit_checklist before the agent's first answer.",
			set: checklist(func(c *Checklist, v value) { c.FirstAnswer = v.b })},
		{Section: secOrch, Name: "allow_midstream_peer_updates_before_checklist_submit", Type: TypeBool, Status: Ignored, Since: "0.1.9x",
			Needs: needsChecklist, Doc: "Checklist voting: deliver peer updates before the first checklist."},
		{Section: secOrch, Name: "defer_peer_updates_until_restart", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.49",
			Doc: "Peers' new answers wait for the agent's next turn instead of reaching it mid-turn (the fairness pause and other mid-turn messages stay, unlike disable_injection).",
			set: orch(func(o *Orchestrator, v value) { o.DeferPeerUpdatesUntilRestart = v.b })},
		{Section: secOrch, Name: "coordination_mode", Type: TypeEnum, Enum: []string{ModeVoting, ModeDecomposition},
			Default: ModeVoting, Status: Implemented, Since: "0.1.48",
			Doc: "voting, or decomposition: each agent owns a subtask (agents[].subtask, else the task decomposer's), shares its work with new_answer, signals it done with stop{summary, status}, and the presenter (presenter_agent, else the last agent) integrates the parts.",
			set: func(_ *walker, t *target, v value) { t.cfg.Orchestrator.CoordinationMode, t.modeF = v.s, &v.f }},
		{Section: secOrch, Name: "end_when_decided", Type: TypeBool, Default: "true", Status: Implemented, Since: "port",
			Doc: "End coordination once the remaining votes can no longer change the winner, instead of waiting for every vote; calls still running are cancelled and billed (saves time and tokens; false waits for every vote, as MassGen does).",
			set: orch(func(o *Orchestrator, v value) { o.EndWhenDecided = v.b })},
		{Section: secOrch, Name: "lazy_start_agents", Type: TypeInt, Default: "0 (all start at once)", Status: Implemented, Since: "port",
			Doc:  "Lazy start: only the first N agents start; the others join one at a time while those in play disagree (adaptive consistency: cheaper on easy questions, slower on hard ones).",
			hint: "use 0 to start every agent at once, or a number of agents below the team's size", check: atLeast(0),
			set: func(_ *walker, t *target, v value) { t.cfg.Orchestrator.LazyStartAgents, t.lazyF = v.n, &v.f }},
		{Section: secOrch, Name: "lazy_start_agreement", Type: TypeInt, Default: "2", Status: Implemented, Since: "port", Needs: "lazy_start_agents",
			Doc:  "Lazy start: how many agents must back one answer (its author and its voters) before the agents still held back are given up.",
			hint: "use at least 2, and no more than the team's size", check: atLeast(2), ex: "2",
			set: orch(func(o *Orchestrator, v value) { o.LazyStartAgreement = v.n })},
		{Section: secOrch, Name: "failure_budget", Type: TypeInt, Default: "3", Status: Implemented, Since: "port",
			Doc: "Consecutive failed turns that make an agent dead.", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.FailureBudget = v.n })},
		{Section: secOrch, Name: "max_cost_usd", Type: TypeNumber, Default: "0 (no limit)", Status: Implemented, Since: "port",
			Doc: "Stop coordination once this much is spent.", hint: "use 0 for no limit or a positive amount in US dollars", check: atLeast(0),
			set: orch(func(o *Orchestrator, v value) { o.MaxCostUSD = v.x })},
		{Section: secOrch, Name: "max_tokens_per_agent", Type: TypeInt, Default: "0 (no limit)", Status: Implemented, Since: "port",
			Doc:  "Hard cap on each agent's input plus output tokens in coordination: the agent that passes it stops (dead, with the reason) and the others go on.",
			hint: "use 0 for no limit or a positive number of tokens", check: atLeast(0),
			set: orch(func(o *Orchestrator, v value) { o.MaxTokensPerAgent = v.n })},
		{Section: secOrch, Name: "max_response_chars", Type: TypeInt, Default: "200000", Status: Implemented, Since: "port",
			Doc: "Cap on what one model response may stream.", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.MaxResponseChars = v.n })},
		{Section: secOrch, Name: "max_tool_calls_per_response", Type: TypeInt, Default: "32", Status: Implemented, Since: "port",
			Doc: "Cap on the tool calls of one response.", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.MaxToolCallsPerResponse = v.n })},
		{Section: secOrch, Name: "max_answer_chars", Type: TypeInt, Default: "100000", Status: Implemented, Since: "port",
			Doc: "Cap on a new_answer's content.", check: atLeast(1),
			set: orch(func(o *Orchestrator, v value) { o.MaxAnswerChars = v.n })},
		{Section: secOrch, Name: "skip_coordination_rounds", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "Debug: skip voting rounds and go straight to the final presentation.",
			set: orch(func(o *Orchestrator, v value) { o.SkipCoordinationRounds = v.b })},
		{Section: secOrch, Name: "debug_final_answer", Type: TypeAny, Status: Implemented, Since: "0.1.12", ex: "x",
			Doc: "Debug for orchestration restarts: the first post-evaluation reads this text instead of the final answer (false or empty: off).", check: stringOrBool,
			set: orch(func(o *Orchestrator, v value) { o.DebugFinalAnswer = debugText(v) })},
		{Section: secOrch, Name: "coordination", Type: TypeMapping, Status: Implemented, Since: "0.1.12",
			Doc: "Coordination settings (see orchestrator.coordination).", ex: "{}", raw: coordSub(secCoord)},
		{Section: secOrch, Name: "timeout", Type: TypeMapping, Status: Ignored, Since: "0.1.12", ex: "{}",
			Doc: "Validated but never read by MassGen; see timeout_settings.", raw: coordSub(secOrchTimeout)},
		{Section: secOrch, Name: "context_paths", Type: TypeList, Status: Implemented, Since: "0.1.12", ex: "[{path: .}]",
			Doc: "Files and folders every agent may read (and the presenter write).",
			raw: func(w *walker, t *target, f field) { t.cfg.Orchestrator.ContextPaths = w.contextPaths(f, t) }},
		{Section: secOrch, Name: "session_storage", Type: TypeAny, Status: Ignored, Since: "0.1.12", warn: true, ex: "s",
			msg: "`session_storage` is ignored", Instead: "sessions are always stored under .massgen/sessions",
			Doc: "Legacy: sessions are always stored under .massgen/sessions."},
		{Section: secOrch, Name: "snapshot_storage", Type: TypeString, Status: Ignored, Since: "0.1.12",
			Doc: "Every run gets its own snapshot folder."},
		{Section: secOrch, Name: "agent_temporary_workspace", Type: TypeString, Status: Ignored, Since: "0.1.12",
			Doc: "Every run gets its own temporary workspaces."},
		{Section: secOrch, Name: "dspy", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{enabled: true}",
			Doc: "Question paraphrasing: each agent reads a checked rewording of the question besides the original (see its section).",
			raw: coordSub(secDSPy)},
		{Section: secOrch, Name: "verifiers", Type: TypeList, Status: Implemented, Since: "port", ex: "[{aspect: correctness}]",
			Doc: "Verifiers that each judge one aspect of the leading answer (correctness first) before it can win; a failed verdict passes the win to the next answer in the tally (at most 3 answers are checked). See verifiers[].",
			raw: func(w *walker, t *target, f field) {
				t.cfg.Orchestrator.Verifiers, t.verifiersF = w.verifiers(f, t), &f
			}},
		{Section: secOrch, Name: "max_orchestration_restarts", Type: TypeInt, Default: "0", Status: Implemented, Since: "0.1.12",
			Doc: "Orchestrator-level spelling of coordination.max_orchestration_restarts (which wins when both are set).", hint: "use 0 (no post-evaluation) or a small number of restarts",
			check: atLeast(0), set: func(_ *walker, t *target, v value) {
				if t.restartsF == nil {
					t.cfg.Orchestrator.MaxOrchestrationRestarts = v.n
				}
			}},
		{Section: secOrch, Name: "docker", Type: TypeMapping, Status: EmptyOnly, Since: "0.1.20", Doc: "Docker settings for computer use.",
			Why: "Docker execution is not built"},
		{Section: secOrch, Name: "max_turns", Type: TypeInt, Status: EmptyOnly, Since: "0.1.9x",
			Doc: "Cap on the turns of an interactive session.", Instead: "remove it; end the session with /quit"},
		{Section: secOrch, Name: "skills_directory", Type: TypeString, Status: Implemented, Since: "0.1.12", Needs: "orchestrator.coordination.use_skills",
			Doc: "Where the skills are, as coordination.skills_directory (which wins).",
			set: func(_ *walker, t *target, v value) {
				if t.cfg.Orchestrator.SkillsDirectory == "" {
					t.cfg.Orchestrator.SkillsDirectory = v.s
				}
			}},
		{Section: secOrch, Name: "enable_nlip", Type: TypeBool, Default: "false", Status: OffOnly, Since: "0.1.13",
			Doc: "Route tool calls through NLIP.", Why: "NLIP is not built"},
		{Section: secOrch, Name: "nlip", Type: TypeSwitch, Status: OffOnly, Since: "0.1.13", Doc: "NLIP settings.", Why: "NLIP is not built"},
		{Section: secOrch, Name: "nlip_config", Type: TypeMapping, Status: Ignored, Since: "0.1.13", Needs: "enable_nlip",
			Doc: "NLIP router settings."},
		{Section: secOrch, Name: "interactive_mode", Type: TypeBool, Status: Ignored, Since: "0.1.9x",
			Doc: "Set by MassGen's own TUI driver; the CLI decides interactivity here."},
		{Section: secOrch, Name: "type", Type: TypeString, Status: Ignored, Since: "0.1.9x", Doc: "A label; it has no effect."},
	}
}

func orchestratorTimeoutKeys() []Key {
	return []Key{
		{Section: secOrchTimeout, Name: "orchestrator_timeout_seconds", Type: TypeSeconds, Status: Ignored, Since: "0.1.12", warn: true,
			msg:     "orchestrator.timeout.orchestrator_timeout_seconds is ignored (as in MassGen)",
			Instead: "set timeout_settings.orchestrator_timeout_seconds instead", Doc: "Validated but never read by MassGen."},
	}
}

// stringOrBool checks debug_final_answer, which MassGen takes as a string or a boolean.
func stringOrBool(w *walker, v *value) bool {
	switch v.f.val.(type) {
	case *ast.StringNode, *ast.LiteralNode, *ast.BoolNode:
		return true
	}
	w.errf(v.f, "", "%s must be a string or a boolean, not %s", v.f.key, kind(v.f.val))
	return false
}

// debugText is debug_final_answer's text: a string as written; true is "True", the text
// MassGen's f-string makes of it, and false is off.
func debugText(v value) string {
	switch n := v.f.val.(type) {
	case *ast.StringNode:
		return n.Value
	case *ast.LiteralNode:
		return n.Value.Value
	case *ast.BoolNode:
		if n.Value {
			return "True"
		}
	}
	return ""
}

// finalSetting is how the final answer was asked for, by each of its three spellings.
type finalSetting struct {
	strategy, skip, presentation *value
}

var presentationStrategy = map[string]string{"regenerate": StrategyWinnerPresent, "verbatim": StrategyWinnerReuse}

// resolve sets o.FinalAnswerStrategy from the three spellings. An explicit
// final_answer_strategy wins over skip_final_presentation, as in MassGen; final_presentation,
// this port's own spelling, must agree with both. It returns the setting as written, for
// messages ("" for the default).
func (fs *finalSetting) resolve(w *walker, o *Orchestrator) string {
	if p := fs.presentation; p != nil {
		mapped := presentationStrategy[p.s]
		if s := fs.strategy; s != nil && s.s != mapped {
			w.errKey(s.f, "keep `final_answer_strategy`; `final_presentation` is its older spelling",
				"`final_answer_strategy: %s` and `final_presentation: %s` disagree", s.s, p.s)
		}
		if k := fs.skip; k != nil && k.b && mapped != StrategyWinnerReuse {
			w.errKey(k.f, "keep one of them", "`skip_final_presentation: true` and `final_presentation: %s` disagree", p.s)
		}
	}
	switch {
	case fs.strategy != nil:
		if k := fs.skip; k != nil && k.b && fs.strategy.s != StrategyWinnerReuse {
			w.warnAt(k.f.loc, fmt.Sprintf("`skip_final_presentation: true` is overridden by `final_answer_strategy: %s` (as in MassGen)", fs.strategy.s),
				"remove skip_final_presentation", k.f.keyN)
		}
		o.FinalAnswerStrategy = fs.strategy.s
		return "final_answer_strategy: " + fs.strategy.s
	case fs.presentation != nil:
		o.FinalAnswerStrategy = presentationStrategy[fs.presentation.s]
		return "final_presentation: " + fs.presentation.s
	case fs.skip != nil && fs.skip.b:
		o.FinalAnswerStrategy = StrategyWinnerReuse
		return "skip_final_presentation: true"
	}
	return ""
}

// orchestratorAfter resolves the final-answer spellings and checks keys against each other.
func orchestratorAfter(w *walker, t *target, f field, present map[string]field) {
	o := &t.cfg.Orchestrator
	written := t.final.resolve(w, o)
	if resp := cmp.Or(o.MaxResponseChars, DefaultMaxResponseChars); o.MaxAnswerChars > resp {
		// The answer travels in the response's tool-call arguments, which the response cap cuts first.
		w.warnAt(f.loc, fmt.Sprintf("max_answer_chars (%d) is above max_response_chars (%d): a response carrying such an answer is cut off first", o.MaxAnswerChars, resp),
			fmt.Sprintf("raise max_response_chars to at least %d", o.MaxAnswerChars+o.MaxAnswerChars/4), f.keyN)
	}
	if o.PlanningMode && o.FinalAnswerStrategy == StrategyWinnerReuse {
		// The held-back tools run only in the winner's presentation, which winner_reuse skips.
		w.warnAt(f.loc, fmt.Sprintf("planning mode with `%s` never carries the plan out", written),
			"use `final_answer_strategy: winner_present`, so that the winner runs the tools held back", f.keyN)
	}
	if g, ok := present["defer_voting_until_all_answered"]; ok && o.SkipVoting && o.DeferVotingUntilAllAnswered {
		w.warnAt(g.loc, "`defer_voting_until_all_answered` has no effect with `skip_voting: true`", "remove one of them", g.keyN)
	}
	if g, ok := present["fairness_lead_cap_answers"]; ok && !o.Fairness.Enabled {
		w.warnAt(g.loc, "`fairness_lead_cap_answers` has no effect with `fairness_enabled: false`", "remove one of them", g.keyN)
	}
	if g, ok := present["lazy_start_agents"]; ok && o.DeferVotingUntilAllAnswered && o.LazyStartAgents > 0 {
		w.errf(g, "remove `lazy_start_agents`, or `defer_voting_until_all_answered`",
			"lazy start lets an agent that joins vote for an answer it agrees with, before every agent has answered, which `defer_voting_until_all_answered: true` forbids")
	}
	if g, ok := present["lazy_start_agents"]; ok && o.SkipVoting && o.LazyStartAgents > 0 {
		w.errf(g, "remove `lazy_start_agents`, or `skip_voting`",
			"lazy start needs votes: the agents held back join only while the votes of those in play disagree, and `skip_voting: true` has none")
	}
	decompositionAfter(w, t, present) // decomposition.go
	protocolAfter(w, t, present)      // keys_protocol.go
}

// checkLazy checks lazy_start_agents and lazy_start_agreement against the team's size.
func (w *walker) checkLazy(t *target, agents int) {
	o := t.cfg.Orchestrator
	if t.lazyF == nil || o.LazyStartAgents == 0 || agents == 0 {
		return
	}
	g := *t.lazyF
	if o.LazyStartAgents >= agents {
		w.warnAt(g.loc, fmt.Sprintf("`lazy_start_agents: %d` has no effect: the team has %d agents, and all of them start", o.LazyStartAgents, agents),
			fmt.Sprintf("use a number below %d, or remove it", agents), g.keyN)
		return
	}
	if o.LazyStartAgreement > agents {
		w.errf(g, fmt.Sprintf("use `lazy_start_agreement` of at most %d", agents),
			"`lazy_start_agreement: %d` can never be met by a team of %d agents, so every agent would always start", o.LazyStartAgreement, agents)
	}
}

// checkPresenter checks presenter_agent against the agents, once both are read.
func (w *walker) checkPresenter(t *target, defs []agentDef) {
	if t.presenterF == nil {
		return
	}
	g, id := *t.presenterF, t.cfg.Orchestrator.PresenterAgent
	var ids []string
	for _, d := range defs {
		if d.idN != nil {
			ids = append(ids, d.agent.ID)
		}
	}
	if !slices.Contains(ids, id) {
		sugg := "use the id of one of the agents: " + oneOf(quoteAll(ids))
		if c := suggest.Closest(id, ids); c != "" {
			sugg = fmt.Sprintf("did you mean `%s`?", c)
		}
		w.errf(g, sugg, "presenter_agent `%s` is not the id of an agent", clip(id))
		return
	}
	if t.cfg.Orchestrator.FinalAnswerStrategy == StrategyWinnerReuse && !t.cfg.Orchestrator.Decomposing() {
		w.warnAt(g.loc, "`presenter_agent` is unused: the winner's answer is reused as is, without a presentation call",
			"remove presenter_agent, or use `final_answer_strategy: winner_present` or `synthesize`", g.keyN)
	}
}

// between checks that an int is within [lo, hi].
func between(lo, hi int) func(w *walker, v *value) bool {
	return func(w *walker, v *value) bool {
		if v.n < lo || v.n > hi {
			w.errf(v.f, fmt.Sprintf("use %d to %d", lo, hi), "%s must be between %d and %d, not %d", v.f.key, lo, hi, v.n)
			return false
		}
		return true
	}
}
