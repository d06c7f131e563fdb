package config

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The MassGen v0.1.9x keys this build implements: parsed into Config, with their defaults and
// range checks, and the rules between them (issue 10 item 1).
func TestParse_V09xKeys(t *testing.T) {
	two := "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n  - id: writer\n    backend: {type: scripted, answers: [hi]}\n"
	orch := func(lines string) string { return two + "orchestrator:\n" + lines }
	cases := []struct {
		name  string
		yaml  string
		want  []string
		check func(t *testing.T, c *Config)
	}{
		{"defaults", two, nil, func(t *testing.T, c *Config) {
			o := c.Orchestrator
			if o.FinalAnswerStrategy != StrategyWinnerPresent || o.Fairness != (Fairness{Enabled: true, LeadCapAnswers: 2, MaxMidstreamInjectionsPerRound: 2}) ||
				o.PersonaGenerator != (PersonaGenerator{DiversityMode: "perspective"}) || o.MaxNewAnswersGlobal != 0 || o.PresenterAgent != "" ||
				c.Timeouts.RoundGrace != 120*time.Second || c.Timeouts.InitialRound != 0 || c.Timeouts.SubsequentRound != 0 {
				t.Errorf("defaults: %+v %+v", o, c.Timeouts)
			}
		}},
		{"write_mode and drift_conflict_policy", orch("  coordination: {write_mode: worktree, drift_conflict_policy: fail}\n"), nil, func(t *testing.T, c *Config) {
			if c.Orchestrator.WriteMode != "worktree" || c.Orchestrator.DriftPolicy != "fail" {
				t.Errorf("write_mode %q, drift_conflict_policy %q", c.Orchestrator.WriteMode, c.Orchestrator.DriftPolicy)
			}
		}},
		{"skip_final_presentation", orch("  skip_final_presentation: true\n"), nil, strategy(StrategyWinnerReuse)},
		{"skip_final_presentation false", orch("  skip_final_presentation: false\n"), nil, strategy(StrategyWinnerPresent)},
		{"final_answer_strategy", orch("  final_answer_strategy: synthesize\n"), nil, strategy(StrategySynthesize)},
		{"final_presentation verbatim", orch("  final_presentation: verbatim\n"), nil, strategy(StrategyWinnerReuse)},
		{"final_answer_strategy invalid", orch("  final_answer_strategy: merge\n"),
			[]string{"E 7:26 orchestrator.final_answer_strategy | invalid final_answer_strategy `merge` | use `winner_present`, `winner_reuse` or `synthesize`"}, nil},
		{"strategy and presentation disagree", orch("  final_answer_strategy: synthesize\n  final_presentation: verbatim\n"),
			[]string{"E 7:3 orchestrator.final_answer_strategy | `final_answer_strategy: synthesize` and `final_presentation: verbatim` disagree | older spelling"}, nil},
		{"strategy and presentation agree", orch("  final_answer_strategy: winner_reuse\n  final_presentation: verbatim\n"), nil, strategy(StrategyWinnerReuse)},
		{"skip and presentation disagree", orch("  skip_final_presentation: true\n  final_presentation: regenerate\n"),
			[]string{"E 7:3 orchestrator.skip_final_presentation | `skip_final_presentation: true` and `final_presentation: regenerate` disagree"}, nil},
		{"strategy wins over skip", orch("  skip_final_presentation: true\n  final_answer_strategy: synthesize\n"),
			[]string{"W 7:3 orchestrator.skip_final_presentation | overridden by `final_answer_strategy: synthesize`"}, strategy(StrategySynthesize)},
		{"presenter_agent", orch("  presenter_agent: writer\n"), nil, func(t *testing.T, c *Config) {
			if c.Orchestrator.PresenterAgent != "writer" {
				t.Errorf("presenter = %q", c.Orchestrator.PresenterAgent)
			}
		}},
		{"presenter_agent unknown", orch("  presenter_agent: writr\n"),
			[]string{"E 7:20 orchestrator.presenter_agent | presenter_agent `writr` is not the id of an agent | did you mean `writer`?"}, nil},
		{"presenter_agent before agents", "orchestrator: {presenter_agent: nobody}\n" + two,
			[]string{"E 1:33 orchestrator.presenter_agent | `nobody` is not the id of an agent | `a` or `writer`"}, nil},
		{"presenter_agent unused", orch("  presenter_agent: writer\n  skip_final_presentation: true\n"),
			[]string{"W 7:3 orchestrator.presenter_agent | `presenter_agent` is unused"}, nil},
		{"max_new_answers_global", orch("  max_new_answers_global: 3\n"), nil, func(t *testing.T, c *Config) {
			if c.Orchestrator.MaxNewAnswersGlobal != 3 {
				t.Errorf("global = %d", c.Orchestrator.MaxNewAnswersGlobal)
			}
		}},
		{"max_new_answers_global range", orch("  max_new_answers_global: 0\n"),
			[]string{"E 7:27 orchestrator.max_new_answers_global | max_new_answers_global must be at least 1 | null for no limit"}, nil},
		{"ensemble switches", orch("  defer_voting_until_all_answered: true\n  disable_injection: true\n"), nil, func(t *testing.T, c *Config) {
			if o := c.Orchestrator; !o.DeferVotingUntilAllAnswered || !o.DisableInjection || o.SkipVoting {
				t.Errorf("orchestrator = %+v", o)
			}
		}},
		{"skip_voting with two agents", orch("  skip_voting: true\n"), nil, func(t *testing.T, c *Config) {
			if !c.Orchestrator.SkipVoting {
				t.Error("skip_voting not set")
			}
		}},
		{"skip_voting makes defer moot", orch("  skip_voting: true\n  defer_voting_until_all_answered: true\n"),
			[]string{"W 8:3 orchestrator.defer_voting_until_all_answered | no effect with `skip_voting: true`"}, nil},
		{"fairness", orch("  fairness_enabled: false\n  max_midstream_injections_per_round: 1\n"), nil, func(t *testing.T, c *Config) {
			if f := c.Orchestrator.Fairness; f != (Fairness{Enabled: false, LeadCapAnswers: 2, MaxMidstreamInjectionsPerRound: 1}) {
				t.Errorf("fairness = %+v", f)
			}
		}},
		// With a lead cap of 0 every agent with an answer would wait for the others forever.
		{"fairness lockstep", orch("  fairness_lead_cap_answers: 0\n"),
			[]string{"E 7:30 orchestrator.fairness_lead_cap_answers | must be at least 1 | strict lockstep, is not supported"}, nil},
		{"fairness ranges", orch("  fairness_lead_cap_answers: -1\n  max_midstream_injections_per_round: 0\n  fairness_enabled: \"yes\"\n"),
			[]string{"E 7:30 orchestrator.fairness_lead_cap_answers | must be at least 1 | strict lockstep",
				"E 8:39 orchestrator.max_midstream_injections_per_round | must be at least 1 | default 2",
				"E 9:21 orchestrator.fairness_enabled | fairness_enabled must be a boolean"}, nil},
		{"lead cap without fairness", orch("  fairness_enabled: false\n  fairness_lead_cap_answers: 1\n"),
			[]string{"W 8:3 orchestrator.fairness_lead_cap_answers | no effect with `fairness_enabled: false`"}, nil},
		{"checklist_gated", orch("  voting_sensitivity: checklist_gated\n  voting_threshold: 3\n  checklist_require_gap_report: false\n" +
			"  max_checklist_calls_per_round: 2\n  checklist_first_answer: true\n  coordination: {checklist_criteria_preset: planning}\n"), nil,
			func(t *testing.T, c *Config) {
				o := c.Orchestrator
				want := Checklist{RequireGapReport: false, GapReportMode: "changedoc", MaxCallsPerRound: 2, FirstAnswer: true, CriteriaPreset: "planning"}
				if o.VotingSensitivity != "checklist_gated" || o.VotingThreshold == nil || *o.VotingThreshold != 3 || !reflect.DeepEqual(o.Checklist, want) {
					t.Errorf("sensitivity %q threshold %v checklist %+v", o.VotingSensitivity, o.VotingThreshold, o.Checklist)
				}
			}},
		{"checklist inline criteria", orch("  voting_sensitivity: checklist\n  coordination:\n    checklist_criteria_inline:\n" +
			"      - {text: The result is right., category: primary}\n      - {description: It is short., category: could}\n      - Cites a source.\n"), nil,
			func(t *testing.T, c *Config) {
				want := []ChecklistCriterion{{"The result is right.", "primary"}, {"It is short.", "stretch"}, {"Cites a source.", "standard"}}
				if !reflect.DeepEqual(c.Orchestrator.Checklist.CriteriaInline, want) {
					t.Errorf("inline criteria %+v", c.Orchestrator.Checklist.CriteriaInline)
				}
			}},
		{"checklist bad values", orch("  voting_threshold: 11\n  coordination:\n    checklist_criteria_preset: poetry\n    checklist_criteria_inline: [{category: primary}]\n"),
			[]string{"E 7:21 orchestrator.voting_threshold | must be between 0 and 10",
				"E 9:32 orchestrator.coordination.checklist_criteria_preset | `poetry`",
				"E 10:33 orchestrator.coordination.checklist_criteria_inline[0] | a checklist criterion needs its text"}, nil},
		{"checklist_gated per agent", "agents:\n  - id: a\n    voting_sensitivity: checklist_gated\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 3:5 agents[0].voting_sensitivity | `voting_sensitivity: checklist_gated` is not supported yet"}, nil},
		{"per-agent voting_sensitivity", "agents:\n  - id: a\n    voting_sensitivity: strict\n    backend: {type: scripted, answers: [hi]}\n  - id: b\n    backend: {type: scripted, answers: [hi]}\n",
			nil, func(t *testing.T, c *Config) {
				if c.Agents[0].VotingSensitivity != "strict" || c.Agents[1].VotingSensitivity != "" || c.Orchestrator.VotingSensitivity != "lenient" {
					t.Errorf("sensitivities = %q %q %q", c.Agents[0].VotingSensitivity, c.Agents[1].VotingSensitivity, c.Orchestrator.VotingSensitivity)
				}
			}},
		{"per-agent voting_sensitivity refused", "agents:\n  - id: a\n    voting_sensitivity: roi\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"E 3:5 agents[0].voting_sensitivity | `voting_sensitivity: roi` is not supported yet"}, nil},
		{"voting_sensitivity inside backend", "agents:\n  - id: a\n    backend: {type: openai, voting_sensitivity: strict}\n",
			[]string{"W 3:29 agents[0].backend.voting_sensitivity | `voting_sensitivity` has no effect inside backend: it belongs on the agent"},
			func(t *testing.T, c *Config) {
				if c.Agents[0].Backend.Params != nil || c.Agents[0].VotingSensitivity != "" {
					t.Errorf("agent = %+v", c.Agents[0])
				}
			}},
		{"persona_generator", orch("  coordination:\n    persona_generator: {enabled: true, diversity_mode: methodology}\n"), nil,
			func(t *testing.T, c *Config) {
				if p := c.Orchestrator.PersonaGenerator; p != (PersonaGenerator{Enabled: true, DiversityMode: "methodology"}) {
					t.Errorf("persona = %+v", p)
				}
			}},
		{"persona_generator bad", orch("  coordination:\n    persona_generator: {enabled: true, diversity_mode: styles, after_first_answer: keep}\n"),
			[]string{"E 8:56 orchestrator.coordination.persona_generator.diversity_mode | invalid diversity_mode `styles` | `perspective`, `implementation` or `methodology`",
				"E 8:64 orchestrator.coordination.persona_generator.after_first_answer | `after_first_answer: keep` is not supported yet"}, nil},
		{"round timeouts", "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\ntimeout_settings:\n  initial_round_timeout_seconds: 600\n" +
			"  subsequent_round_timeout_seconds: 300.5\n  round_timeout_grace_seconds: 0\n", nil, func(t *testing.T, c *Config) {
			if tm := c.Timeouts; tm.InitialRound != 10*time.Minute || tm.SubsequentRound != 300500*time.Millisecond || tm.RoundGrace != 0 {
				t.Errorf("timeouts = %+v", tm)
			}
		}},
		{"round timeouts bad", okAgents + "timeout_settings:\n  initial_round_timeout_seconds: 0\n  round_timeout_grace_seconds: -1\n",
			[]string{"E 5:34 timeout_settings.initial_round_timeout_seconds | must be a positive number of seconds",
				"E 6:32 timeout_settings.round_timeout_grace_seconds | must be a non-negative number of seconds"}, nil},
		{"grace alone", okAgents + "timeout_settings:\n  round_timeout_grace_seconds: 60\n",
			[]string{"W 5:3 timeout_settings.round_timeout_grace_seconds | no effect without a round timeout"}, nil},
		{"textual_terminal", okAgents + "ui:\n  display_type: textual_terminal\n", nil, display("rich_terminal")},
		{"display none", okAgents + "ui:\n  display_type: none\n", nil, display("silent")},
		{"display web", okAgents + "ui:\n  display_type: web\n",
			[]string{"E 5:3 ui.display_type | `display_type: web` is not supported yet | massgen serve"}, nil},
		{"coordination_mode", orch("  coordination_mode: voting\n"), nil, nil},
		{"decomposition", orch("  coordination_mode: decomposition\n"),
			[]string{"W 7:22 orchestrator.coordination_mode | decomposition mode: `a`, `writer` have no subtask; the task decomposer assigns them one"},
			func(t *testing.T, c *Config) {
				if !c.Orchestrator.Decomposing() {
					t.Errorf("mode %q", c.Orchestrator.CoordinationMode)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, rep := Parse("c.yaml", []byte(tc.yaml))
			checkIssues(t, rep, tc.want)
			if tc.check != nil {
				if cfg == nil {
					t.Fatalf("no config:\n%s", rep.Text())
				}
				tc.check(t, cfg)
			}
		})
	}
}

func strategy(want string) func(t *testing.T, c *Config) {
	return func(t *testing.T, c *Config) {
		if got := c.Orchestrator.FinalAnswerStrategy; got != want {
			t.Errorf("strategy = %q, want %q", got, want)
		}
	}
}

func display(want string) func(t *testing.T, c *Config) {
	return func(t *testing.T, c *Config) {
		if c.UI.DisplayType != want {
			t.Errorf("display = %q, want %q", c.UI.DisplayType, want)
		}
	}
}

// MassGen features this build lacks are refused by name, never accepted as "valid" with their
// settings dropped: permissions rules, filesystem memory, media generation switches. A key
// that only tunes a refused feature is refused with it, and ignored while the feature is off.
func TestParse_RefusedByName(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []string
	}{
		{"filesystem_memory", okAgents + "filesystem_memory:\n  compression: {trigger_threshold: 0.75}\n", nil},
		{"filesystem_memory ratios", okAgents + "filesystem_memory:\n  compression: {trigger_threshold: 1.5}\n",
			[]string{"E 5:36 filesystem_memory.compression.trigger_threshold | trigger_threshold must be between 0 and 1"}},
		{"filesystem_memory off", okAgents + "filesystem_memory: {enabled: false, compression: {target_ratio: 0.2}}\n", nil},
		{"hooks", okAgents + "hooks: {PreToolUse: [{handler: x.py}]}\n", []string{"E 4:1 hooks | `hooks` is not supported yet"}},
		{"feature off, its tuning ignored", okAgents + "orchestrator:\n  coordination:\n    broadcast: false\n    broadcast_timeout: 60\n    response_depth: high\n", nil},
		{"feature on, its tuning refused", okAgents + "orchestrator:\n  coordination:\n    enable_memory_filesystem_mode: true\n    learning_capture_mode: round\n",
			[]string{"E 7:5 orchestrator.coordination.learning_capture_mode | `learning_capture_mode: round` is not supported yet: learnings are not captured automatically | remove it: agents keep what they learn with create_memory"}},
		{"broadcast on, its tuning read", okAgents + "orchestrator:\n  coordination:\n    broadcast: agents\n    broadcast_timeout: 60\n    response_depth: high\n", nil},
		{"broadcast yes", okAgents + "orchestrator:\n  coordination:\n    broadcast: everyone\n",
			[]string{"E 6:16 orchestrator.coordination.broadcast | invalid broadcast `everyone` | use `false`, `agents` or `human`"}},
		{"tuning written before its feature", okAgents + "orchestrator:\n  coordination:\n    evolving_criteria_score_threshold: 7\n    evolving_criteria: true\n",
			[]string{"E 6:5 orchestrator.coordination.evolving_criteria_score_threshold | it tunes `evolving_criteria`",
				"E 7:5 orchestrator.coordination.evolving_criteria | `evolving_criteria: true` is not supported yet"}},
		{"checklist tuning across sections", okAgents + "orchestrator:\n  voting_sensitivity: roi\n  coordination: {fast_iteration_mode: true}\n",
			[]string{"E 5:3 orchestrator.voting_sensitivity | `voting_sensitivity: roi` is not supported yet",
				"E 6:18 orchestrator.coordination.fast_iteration_mode | it tunes `orchestrator.voting_sensitivity`"}},
		{"vote settings in decomposition mode", "agents:\n  - id: a\n    subtask: research\n    backend: {type: scripted, answers: [hi]}\n" +
			"orchestrator: {coordination_mode: decomposition, skip_voting: true, voting_sensitivity: checklist_gated}\n",
			[]string{"E 5:63 orchestrator.skip_voting | `skip_voting` does not apply in decomposition mode",
				"E 5:89 orchestrator.voting_sensitivity | a checklist-gated stop is not built"}},
		{"subtask without decomposition", "agents:\n  - id: a\n    subtask: research\n    backend: {type: scripted, answers: [hi]}\n",
			[]string{"W 3:5 agents[0].subtask | `subtask` has no effect: orchestrator.coordination_mode is not decomposition"}},
		{"empty subtask", "agents:\n  - id: a\n    subtask: ' '\n    backend: {type: scripted, answers: [hi]}\norchestrator: {coordination_mode: decomposition}\n",
			[]string{"E 3:14 agents[0].subtask | `subtask` is empty"}},
		{"docker settings", net("      command_line_execution_mode: docker\n      command_line_docker_image: img\n"),
			[]string{"E 5:7 agents[0].backend.command_line_execution_mode | `command_line_execution_mode: docker` is not supported yet",
				"E 6:7 agents[0].backend.command_line_docker_image | it tunes `command_line_execution_mode`"}},
		{"type-specific key on another type", net("      model_reasoning_effort: high\n"),
			[]string{"E 5:7 agents[0].backend.model_reasoning_effort | `model_reasoning_effort` is not supported on backend type `openai`: it is a setting of `codex`"}},
		{"claude-only switch off elsewhere", net("      enable_tool_search: false\n"), nil},
		{"write_mode invalid", okAgents + "orchestrator: {coordination: {write_mode: shadow}}\n",
			[]string{"E 4:43 orchestrator.coordination.write_mode | invalid write_mode `shadow` | `auto`, `worktree`, `isolated` or `legacy`"}},
		{"drift_conflict_policy invalid", okAgents + "orchestrator: {coordination: {drift_conflict_policy: merge}}\n",
			[]string{"E 4:54 orchestrator.coordination.drift_conflict_policy | invalid drift_conflict_policy `merge`"}},
		{"removed key", okAgents + "orchestrator: {coordination: {async_subagents: {enabled: true}}}\n",
			[]string{"E 4:31 orchestrator.coordination.async_subagents | `async_subagents` is not supported: MassGen removed it | background_subagents"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, rep := Parse("c.yaml", []byte(tc.yaml))
			checkIssues(t, rep, tc.want)
		})
	}
}

