package engine

import (
	"massgen/internal/config"
	"massgen/internal/coord"
)

// lazySettings turns lazy_start_agents into the machine's settings; nil when every agent starts
// at once (off, a team no larger than it, or no votes to disagree in).
func lazySettings(o config.Orchestrator, agents int, skipVoting bool) *coord.LazySettings {
	if o.LazyStartAgents <= 0 || o.LazyStartAgents >= agents || skipVoting {
		return nil
	}
	return &coord.LazySettings{Start: o.LazyStartAgents, Agreement: o.LazyStartAgreement}
}

func (s *session) lazy() bool {
	return lazySettings(s.o.Orchestrator, len(s.agents), s.skipVoting) != nil
}

// releaseLocked brings the next agent held back by lazy start into play when those in play can
// do no more and the winner is not settled; s.mu must be held.
func (s *session) releaseLocked() {
	// The agent's turn that follows shows it joined; its wait was published when it was held.
	if s.m.ReleaseNext() >= 0 {
		s.broadcastLocked()
	}
}
