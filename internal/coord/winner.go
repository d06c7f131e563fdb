package coord

// Count is one agent's share of the current votes.
type Count struct {
	Agent  int
	Votes  int
	Voters []int
}

// Result is the outcome of a coordination.
type Result struct {
	// Winner is the winning agent's index, or -1 when no agent has an answer.
	Winner int
	// Tie is true when another agent had as many votes and config order decided.
	Tie bool
	// Tally counts current votes for every agent that has an answer, in agent order.
	Tally []Count
}

// Winner applies P5: most current votes; ties go to the earlier agent in config order; with no
// votes, the first agent with an answer. Only current votes count (a dead agent holds none).
func (m *Machine) Winner() Result {
	counts := make([]Count, len(m.agents))
	for i := range counts {
		counts[i].Agent = i
	}
	for i := range m.agents {
		if v, ok := m.CurrentVote(i); ok && v.Target >= 0 && len(m.agents[v.Target].answers) > 0 {
			counts[v.Target].Votes++
			counts[v.Target].Voters = append(counts[v.Target].Voters, i)
		}
	}
	r := Result{Winner: -1}
	best := -1
	for i, c := range counts {
		if len(m.agents[i].answers) == 0 {
			continue
		}
		r.Tally = append(r.Tally, c)
		switch {
		case best < 0 || c.Votes > best:
			best, r.Winner, r.Tie = c.Votes, i, false
		case c.Votes == best && best > 0:
			r.Tie = true
		}
	}
	return r
}
