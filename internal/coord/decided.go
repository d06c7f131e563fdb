package coord

// Decided reports whether the votes that count now settle the winner, and which agent it is:
// however the live agents that hold no current vote go on to vote (each once, for any agent
// with an answer, at any confidence), the winner by P5 stays the same. Under weighting a
// pending vote may be worth as much as its voter's weight, so that is what each can add. It
// assumes no new answer arrives; a new answer makes every vote stale, so a caller that ends
// coordination on Decided (to save the remaining rounds' time and tokens) gives up the
// improvements those agents might still write, which is why it is a setting and not the
// protocol.
//
// With every live agent voted it is the same as Converged; with no answer it is false. Agents
// held back by lazy start count as votes still to come, and while any is held the winner must
// also be backed by LazySettings.Agreement agents.
func (m *Machine) Decided() (winner int, ok bool) {
	if m.Live() == 0 {
		return -1, false
	}
	r := m.Winner()
	if r.Winner < 0 {
		return -1, false
	}
	if m.anyHeld() && m.backers(r.Winner, r.Tally[r.tallyIndex(r.Winner)].Voters) < m.s.Lazy.Agreement {
		return -1, false
	}
	var pending int64
	for i, a := range m.agents {
		if a.dead {
			continue
		}
		if _, voted := m.CurrentVote(i); !voted {
			pending += m.maxPoints(i)
		}
	}
	var lead int64
	for _, c := range r.Tally {
		if c.Agent == r.Winner {
			lead = c.points
		}
	}
	for _, c := range r.Tally {
		if c.Agent == r.Winner {
			continue
		}
		// Every pending vote going to c is the best c can do; ties go to the earlier agent.
		best := c.points + pending
		if best > lead || (best == lead && c.Agent < r.Winner) {
			return -1, false
		}
	}
	return r.Winner, true
}

// tallyIndex is the position of agent j's count in Winner's tally (j has an answer).
func (r Result) tallyIndex(j int) int {
	for k, c := range r.Tally {
		if c.Agent == j {
			return k
		}
	}
	return -1
}
