package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"massgen/internal/suggest"
)

// Vote weighting (ours; MassGen counts every vote as one): orchestrator.vote_weighting says
// what a vote is worth, agent_weights and vote_weights_file say how much each agent's weighs.
// coord/weights.go does the counting.

// Vote weighting modes.
const (
	WeightPlain      = "plain"
	WeightWeighted   = "weighted"
	WeightConfidence = "confidence"
)

// Bounds of an agent's weight.
const (
	MinVoteWeight = 0.001
	MaxVoteWeight = 1000
)

// maxWeightsFileBytes caps a weights file.
const maxWeightsFileBytes = 1 << 20

// LearnedWeights is the weights file massgen eval writes (weights.json next to its results):
// a weight for each model the run measured, keyed by ModelKey.
type LearnedWeights struct {
	// Source says what wrote it ("massgen eval") and from which results.
	Source  string `json:"source"`
	Results string `json:"results,omitempty"`
	// Models are the weights by ModelKey.
	Models map[string]ModelWeight `json:"models"`
}

// ModelWeight is what one model's vote weighs, and the record it was learned from.
type ModelWeight struct {
	// Items is how many items its first answers were graded on, Correct how many were right.
	Items   int `json:"items"`
	Correct int `json:"correct"`
	// Weight is the log-odds of its smoothed accuracy, clamped to [MinVoteWeight, MaxVoteWeight].
	Weight float64 `json:"weight"`
}

// ModelKey names a model in a weights file: its model, "gpt-4o" (the backend type for a
// backend without one). What is learned is the model's: the provider serving it does not
// change how often it is right.
func ModelKey(b Backend) string {
	if b.Model == "" {
		return b.Type
	}
	return b.Model
}

// LearnWeight turns a record of correct first answers out of items into a weight: the
// log-odds of the accuracy, smoothed by one right and one wrong answer so that a short record
// stays near 0, floored at 0.05 so that no voter is silenced, and kept to 3 decimals. Under
// independent voters of known accuracy, log-odds weights make the weighted majority the most
// accurate rule (Nitzan and Paroush, 1982).
func LearnWeight(correct, items int) float64 {
	p := (float64(correct) + 1) / (float64(items) + 2)
	w := math.Log(p / (1 - p))
	return math.Round(min(max(w, 0.05), MaxVoteWeight)*1000) / 1000
}

// ReadWeights reads a weights file.
func ReadWeights(path string) (*LearnedWeights, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no weights file at %s: massgen eval writes one (weights.json next to its results.jsonl)", path)
		}
		return nil, fmt.Errorf("read the weights file: %w", err)
	}
	if st.Size() > maxWeightsFileBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d-byte limit of a weights file", path, st.Size(), maxWeightsFileBytes)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the weights file: %w", err)
	}
	var lw LearnedWeights
	if err := json.Unmarshal(data, &lw); err != nil {
		return nil, fmt.Errorf("%s is not a weights file (JSON with models: {\"model\": {weight: 1.2}}): %w", path, err)
	}
	for k, m := range lw.Models {
		if !(m.Weight >= MinVoteWeight && m.Weight <= MaxVoteWeight) {
			return nil, fmt.Errorf("%s: model %s has weight %v: weights are from %v to %v", path, k, m.Weight, MinVoteWeight, MaxVoteWeight)
		}
	}
	return &lw, nil
}

func weightKeys() []Key {
	return []Key{
		{Section: secOrch, Name: "vote_weighting", Type: TypeEnum, Enum: []string{WeightPlain, WeightWeighted, WeightConfidence}, Default: WeightPlain,
			Status: Implemented, Since: "port",
			Doc: "What a vote is worth: one each (plain, MassGen's majority), its voter's weight (weighted: agent_weights or vote_weights_file), " +
				"or its voter's weight times the confidence the voter states with it, 0 to 1 (confidence; a vote without one counts 0.5).",
			set: orch(func(o *Orchestrator, v value) { o.VoteWeighting = v.s })},
		{Section: secOrch, Name: "agent_weights", Type: TypeMapping, Default: "1 for every agent", Status: Implemented, Since: "port", Needs: "vote_weighting",
			Doc: "Each agent's vote weight by agent id, from 0.001 to 1000 (agents not named weigh 1, or what vote_weights_file says).", ex: "{a: 2}",
			raw: agentWeights},
		{Section: secOrch, Name: "vote_weights_file", Type: TypeString, Status: Implemented, Since: "port", Needs: "vote_weighting",
			Doc: "A weights.json written by massgen eval: each agent's vote weight learned from its model's accuracy (agent_weights wins).",
			ex:  "testdata/weights.json",
			raw: func(w *walker, t *target, f field) {
				if s, ok := w.str(f); ok {
					t.cfg.Orchestrator.VoteWeightsFile, t.weightsF = s, &f
				}
			}},
	}
}

