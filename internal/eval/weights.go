package eval

import (
	"path/filepath"

	"massgen/internal/config"
)

// Weights are the vote weights this run learned (weights.json, which a config reads with
// orchestrator.vote_weights_file): one per model, from how often its first answers, what it
// says alone, were right over the graded items (config.LearnWeight). Agents of one model add
// up; an agent that never answered adds nothing. The results file accumulates over --resume,
// and so does the record the weights come from.
func Weights(s Summary) config.LearnedWeights {
	lw := config.LearnedWeights{Source: "massgen eval", Results: filepath.Base(s.Results), Models: map[string]config.ModelWeight{}}
	for _, a := range s.Agents {
		if a.Model == "" || a.First.Of == 0 {
			continue
		}
		m := lw.Models[a.Model]
		m.Items += a.First.Of
		m.Correct += a.First.N
		m.Weight = config.LearnWeight(m.Correct, m.Items)
		lw.Models[a.Model] = m
	}
	return lw
}