// enable_image_generation and its kind are MassGen switches, not request parameters: before,
// they passed validation and reached the provider raw, failing every call. Image, audio and
// video offer generate_media; file generation offers text_to_file_generation.
func TestParse_GenerationSwitchesNeverReachParams(t *testing.T) {
	for key, mode := range map[string]string{"enable_image_generation": "image", "enable_audio_generation": "audio", "enable_video_generation": "video"} {
		cfg, rep := Parse("c.yaml", []byte(net("      "+key+": true\n")))
		if !rep.OK() || cfg.Agents[0].Backend.Params != nil {
			t.Fatalf("%s: true: %s params = %v", key, rep.Text(), cfg.Agents[0].Backend.Params)
		}
		if got := cfg.Agents[0].Backend.Tools.Media.GenerateModes(); !slices.Equal(got, []string{mode}) {
			t.Errorf("%s: true offers generate_media for %v, want [%s]", key, got, mode)
		}
	}
	cfg, rep := Parse("c.yaml", []byte(net("      enable_file_generation: true\n")))
	if m := cfg.Agents[0].Backend.Tools.Media; !rep.OK() || !m.FileGeneration || !m.Enabled() || len(m.GenerateModes()) > 0 || cfg.Agents[0].Backend.Params != nil {
		t.Errorf("enable_file_generation: true: %s media %+v", rep.Text(), m)
	}
	for _, key := range []string{"enable_image_generation", "enable_audio_generation", "enable_video_generation", "enable_file_generation"} {
		cfg, rep := Parse("c.yaml", []byte(net("      "+key+": false\n")))
		if !rep.OK() || cfg.Agents[0].Backend.Params != nil || cfg.Agents[0].Backend.Tools.Media.Enabled() {
			t.Errorf("%s: false: %s params = %v", key, rep.Text(), cfg.Agents[0].Backend.Params)
		}
	}
	// No MassGen key that is not a request parameter is passed to the provider: a key missing
	// from the schema would reach Params, even as null.
	var lines strings.Builder
	for _, k := range schema() {
		if k.Section == secBackend && !k.Param && k.Name != "type" {
			lines.WriteString("      " + k.Name + ": null\n")
		}
	}
	cfg, rep = Parse("c.yaml", []byte(net(lines.String())))
	if !rep.OK() || cfg.Agents[0].Backend.Params != nil {
		t.Errorf("MassGen keys reached Params: %v\n%s", cfg.Agents[0].Backend.Params, rep.Text())
	}
}