// agentWeights reads agent_weights: agent id -> weight.
func agentWeights(w *walker, t *target, f field) {
	entries, _ := w.mapping(f, 1)
	t.weightsByID = &f
	for _, e := range entries {
		x, ok := w.number(e)
		if !ok {
			continue
		}
		if !(x >= MinVoteWeight && x <= MaxVoteWeight) {
			w.errf(e, fmt.Sprintf("use a number from %v to %v", MinVoteWeight, MaxVoteWeight), "agent_weights.%s is %v", clip(e.key), x)
			continue
		}
		if t.cfg.Orchestrator.AgentWeights == nil {
			t.cfg.Orchestrator.AgentWeights = map[string]float64{}
		}
		t.cfg.Orchestrator.AgentWeights[e.key] = x
	}
}

// checkWeights checks the weights against the agents once both are read, and fills in the
// weights the file learned: the config carries them, so a Temporal worker needs no file.
func (w *walker) checkWeights(t *target, defs []agentDef) {
	o := &t.cfg.Orchestrator
	var ids []string
	for _, d := range defs {
		if d.idN != nil {
			ids = append(ids, d.agent.ID)
		}
	}
	if g := t.weightsByID; g != nil {
		for id := range o.AgentWeights {
			if slices.Contains(ids, id) {
				continue
			}
			sugg := "use the ids of the agents: " + oneOf(quoteAll(ids))
			if c := suggest.Closest(id, ids); c != "" {
				sugg = fmt.Sprintf("did you mean `%s`?", c)
			}
			w.errf(*g, sugg, "agent_weights names `%s`, which is not the id of an agent", clip(id))
			delete(o.AgentWeights, id)
		}
	}
	weighs := o.VoteWeighting == WeightWeighted || o.VoteWeighting == WeightConfidence
	for _, g := range []*field{t.weightsByID, t.weightsF} {
		if g != nil && !weighs {
			w.warnAt(g.loc, fmt.Sprintf("`%s` has no effect: vote_weighting is plain, so every vote counts one", g.key),
				"add `vote_weighting: weighted` (or confidence)", g.keyN)
		}
	}
	if o.VoteWeighting == WeightWeighted && t.weightsByID == nil && t.weightsF == nil {
		w.warnAt("orchestrator.vote_weighting", "`vote_weighting: weighted` without agent_weights or vote_weights_file weighs every vote 1, as plain does",
			"add agent_weights: {id: weight} or vote_weights_file: weights.json (massgen eval writes one)")
	}
	if t.weightsF == nil || o.VoteWeightsFile == "" {
		return
	}
	g := *t.weightsF
	path := o.VoteWeightsFile
	if !filepath.IsAbs(path) && w.file != "" {
		path = filepath.Join(filepath.Dir(w.file), path)
	}
	lw, err := ReadWeights(path)
	if err != nil {
		w.errf(g, "run massgen eval with this team to write one, or remove vote_weights_file", "%v", err)
		return
	}
	o.VoteWeightsFile = path
	var agents []Agent
	for _, d := range defs {
		if d.idN != nil {
			agents = append(agents, d.agent)
		}
	}
	missing := learn(o, agents, lw)
	if len(missing) > 0 {
		w.warnAt(g.loc, fmt.Sprintf("%s has no weight for %s: they weigh 1", clip(o.VoteWeightsFile), strings.Join(missing, ", ")),
			"run massgen eval with these models, or give them agent_weights", g.keyN)
	}
}

// learn gives each agent without a weight in agent_weights the one lw learned for its model, and
// returns the agents lw has none for ("id (model)").
func learn(o *Orchestrator, agents []Agent, lw *LearnedWeights) (missing []string) {
	for _, a := range agents {
		if _, set := o.AgentWeights[a.ID]; set {
			continue
		}
		m, ok := lw.Models[ModelKey(a.Backend)]
		if !ok {
			missing = append(missing, a.ID+" ("+ModelKey(a.Backend)+")")
			continue
		}
		if o.AgentWeights == nil {
			o.AgentWeights = map[string]float64{}
		}
		o.AgentWeights[a.ID] = m.Weight
	}
	return missing
}

// VoteWeights are the agents' vote weights in config order (1 for an agent without one), nil
// when votes are not weighed.
func (c *Config) VoteWeights() []float64 {
	o := c.Orchestrator
	if o.VoteWeighting != WeightWeighted && o.VoteWeighting != WeightConfidence {
		return nil
	}
	out := make([]float64, len(c.Agents))
	for i, a := range c.Agents {
		out[i] = 1
		if x, ok := o.AgentWeights[a.ID]; ok {
			out[i] = x
		}
	}
	return out
}
