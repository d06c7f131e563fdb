package simulated

import (
	"fmt"
	"strings"
)

// InstructionEffect is how one phrase in an agent's instructions (its system message)
// changes its accuracy: a simulated stand-in for a prompt that helps or hurts, so that a
// search over instructions (massgen eval --optimize) has a known best to find.
type InstructionEffect struct {
	// Contains is the phrase, matched ignoring case.
	Contains string `yaml:"contains"`
	// Accuracy is added to the agent's accuracy (-1 to 1); the sum is kept within 0 and 1.
	Accuracy float64 `yaml:"accuracy"`
}

// Caps on instruction effects.
const (
	maxEffects      = 32
	maxEffectPhrase = 200
)

func checkEffects(effects []InstructionEffect) error {
	if len(effects) > maxEffects {
		return fmt.Errorf("%d instruction_effects, over the limit of %d", len(effects), maxEffects)
	}
	for k, e := range effects {
		where := fmt.Sprintf("instruction_effects[%d]", k)
		switch {
		case strings.TrimSpace(e.Contains) == "":
			return fmt.Errorf("%s has no contains: give the phrase that has the effect", where)
		case len(e.Contains) > maxEffectPhrase:
			return fmt.Errorf("%s.contains is %d bytes, over the %d-byte limit", where, len(e.Contains), maxEffectPhrase)
		case !(e.Accuracy >= -1 && e.Accuracy <= 1):
			return fmt.Errorf("%s.accuracy is %v: give a change from -1 to 1", where, e.Accuracy)
		}
	}
	return nil
}

// WithInstructions returns the population whose agent k follows instructions[k] (missing or
// "" for none): each effect whose phrase the instructions contain changes its accuracy. Every
// draw stays the same, so a higher accuracy only turns wrong answers right: two candidates
// compare on the same luck. p is not changed.
func (p *Population) WithInstructions(instructions []string) *Population {
	out := *p
	out.Agents = make([]Profile, len(p.Agents))
	copy(out.Agents, p.Agents)
	for k := range out.Agents {
		if k >= len(instructions) || instructions[k] == "" {
			continue
		}
		text := strings.ToLower(instructions[k])
		acc := *p.Agents[k].Accuracy
		for _, e := range p.InstructionEffects {
			if strings.Contains(text, strings.ToLower(strings.TrimSpace(e.Contains))) {
				acc += e.Accuracy
			}
		}
		acc = min(max(acc, 0), 1)
		out.Agents[k].Accuracy = &acc
	}
	return &out
}