// Known request parameters of the wrong type warn (they are still passed: providers differ).
func TestParse_ParamTypes(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte(net("      temperature: \"hot\"\n      max_tokens: 1.5\n      top_p: 0.9\n")))
	checkIssues(t, rep, []string{
		"W 5:20 agents[0].backend.temperature | `temperature` should be a number, not a string | without quotes",
		"W 6:19 agents[0].backend.max_tokens | `max_tokens` should be a whole number, not 1.5",
	})
	if p := cfg.Agents[0].Backend.Params; p["temperature"] != "hot" || p["max_tokens"] != 1.5 || p["top_p"] != 0.9 {
		t.Errorf("params = %v", p)
	}
}

// A single agent without id or type, as MassGen's loader takes it: agent1, with the type from a
// model name with a clear prefix.
func TestParse_SingleAgentInference(t *testing.T) {
	for model, typ := range map[string]string{"gpt-5-mini": "openai", "o3-mini": "openai", "o4-mini": "openai", "o1": "openai",
		"claude-sonnet-4-5": "claude", "gemini-2.5-flash": "gemini", "grok-4": "grok", "GPT-4o": "openai"} {
		cfg, rep := Parse("c.yaml", []byte("agent: {backend: {model: "+model+"}}\n"))
		if !rep.OK() {
			t.Errorf("%s: %s", model, rep.Text())
			continue
		}
		if a := cfg.Agents[0]; a.ID != "agent1" || a.Backend.Type != typ || a.Backend.Model != model {
			t.Errorf("%s: agent = %+v", model, a)
		}
	}
	_, rep := Parse("c.yaml", []byte("agent: {backend: {model: llama3}}\n"))
	checkIssues(t, rep, []string{"E 1:9 agent.backend | missing required key `type`"})
	_, rep = Parse("c.yaml", []byte("agents:\n  - backend: {model: gpt-5-mini}\n"))
	checkIssues(t, rep, []string{"E 2:5 agents[0] | missing required key `id`"})
}

