package engine

import "massgen/internal/coord"

// voteWeighting is what the session's votes are worth: the config's vote_weighting, with the
// agents' weights in their order.
func voteWeighting(o Options) coord.Weighting {
	w := coord.Weighting{Mode: o.Orchestrator.VoteWeighting}
	if w.Mode != coord.WeightWeighted && w.Mode != coord.WeightConfidence {
		return coord.Weighting{}
	}
	w.Weights = make([]float64, len(o.Agents))
	for i, a := range o.Agents {
		w.Weights[i] = o.Orchestrator.AgentWeights[a.ID] // 0, a missing one, weighs 1
	}
	return w
}

// weighing reports whether votes are weighed (not a plain majority, and there are votes).
func (s *session) weighing() bool {
	return s.weighting() != ""
}

// weighting is vote_weighting as the log records it: "" for a plain majority, and for a session
// without votes.
func (s *session) weighting() string {
	if s.skipVoting || s.decomposing() {
		return ""
	}
	if w := s.m.Weighting().Mode; w != coord.WeightPlain {
		return w
	}
	return ""
}
