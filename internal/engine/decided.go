package engine

// decidedLocked reports whether the votes cast settle the winner (end_when_decided, lazy
// start); s.mu must be held. It waits for the first answer of every agent in play that has not
// voted instead, which is coming for sure: the predicate assumes no new answer. An agent
// mid-call may still be writing a second answer that would make every vote stale; ending now
// gives it up, which is what the setting asks.
func (s *session) decidedLocked() bool {
	for _, i := range s.m.Unanswered() {
		if _, voted := s.m.CurrentVote(i); !voted {
			return false
		}
	}
	// Somebody must have judged: alone, an agent's answer is settled before any vote, and its
	// vote is the one look back at its answer it gets.
	w, ok := s.m.Decided()
	if !ok {
		return false
	}
	for _, c := range s.m.Winner().Tally {
		if c.Agent == w {
			return c.Votes > 0
		}
	}
	return false
}