// Refused backend types say what to use instead, and the lists of valid types offer only the
// types this build runs.
func TestParse_BackendTypeAdvice(t *testing.T) {
	_, rep := Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: inference, model: m}\n"))
	checkIssues(t, rep, []string{"E 3:21 agents[0].backend.type | backend type `inference` is not supported yet | use type: vllm or sglang"})
	for _, typ := range []string{"antigravity_cli", "uitars"} {
		_, rep := Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: "+typ+"}\n"))
		if len(rep.Errors) != 1 || !strings.Contains(rep.Errors[0].Message, "backend type `"+typ+"` is not supported yet") ||
			strings.Contains(rep.Errors[0].Suggestion, "scripted") {
			t.Errorf("%s: %s", typ, rep.Text())
		}
	}
	_, rep = Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: nosuch}\n"))
	if sugg := rep.Errors[0].Suggestion; strings.Contains(sugg, "inference") || strings.Contains(sugg, "ag2") || !strings.Contains(sugg, "openai") {
		t.Errorf("valid types offered: %s", sugg)
	}
	cfg, rep := Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: nvidia_nim}\n"))
	if !rep.OK() || cfg.Agents[0].Backend.BaseURL != "https://integrate.api.nvidia.com/v1" || cfg.Agents[0].Backend.Model == "" {
		t.Errorf("nvidia_nim: %s %+v", rep.Text(), cfg)
	}
}

