package engine

// decidedLocked reports whether the votes cast settle the winner (end_when_decided); s.mu
// must be held. It waits for every live agent's first answer, which is coming for sure: the
// predicate assumes no new answer. An agent mid-call may still be writing a second answer
// that would make every vote stale; ending now gives it up, which is what the setting asks.
func (s *session) decidedLocked() bool {
	if !s.m.AllAnswered() {
		return false
	}
	_, ok := s.m.Decided()
	return ok
}
