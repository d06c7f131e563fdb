package eval

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/provider/simulated"
)

// maxSamples caps the samples of the equal-cost self-consistency baseline.
const maxSamples = 64

// SimulatedTokens says what the token counts of a simulated run are.
const SimulatedTokens = "simulated: a quarter of the characters the simulated agents read and write"

// Question is an item as simulated agents know it: the right answer, and the wrong ones they
// may give. Only items graded by choice (the other choices are wrong) or numeric (nearby
// numbers are wrong) can be simulated: their grading is exact.
func Question(it Item) (simulated.Question, error) {
	q := simulated.Question{ID: it.ID}
	switch it.Grader {
	case GraderChoice:
		if len(it.Choices) == 0 || len(it.Answers) == 0 {
			return q, fmt.Errorf("item %s (line %d): a simulated choice item needs choices and an answer", it.ID, it.Line)
		}
		q.Correct = it.Answers[0]
		for k := range it.Choices {
			if l := letters[k : k+1]; !slices.Contains(it.Answers, l) {
				q.Wrong = append(q.Wrong, l)
			}
		}
	case GraderNumeric:
		if len(it.Answers) == 0 {
			return q, fmt.Errorf("item %s (line %d): a simulated numeric item needs an answer", it.ID, it.Line)
		}
		v, _ := ExtractNumber(it.Answers[0]) // checked on load
		q.Correct = strconv.FormatFloat(v, 'f', -1, 64)
		for _, w := range []float64{v + 1, v - 1, v + 10, 2*v + 2} {
			if s := strconv.FormatFloat(w, 'f', -1, 64); !it.Correct(s) && !slices.Contains(q.Wrong, s) {
				q.Wrong = append(q.Wrong, s)
			}
		}
	default:
		return q, fmt.Errorf("item %s (line %d) is graded %s: simulated agents answer choice and numeric items only, whose grading is exact", it.ID, it.Line, it.Grader)
	}
	if len(q.Wrong) == 0 {
		return q, fmt.Errorf("item %s (line %d) has no wrong answer to give: every choice is accepted", it.ID, it.Line)
	}
	return q, nil
}

// CheckSimulated reports the first item simulated agents cannot answer.
func CheckSimulated(items []Item) error {
	for _, it := range items {
		if _, err := Question(it); err != nil {
			return err
		}
	}
	return nil
}

// simulatedProviders returns the backend factory of one item's session: agent sim-<id> of
// pop answering it, the agents starting together.
func simulatedProviders(pop *simulated.Population, it Item) func(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	start := pop.NewStart()
	return func(b config.Backend, _, _ string) (provider.Provider, error) {
		k := pop.Index(b.Model)
		if b.Type != simulated.Type || k < 0 {
			return nil, fmt.Errorf("a simulated run has only the population's agents (got backend %s, model %s)", b.Type, b.Model)
		}
		q, err := Question(it)
		if err != nil {
			return nil, err
		}
		return pop.New(k, q, start), nil
	}
}

// simulatedBaselines puts the best member in s.BestMember: the agent whose own answers (drawn
// alone, without herding) were right most often, with one sample, with as many samples as
// the team has agents, and with as many as the team's tokens per item would pay for, each
// sample costing what its first answer cost in the sessions.
func simulatedBaselines(s *Summary, pop *simulated.Population, items []Item, recs map[string]Record) {
	s.Simulation = &SimulationInfo{Population: pop.Path, Seed: pop.Seed, Tokens: SimulatedTokens}
	var graded []Item
	for _, it := range items {
		if rec, ok := recs[it.ID]; ok && rec.Status == StatusOK {
			graded = append(graded, it)
		}
	}
	if len(graded) == 0 {
		return
	}
	best, bestN := 0, -1
	for k := range pop.Agents {
		n := 0
		for _, it := range graded {
			q, _ := Question(it)
			if pop.Alone(q, k, 0).Correct {
				n++
			}
		}
		if n > bestN {
			best, bestN = k, n
		}
	}
	at := slices.IndexFunc(s.Agents, func(a AgentSummary) bool { return a.ID == pop.Agents[best].ID })
	if at < 0 {
		return
	}
	a := s.Agents[at]
	one := PerItem{Calls: per(a.FirstCalls, len(graded)), Tokens: per(int(a.FirstTokens.Input+a.FirstTokens.Output), len(graded))}
	counts := []int{1, len(pop.Agents)}
	equal := 1
	if one.Tokens > 0 {
		equal = int(math.Round(s.Spend.Team.Tokens / one.Tokens))
		equal = min(max(equal, 1), maxSamples)
	}
	counts = append(counts, equal)
	s.BestMember = nil
	for k, n := range counts {
		if k > 0 && slices.Contains(counts[:k], n) {
			if n == equal {
				s.BestMember[slices.Index(counts[:k], n)].EqualCost = true
			}
			continue
		}
		b := Baseline{Agent: a.ID, Samples: n, EqualCost: k == 2,
			Spend: PerItem{Calls: one.Calls * float64(n), Tokens: one.Tokens * float64(n)}}
		for _, it := range graded {
			q, _ := Question(it)
			answers := make([]string, n)
			for i := range n {
				answers[i] = pop.Alone(q, best, i).Text()
			}
			ok, _ := majority(it, answers)
			b.Accuracy.add(ok)
		}
		s.BestMember = append(s.BestMember, b)
	}
}