// A broken .json file is reported as JSON, at the JSON error's position.
func TestParse_JSONSyntax(t *testing.T) {
	_, rep := Parse("broken.json", []byte("{\"agents\": [\n  {\"id\": \"a\" \"backend\": {}}\n]}\n"))
	checkIssues(t, rep, []string{"E 2:14  | invalid JSON: invalid character '\"' after object key:value pair"})
	_, rep = Parse("broken.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted\n"))
	if len(rep.Errors) != 1 || !strings.HasPrefix(rep.Errors[0].Message, "invalid YAML: ") {
		t.Errorf("yaml: %s", rep.Text())
	}
}

// Typos in the new sections keep their did-you-mean.
func TestParse_V09xTypos(t *testing.T) {
	cases := []struct{ yaml, want string }{
		{okAgents + "orchestrator: {fairnes_enabled: true}\n", "E 4:16 orchestrator.fairnes_enabled | unknown orchestrator key `fairnes_enabled` | did you mean `fairness_enabled`?"},
		{okAgents + "orchestrator: {coordination: {enable_subagent: true}}\n", "E 4:31 orchestrator.coordination.enable_subagent | unknown coordination key | did you mean `enable_subagents`?"},
		{okAgents + "orchestrator: {coordination: {persona_generator: {diversty_mode: x}}}\n", "E 4:51 orchestrator.coordination.persona_generator.diversty_mode | unknown persona_generator key | did you mean `diversity_mode`?"},
		{okAgents + "timeout_settings: {initial_round_timeout: 3}\n", "E 4:20 timeout_settings.initial_round_timeout | unknown timeout_settings key | did you mean `initial_round_timeout_seconds`?"},
		{okAgents + "permission: {}\n", "W 4:1 permission | unknown top-level key `permission` is ignored | did you mean `permissions`?"},
		{okAgents + "orchestrator: {coordination: {zzz: 1}}\n", "E 4:31 orchestrator.coordination.zzz | unknown coordination key | docs/config-keys.md lists the keys of `orchestrator.coordination`"},
		{okAgents + "orchestrator: {zzz: 1}\n", "E 4:16 orchestrator.zzz | unknown orchestrator key | docs/config-keys.md lists the keys of `orchestrator`"},
	}
	for _, tc := range cases {
		_, rep := Parse("c.yaml", []byte(tc.yaml))
		checkIssues(t, rep, []string{tc.want})
	}
}

