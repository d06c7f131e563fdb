package config

import (
	"slices"
	"strings"
	"testing"
)

const verifierTeam = "agents:\n  - id: alice\n    backend: {type: scripted, answers: [hi], verdicts: [fail, pass]}\n" +
	"  - id: bob\n    backend: {type: scripted, answers: [hi]}\n"

func TestParse_Verifiers(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte(verifierTeam+"orchestrator:\n  verifiers:\n"+
		"    - {aspect: format, agent: bob}\n    - {aspect: custom, instructions: cites a source, subagent: true}\n    - {aspect: correctness}\n"))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var got []string
	for _, v := range cfg.Orchestrator.Verifiers {
		got = append(got, v.Aspect+"/"+v.Agent)
	}
	// Correctness first, then in aspect order; the others' order kept.
	if want := []string{"correctness/", "format/bob", "custom/"}; !slices.Equal(got, want) {
		t.Errorf("verifiers = %v, want %v", got, want)
	}
	if v := cfg.Orchestrator.Verifiers[2]; !v.Subagent || v.Instructions != "cites a source" {
		t.Errorf("custom verifier = %+v", v)
	}
	if s := cfg.Agents[0].Backend.Script.Verdicts; !slices.Equal(s, []string{"fail", "pass"}) {
		t.Errorf("scripted verdicts = %v", s)
	}
}

func TestParse_VerifiersRefused(t *testing.T) {
	many := "orchestrator:\n  verifiers: [" + strings.Repeat("{aspect: format}, ", maxVerifiers) + "{aspect: format}]\n"
	for _, c := range []struct{ name, yaml, want string }{
		{"custom without instructions", "orchestrator:\n  verifiers: [{aspect: custom}]\n", "a custom verifier needs instructions"},
		{"no aspect", "orchestrator:\n  verifiers: [{agent: bob}]\n", "missing required key `aspect`"},
		{"bad aspect", "orchestrator:\n  verifiers: [{aspect: corectness}]\n", "correctness"},
		{"agent and subagent", "orchestrator:\n  verifiers: [{aspect: format, agent: bob, subagent: true}]\n", "not both"},
		{"unknown agent", "orchestrator:\n  verifiers: [{aspect: format, agent: bobb}]\n", "verifier agent `bobb` is not the id of an agent (did you mean `bob`?)"},
		{"decomposition", "orchestrator:\n  coordination_mode: decomposition\n  verifiers: [{aspect: format}]\n", "decomposition mode has no vote"},
		{"too many", many, "too many"},
		{"bad scripted verdict", "orchestrator:\n  verifiers: [{aspect: format}]\n", ""},
	} {
		yaml := verifierTeam + c.yaml
		if c.name == "bad scripted verdict" {
			yaml, c.want = strings.Replace(yaml, "verdicts: [fail, pass]", "verdicts: [pas]", 1), "invalid verdict `pas` (did you mean `pass`?"
		}
		_, rep := Parse("c.yaml", []byte(yaml))
		if rep.OK() || !strings.Contains(rep.Text(), c.want) {
			t.Errorf("%s: want an error containing %q, got:\n%s", c.name, c.want, rep.Text())
		}
	}
}
