package durable

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"massgen/internal/config"
)

// Every shipped config that can run on Temporal reaches the workers unchanged: it is sent as a
// config file and read back through the loader.
func TestEncodeConfig_RoundTripsTheExamples(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../examples/*.yaml", "../../examples/eval/*.yaml", "../../internal/config/testdata/*.yaml"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sent := 0
	for _, f := range files {
		cfg, rep := config.Load(f)
		if !rep.OK() {
			continue
		}
		if Supported(cfg) != nil {
			continue
		}
		wcfg, err := ForWorkers(cfg)
		if err != nil {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			doc, err := encodeConfig(wcfg)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			back, err := DecodeConfig(doc)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if d := firstDifference(comparable(wcfg), comparable(back)); d != "" {
				t.Errorf("%s differs after the trip", d)
			}
		})
		sent++
	}
	if sent < 5 {
		t.Errorf("only %d example configs run on Temporal: the test checks too little", sent)
	}
}

// A config made in memory (flags over a file) with every coordination setting still arrives
// whole.
func TestEncodeConfig_CarriesEverySetting(t *testing.T) {
	cfg := loadTeam(t, strings.Replace(team, "orchestrator:", `  - id: remote
    backend: {type: groq, model: m, temperature: 0.25, extra_body: {top_k: 5, stop: ["x", "y"]}}
  - id: azure
    backend: {type: azure_openai, model: dep, azure_endpoint: "https://r.openai.azure.com/", api_version: 2024-10-21}
orchestrator:`, 1))
	three := 3
	o := &cfg.Orchestrator
	o.VotingSensitivity, o.AnswerNovelty, o.MaxNewAnswersPerAgent, o.MaxNewAnswersGlobal = "strict", "balanced", 2, 5
	o.FailureBudget, o.MaxCostUSD, o.SkipVoting, o.DisableInjection = 4, 1.25, true, true
	o.DeferVotingUntilAllAnswered, o.EndWhenDecided, o.VotingThreshold = true, true, &three
	o.FinalAnswerStrategy, o.PresenterAgent = config.StrategySynthesize, "medium"
	o.MaxResponseChars, o.MaxToolCallsPerResponse, o.MaxAnswerChars = 9000, 7, 8000
	o.Fairness = config.Fairness{Enabled: true, LeadCapAnswers: 3, MaxMidstreamInjectionsPerRound: 4}
	o.PlanningInstruction = "plan: \"carefully\"\n<tags> & {braces}"
	o.Checklist.CriteriaInline = []config.ChecklistCriterion{{Text: "Correct.", Category: "primary"}}
	o.PeerView, o.PeerViewSize = config.PeerViewBounded, 3
	o.VoteWeighting, o.AgentWeights, o.VoteWeightsFile = config.WeightConfidence, map[string]float64{"medium": 2.5, "remote": 0.25}, "/learned/weights.json"
	cfg.Timeouts.Orchestrator, cfg.Timeouts.InitialRound = 1234500*1e6, 2500*1e6
	cfg.Agents[0].SystemMessage = "yes"
	cfg.Agents[2].Backend.Script.Faults = []config.Fault{{Kind: config.FaultFail, Call: 2}}
	sc := cfg.Agents[2].Backend.Script
	sc.Verdicts, sc.PostEvaluation, sc.RestartReason, sc.RestartInstructions = []string{"fail", "pass"}, []string{"restart", "submit"}, "why", "how"
	sc.StopStatus, sc.StopSummary, sc.BroadcastReply, sc.CriteriaReply, sc.EvaluationReply = "blocked", "done", "b", "c", "e"
	doc, err := encodeConfig(cfg)
	if err != nil {
		t.Fatalf("encode: %v\n%s", err, doc)
	}
	if back, err := DecodeConfig(doc); err != nil || !reflect.DeepEqual(back.Agents[2].Backend.Script, sc) {
		t.Errorf("the script arrived as %+v (%v), want %+v", back.Agents[2].Backend.Script, err, sc)
	}
	if !strings.Contains(doc, `"skip_voting":true`) {
		t.Errorf("the document does not say skip_voting: %s", doc)
	}
}

// What the encoder cannot express is refused by name, never dropped.
func TestEncodeConfig_RefusesWhatItCannotCarry(t *testing.T) {
	cfg := loadTeam(t, team)
	cfg.Agents[0].Memory = &config.Memory{Enabled: true}
	_, err := encodeConfig(cfg)
	if err == nil || !strings.Contains(err.Error(), "agent short: Memory") {
		t.Errorf("err = %v, want it to name agent short's Memory", err)
	}
}

// The steps before coordination run on a worker: their settings travel whole, and the
// paraphrase writer's key stays with each worker.
func TestEncode_CarriesTheStepsBeforeCoordination(t *testing.T) {
	cfg := loadTeam(t, team+`  dspy:
    enabled: true
    num_variants: 2
    strategy: diverse
    cache_enabled: false
    semantic_threshold: 0.7
    use_chain_of_thought: true
    temperature_range: [0.2, 0.8]
    backend: {type: openai, model: gpt-5-nano, base_url: "http://127.0.0.1:9/v1", temperature: 0.5}
  coordination:
    enable_planning_mode: true
    planning_mode_instruction: "Plan first."
    persona_generator: {enabled: true, diversity_mode: methodology, persist_across_turns: true}
`)
	back := sentBack(t, cfg)
	if o := back.Orchestrator; !o.DSPy.Enabled || o.DSPy.Backend == nil || o.DSPy.Backend.Model != "gpt-5-nano" || !o.PlanningMode ||
		!o.PersonaGenerator.PersistAcrossTurns {
		t.Errorf("the steps arrived as %+v", o)
	}
	for name, set := range map[string]func(b *config.Backend){
		"api_key":  func(b *config.Backend) { b.APIKey = "sk-in-the-file" },
		"base_url": func(b *config.Backend) { b.BaseURL = "https://user:pass@example.com/v1" },
	} {
		c := loadTeam(t, team+"  dspy: {enabled: true, backend: {type: openai, model: m}}\n")
		set(c.Orchestrator.DSPy.Backend)
		_, err := Encode(c)
		if err == nil || !strings.Contains(err.Error(), "orchestrator.dspy.backend") || strings.Contains(err.Error(), "sk-in-the-file") || strings.Contains(err.Error(), "pass@") {
			t.Errorf("%s: %v, want a refusal naming orchestrator.dspy.backend without the secret", name, err)
		}
	}
}

func TestDecodeConfig_ReadsLikeTheCLI(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"empty", "", "no config"},
		{"unknown type", `{"agents":[{"id":"a","backend":{"type":"evil"}}]}`, "evil"},
		{"not json", `{"agents": [`, wireName},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeConfig(tc.doc)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// team is a three-agent scripted team that needs nothing of a machine, as sessions on Temporal
// are.
const team = `
agents:
  - id: short
    backend: {type: scripted, model: s1, answers: ["Paris."], vote: longest}
  - id: medium
    backend: {type: scripted, model: s2, answers: ["The capital is Paris."], vote: longest}
  - id: long
    backend: {type: scripted, model: s3, answers: ["The capital of France is Paris, on the Seine."], vote: longest}
orchestrator:
  final_presentation: regenerate
`

func loadTeam(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, rep := config.Parse("team.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatalf("config: %v", rep.Err())
	}
	return cfg
}

// Decomposition mode does not run on Temporal yet: it is refused by name before anything is
// sent, not run as a voting session.
// Decomposition mode travels whole: the mode, each agent's subtask and the decomposer.
func TestEncode_CarriesDecomposition(t *testing.T) {
	cfg := loadTeam(t, strings.Replace(team, "orchestrator:", `orchestrator:
  coordination_mode: decomposition
  coordination:
    task_decomposer: {enabled: false, decomposition_guidelines: "Split by layer.", timeout_seconds: 42}`, 1))
	cfg.Agents[0].Subtask = "the first half"
	back := sentBack(t, cfg)
	if !back.Orchestrator.Decomposing() || back.Agents[0].Subtask != "the first half" || !back.Orchestrator.TaskDecomposer.Disabled {
		t.Errorf("arrived as %+v", back.Orchestrator)
	}
}

// Memory runs on the workers, which open the store and compress as the config says: the
// top-level block, an agent's own over it and filesystem_memory arrive whole.
func TestEncode_CarriesMemory(t *testing.T) {
	for name, yaml := range map[string]string{
		"top level and an agent's": `
agents:
  - id: a
    backend: {type: openai, model: gpt-5-mini}
    memory:
      persistent_memory: {session_name: own, embedding: {model: text-embedding-3-large}}
      retrieval: {limit: 9}
  - id: b
    backend: {type: scripted, answers: [hi]}
memory:
  enabled: true
  persistent_memory: {session_name: pets, embedding: {provider: openai}, qdrant: {path: /shared/memory}}
  compression: {trigger_threshold: 0.6, target_ratio: 0.3}
  retrieval: {exclude_recent: false}
`,
		"filesystem_memory": "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\nfilesystem_memory: {compression: {trigger_threshold: 0.8, target_ratio: 0.1}}\n",
		"memory off":        "agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\nmemory: {enabled: false}\nfilesystem_memory: {enabled: false}\n",
	} {
		t.Run(name, func(t *testing.T) {
			cfg := loadTeam(t, yaml)
			back := sentBack(t, cfg)
			for _, a := range cfg.Agents {
				if got, want := back.MemoryOf(a), cfg.MemoryOf(a); got != want {
					t.Errorf("agent %s's memory arrived as %+v, want %+v", a.ID, got, want)
				}
			}
			if back.FilesystemMemory != cfg.FilesystemMemory {
				t.Errorf("filesystem_memory arrived as %+v, want %+v", back.FilesystemMemory, cfg.FilesystemMemory)
			}
		})
	}
}

// An in-process store would be each worker's own: refused by name.
func TestSupported_RefusesInProcessMemory(t *testing.T) {
	err := Supported(loadTeam(t, team+"memory: {enabled: true, persistent_memory: {on_disk: false}}\n"))
	if err == nil || !strings.Contains(err.Error(), "on_disk: false") {
		t.Fatalf("Supported = %v, want a refusal naming on_disk: false", err)
	}
}

// Orchestration restarts run on Temporal: both spellings of the key, and debug_final_answer,
// reach the workers as set, and the session is not refused.
func TestEncode_CarriesOrchestrationRestarts(t *testing.T) {
	for _, yaml := range []string{
		"orchestrator:\n  coordination: {max_orchestration_restarts: 2}\n",
		"orchestrator:\n  max_orchestration_restarts: 1\n  debug_final_answer: true\n",
		"orchestrator:\n  max_orchestration_restarts: 1\n  coordination: {max_orchestration_restarts: 3}\n  debug_final_answer: \"London.\"\n",
	} {
		cfg, rep := config.Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], post_evaluation: [restart, submit]}\n"+yaml))
		if !rep.OK() {
			t.Fatal(rep.Text())
		}
		if err := Supported(cfg); err != nil {
			t.Fatalf("%s: refused: %v", yaml, err)
		}
		doc, err := Encode(cfg)
		if err != nil {
			t.Fatalf("%s: encode: %v", yaml, err)
		}
		back, err := DecodeConfig(doc)
		if err != nil {
			t.Fatalf("%s: decode: %v", yaml, err)
		}
		o, b := cfg.Orchestrator, back.Orchestrator
		if o.MaxOrchestrationRestarts == 0 || b.MaxOrchestrationRestarts != o.MaxOrchestrationRestarts || b.DebugFinalAnswer != o.DebugFinalAnswer {
			t.Errorf("%s: arrived as %d restarts, debug %q; sent %d, %q", yaml, b.MaxOrchestrationRestarts, b.DebugFinalAnswer,
				o.MaxOrchestrationRestarts, o.DebugFinalAnswer)
		}
		if d := firstDifference(comparable(cfg), comparable(back)); d != "" {
			t.Errorf("%s: %s differs after the trip", yaml, d)
		}
	}
}

// Broadcast's side calls read the other agents' conversations, which on Temporal live in the
// workers' activities: a session asking for it is refused by name, not run without it.
// Broadcast to the agents runs on Temporal, with every key of it; broadcast to the person is
// refused by name.
func TestEncode_CarriesBroadcast(t *testing.T) {
	cfg, rep := config.Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n"+
		"orchestrator:\n  coordination: {broadcast: agents, broadcast_sensitivity: high, response_depth: low, broadcast_timeout: 42, "+
		"broadcast_wait_by_default: false, max_broadcasts_per_agent: 3}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	doc, err := Encode(cfg)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	back, err := DecodeConfig(doc)
	if err != nil {
		t.Fatal(err)
	}
	if b := back.Orchestrator.Broadcast; b != cfg.Orchestrator.Broadcast || b.Mode != "agents" || b.MaxPerAgent != 3 {
		t.Errorf("broadcast arrived as %+v, sent %+v", b, cfg.Orchestrator.Broadcast)
	}
	human, rep := config.Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n"+
		"orchestrator:\n  coordination: {broadcast: human}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	if err := Supported(human); err == nil || !strings.Contains(err.Error(), "orchestrator.coordination.broadcast: human") {
		t.Errorf("broadcast: human: %v, want a refusal naming it", err)
	}
}

// Task planning and filesystem memory run on Temporal (the plans travel with the agents'
// conversations, the memories are files in the holder's workspaces): accepted, and every key
// of theirs reaches the workers as set.
func TestEncode_CarriesTaskPlanningAndMemoryFiles(t *testing.T) {
	cfg, rep := config.Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi], cwd: ws}\n"+
		"orchestrator:\n  coordination: {enable_agent_task_planning: true, max_tasks_per_plan: 7, task_planning_filesystem_mode: true,\n"+
		"    plan_depth: deep, plan_target_steps: 40, enable_memory_filesystem_mode: true}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	doc, err := Encode(cfg)
	if err != nil {
		t.Fatalf("Encode = %v, want these settings to travel", err)
	}
	back, err := DecodeConfig(doc)
	if err != nil {
		t.Fatal(err)
	}
	want := config.TaskPlanning{Enabled: true, MaxTasks: 7, FilesystemMode: true, Depth: "deep", TargetSteps: 40}
	if back.Orchestrator.TaskPlanning != want || !back.Orchestrator.MemoryFiles {
		t.Errorf("arrived as task planning %+v, memory files %v; want %+v, true", back.Orchestrator.TaskPlanning, back.Orchestrator.MemoryFiles, want)
	}
}

// write_mode's copies live in the workspaces of the worker that holds the session: each mode
// travels to the workers whole.
func TestEncode_CarriesWriteMode(t *testing.T) {
	for _, mode := range []string{"worktree", "auto", "isolated", "legacy"} {
		cfg, rep := config.Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n"+
			"orchestrator: {coordination: {write_mode: "+mode+", drift_conflict_policy: fail}}\n"))
		if !rep.OK() {
			t.Fatal(rep.Text())
		}
		doc, err := Encode(cfg)
		if err != nil {
			t.Fatalf("write_mode %s: %v", mode, err)
		}
		back, err := DecodeConfig(doc)
		if err != nil {
			t.Fatal(err)
		}
		if back.Orchestrator.WriteMode != cfg.Orchestrator.WriteMode || back.Orchestrator.DriftPolicy != "fail" {
			t.Errorf("write_mode %s arrives as %q, drift policy %q", mode, back.Orchestrator.WriteMode, back.Orchestrator.DriftPolicy)
		}
	}
}

// Verifiers that are an agent's check travel whole (verifier subagents:
// TestEncode_CarriesTheOrchestratorsSubagents).
func TestEncode_CarriesVerifiers(t *testing.T) {
	cfg, rep := config.Parse("c.yaml", []byte("agents:\n  - id: a\n    backend: {type: scripted, answers: [hi]}\n"+
		"  - id: b\n    backend: {type: scripted, answers: [ho]}\n"+
		"orchestrator:\n  verifiers: [{aspect: correctness, agent: b}, {aspect: custom, instructions: \"Cite a source.\"}]\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	back := sentBack(t, cfg)
	if v := back.Orchestrator.Verifiers; len(v) != 2 || v[0].Agent != "b" || v[1].Instructions != "Cite a source." {
		t.Errorf("verifiers arrived as %+v", v)
	}
}

// sentBack is cfg as a worker reads it after Encode, checked to differ from cfg in nothing.
func sentBack(t *testing.T, cfg *config.Config) *config.Config {
	t.Helper()
	doc, err := Encode(cfg)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	back, err := DecodeConfig(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDifference(comparable(cfg), comparable(back)); d != "" {
		t.Errorf("%s differs after the trip", d)
	}
	return back
}

// MassGen configs that failed the trip: a whole float (temperature: 1.0, read back as the
// integer 1), and a custom_tools entry naming several functions (read back as one entry
// each). Both travel unchanged.
func TestEncode_KeepsWholeFloatsAndToolEntries(t *testing.T) {
	dir := t.TempDir()
	tool := filepath.Join(dir, "tools.py")
	if err := os.WriteFile(tool, []byte("def a(): pass\ndef b(): pass\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Parse(filepath.Join(dir, "c.yaml"), []byte(`
agents:
  - id: a
    backend:
      type: gemini
      model: gemini-2.5-flash
      temperature: 1.0
      extra_body: {top_p: 1.0, stops: [2.0, 0.5]}
      custom_tools:
        - {name: [tool_a, tool_b], function: [a, b], path: tools.py}
        - {name: tool_c, function: a, path: tools.py}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	back := sentBack(t, cfg)
	if v, ok := back.Agents[0].Backend.Params["temperature"].(float64); !ok || v != 1 {
		t.Errorf("temperature arrived as %#v", back.Agents[0].Backend.Params["temperature"])
	}
	var entries []int
	for _, c := range back.Agents[0].Backend.Tools.CustomTools {
		entries = append(entries, c.Entry)
	}
	if !reflect.DeepEqual(entries, []int{0, 0, 1}) {
		t.Errorf("the tools arrived from entries %v, want [0 0 1]", entries)
	}
}