// MassGen's configs with coding-agent CLIs validate, and their keys reach Backend.CLI.
func TestParse_CLIAgents(t *testing.T) {
	raw, err := os.ReadFile("testdata/massgen_cli_agents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, rep := Parse("massgen_cli_agents.yaml", raw)
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	c := cfg.Agents[0].Backend
	if cfg.Agents[0].SystemMessage != "You are a careful engineer." || c.CLI.PermissionMode != "bypassPermissions" || c.CLI.MaxThinkingTokens != 8000 ||
		len(c.CLI.DisallowedTools) != 1 || len(c.Tools.AllowedTools) != 6 || cfg.Agents[1].Backend.CLI.ReasoningEffort != "high" {
		t.Errorf("claude_code settings = %+v, tools %+v; codex %+v", c.CLI, c.Tools, cfg.Agents[1].Backend.CLI)
	}
	_, rep = Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: openai, model: gpt-5, append_system_prompt: hi}\n"))
	if rep.OK() || !strings.Contains(rep.Text(), "not allowed inside backend") {
		t.Errorf("append_system_prompt on openai: %s", rep.Text())
	}
}

// MassGen's configs/broadcast/test_broadcast_agents.yaml, with its Docker command settings
// left out (refused here by name): its coordination block is read whole.
func TestParse_MassGenBroadcastConfig(t *testing.T) {
	cfg, rep := Parse("test_broadcast_agents.yaml", []byte(`
agents:
  - id: agent_a
    backend: {type: openai, model: gpt-5, cwd: workspace1, enable_mcp_command_line: true}
  - id: agent_b
    backend: {type: "openai", model: "gpt-5", cwd: workspace2, enable_mcp_command_line: true}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
  coordination:
    broadcast: "agents"  # Options: false | "agents" | "human"
    broadcast_sensitivity: "high"
    response_depth: "high"
    broadcast_timeout: 300
    broadcast_wait_by_default: true
    max_broadcasts_per_agent: 10
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	want := Broadcast{Mode: BroadcastAgents, Sensitivity: "high", ResponseDepth: "high", Timeout: 300 * time.Second, WaitByDefault: true, MaxPerAgent: 10}
	if cfg.Orchestrator.Broadcast != want {
		t.Fatalf("broadcast %+v, want %+v", cfg.Orchestrator.Broadcast, want)
	}
}
