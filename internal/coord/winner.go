package coord

// Count is one agent's share of the current votes.
type Count struct {
	Agent int
	Votes int
	// Score is what the votes are worth under the session's weighting (Votes under plain
	// weighting): the winner has the highest.
	Score  float64
	Voters []int
	points int64
}

// Result is the outcome of a coordination.
type Result struct {
	// Winner is the winning agent's index, or -1 when no agent has an answer.
	Winner int
	// Tie is true when another agent had as high a score and config order decided.
	Tie bool
	// Tally counts current votes for every agent that has an answer, in agent order.
	Tally []Count
}

// Winner applies P5: the highest score of current votes (their number under plain weighting,
// see weights.go); ties go to the earlier agent in config order; with no votes (or votes worth
// nothing), the first agent with an answer. Only current votes count (a dead agent holds none).
func (m *Machine) Winner() Result {
	counts := make([]Count, len(m.agents))
	for i := range counts {
		counts[i].Agent = i
	}
	for i := range m.agents {
		if v, ok := m.CurrentVote(i); ok && v.Target >= 0 && len(m.agents[v.Target].answers) > 0 {
			c := &counts[v.Target]
			c.Votes++
			c.Voters = append(c.Voters, i)
			c.points += m.points(v)
		}
	}
	r := Result{Winner: -1}
	var best int64 = -1
	for i, c := range counts {
		if len(m.agents[i].answers) == 0 {
			continue
		}
		c.Score = float64(c.points) / pointsPerVote
		r.Tally = append(r.Tally, c)
		switch {
		case best < 0 || c.points > best:
			best, r.Winner, r.Tie = c.points, i, false
		case c.points == best && best > 0:
			r.Tie = true
		}
	}
	return r
}
