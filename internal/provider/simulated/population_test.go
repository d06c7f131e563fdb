package simulated

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse_Defaults(t *testing.T) {
	p, err := Parse("pop.yaml", []byte("agents:\n  - {id: a, accuracy: 0.7}\n  - {id: b-2, accuracy: 1, wrong_length: long}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Seed != 1 || *p.Distractor != 1 {
		t.Errorf("seed %d, distractor %v; want the defaults 1 and 1", p.Seed, *p.Distractor)
	}
	a, b := p.Agents[0], p.Agents[1]
	if a.Confidence != Calibrated || a.Length != Short || a.WrongLength != Short || b.WrongLength != Long {
		t.Errorf("defaults: %+v %+v", a, b)
	}
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Agents) != 2 || cfg.Agents[1].ID != "b-2" || cfg.Agents[1].Backend.Type != Type || p.Index(cfg.Agents[1].Backend.Model) != 1 {
		t.Errorf("config agents: %+v", cfg.Agents)
	}
	if p.Index("sim-nobody") != -1 || p.Index("gpt-5") != -1 {
		t.Error("Index found an agent the population does not have")
	}
}

// The orchestrator block reaches the config loader, which reports its errors at the file's
// own lines.
func TestParse_Orchestrator(t *testing.T) {
	good := "seed: 7\nagents:\n  - {id: a, accuracy: 0.7}\norchestrator:\n  defer_voting_until_all_answered: true\n  max_new_answers_per_agent: 1\n"
	p, err := Parse("pop.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Orchestrator.DeferVotingUntilAllAnswered || cfg.Orchestrator.MaxNewAnswersPerAgent != 1 || p.Seed != 7 {
		t.Errorf("orchestrator %+v, seed %d", cfg.Orchestrator, p.Seed)
	}
	bad := "agents:\n  - {id: a, accuracy: 0.7}\norchestrator:\n  max_new_answer_per_agent: 1\n"
	_, err = Parse("pop.yaml", []byte(bad))
	if err == nil || !strings.Contains(err.Error(), "pop.yaml:4:3") || !strings.Contains(err.Error(), "max_new_answers_per_agent") {
		t.Errorf("a misspelt orchestrator key: %v; want it at pop.yaml:4:3 with the right name", err)
	}
}

func TestParse_BadInput(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"accuracy not a number", "agents:\n  - {id: a, accuracy: high}\n", "pop.yaml:2:23: a number is needed here, not a string"},
		{"accuracy over 1", "agents:\n  - {id: a, accuracy: 1.5}\n", "agents[0].accuracy is 1.5: give a probability from 0 to 1"},
		{"accuracy missing", "agents:\n  - {id: a}\n", "has no accuracy"},
		{"herding negative", "agents:\n  - {id: a, accuracy: 0.5, herding: -0.1}\n", "agents[0].herding"},
		{"long bias NaN", "agents:\n  - {id: a, accuracy: 0.5, long_bias: .nan}\n", "agents[0].long_bias"},
		{"distractor over 1", "distractor: 2\nagents:\n  - {id: a, accuracy: 0.5}\n", "distractor is 2"},
		{"unknown agent key", "agents:\n  - {id: a, acuracy: 0.5}\n", "acuracy"},
		{"unknown top key", "agent:\n  - {id: a, accuracy: 0.5}\n", "agent"},
		{"unknown confidence", "agents:\n  - {id: a, accuracy: 0.5, confidence: humble}\n", "use calibrated, overconfident, none"},
		{"unknown length", "agents:\n  - {id: a, accuracy: 0.5, wrong_length: medium}\n", "wrong_length is \"medium\""},
		{"no agents", "seed: 3\n", "no agents"},
		{"duplicate ids", "agents:\n  - {id: a, accuracy: 0.5}\n  - {id: a, accuracy: 0.6}\n", "used twice"},
		{"bad id", "agents:\n  - {id: ../x, accuracy: 0.5}\n", "letters, digits"},
		{"seed not a number", "seed: soon\nagents:\n  - {id: a, accuracy: 0.5}\n", "seed"},
		{"not a mapping", "- a\n- b\n", "pop.yaml"},
		{"checklist voting", "agents:\n  - {id: a, accuracy: 0.5}\norchestrator: {voting_sensitivity: checklist_gated}\n", "do not score checklists"},
		{"novelty check", "agents:\n  - {id: a, accuracy: 0.5}\norchestrator: {answer_novelty_requirement: strict}\n", "leave it lenient"},
		{"too many agents", "agents:\n" + agentsN(33), "over the limit"},
	}
	for _, tt := range tests {
		_, err := Parse("pop.yaml", []byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
}

func agentsN(n int) string {
	var b strings.Builder
	for k := range n {
		b.WriteString("  - {id: a" + strings.Repeat("x", k) + ", accuracy: 0.5}\n")
	}
	return b.String()
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "none.yaml")); err == nil || !strings.Contains(err.Error(), "no population file") {
		t.Errorf("a missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", maxFileBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a file over the cap: %v", err)
	}
	for _, name := range []string{"sim_independent.yaml", "sim_herding.yaml", "sim_long_wrong.yaml", "sim_overconfident.yaml", "sim_instructions.yaml"} {
		if _, err := Load(filepath.Join("..", "..", "..", "examples", "eval", name)); err != nil {
			t.Errorf("examples/eval/%s: %v", name, err)
		}
	}
}
