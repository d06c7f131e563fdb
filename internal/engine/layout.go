package engine

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"massgen/internal/config"
	"massgen/internal/coord"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// A session's requests are laid out for the providers' prompt caches (P10): in provider order
// (tools, system, messages) everything that repeats comes first. With turn_context: shared
// every turn starts over from the prefix all agents on the same answers share (the task, then
// the answers in label order, marked Stable), and what is the agent's own (its label, what
// happened since its last turn) comes last; within a turn the conversation only grows. A turn
// thus reads the answers unchanged since the last request from the cache, whichever agent
// sent it.

// sharedTurns reports whether every turn starts from the shared prefix (turn_context: shared).
func (s *session) sharedTurns() bool { return s.o.Orchestrator.TurnContext != config.TurnContinue }

// sharedTurnsFor reports whether agent i's turns start from the shared prefix: not for an
// agent whose provider holds its own session, which is continued instead.
func (s *session) sharedTurnsFor(i int) bool { return s.sharedTurns() && !s.agents[i].HoldsSession }

// boundedView reports whether agents read a bounded view of their peers (peer_view), which
// peer_view: auto chooses past PeerViewAutoAbove agents. It needs turn_context: shared.
func boundedView(o config.Orchestrator, agents int) bool {
	if o.TurnContext == config.TurnContinue {
		return false
	}
	switch o.PeerView {
	case config.PeerViewBounded:
		return true
	case config.PeerViewAll:
		return false
	}
	return agents > config.PeerViewAutoAbove
}

// sharedTurnLocked starts agent i's turn round from the shared prefix; s.mu must be held.
func (s *session) sharedTurnLocked(i int, c *conversation, round int) {
	if c.system == "" {
		c.system = prompt.SystemFor(s.coordinationPrompt(i)) + s.planningSection()
	}
	view := s.viewLocked(i, round)
	c.shown = make([]int, len(s.agents))
	if s.bounded {
		c.view = make([]bool, len(s.agents))
		for _, a := range view {
			c.view[a.Agent] = true
		}
	}
	s.markShown(c, view)
	c.ownShown = s.m.AnswerCount(i)
	c.msgs = []provider.Message{{Role: provider.RoleUser, Content: s.userPrompt(i, s.visible(view)), Stable: true}}
	own := ""
	if _, ok := s.m.Current(i); ok {
		own = coord.Label(i)
	}
	total := len(s.m.CurrentAnswers())
	if tail := s.turnTail(own, c.lead, len(view), total); tail != "" {
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleUser, Content: tail})
	}
	c.sent, c.accepted, c.lead = 0, "", ""
}

// viewLocked returns the current answers agent i reads in its turn round, in the order the
// prompt shows them; s.mu must be held. Without a bounded view that is every current answer in
// label order. With one it is at most peer_view_size answers of its peers and its own: first
// the leaders by current votes (up to half the size, ties by label), common to every agent,
// then a sample of the others that starts at a place of its own and moves on each turn, so
// that every answer is read by some agents, each group in label order.
func (s *session) viewLocked(i, round int) []coord.Answer {
	current := s.m.CurrentAnswers()
	if !s.bounded {
		return current
	}
	size := s.o.Orchestrator.PeerViewSize
	votes := map[int]int{}
	for _, t := range s.m.Winner().Tally {
		votes[t.Agent] = t.Votes
	}
	var peers []coord.Answer
	var own []coord.Answer
	for _, a := range current {
		if a.Agent == i {
			own = append(own, a)
		} else {
			peers = append(peers, a)
		}
	}
	if len(peers) <= size {
		return current
	}
	byVotes := slices.Clone(peers)
	slices.SortStableFunc(byVotes, func(a, b coord.Answer) int { return cmp.Compare(votes[b.Agent], votes[a.Agent]) })
	var leaders []coord.Answer
	for _, a := range byVotes[:(size+1)/2] {
		if votes[a.Agent] > 0 {
			leaders = append(leaders, a)
		}
	}
	rest := slices.DeleteFunc(slices.Clone(peers), func(a coord.Answer) bool {
		return slices.ContainsFunc(leaders, func(l coord.Answer) bool { return l.Agent == a.Agent })
	})
	n := size - len(leaders)
	start := ((i + round - 1) * n) % len(rest)
	sample := append(own, rest[start:min(start+n, len(rest))]...)
	if start+n > len(rest) {
		sample = append(sample, rest[:start+n-len(rest)]...)
	}
	return append(inAgentOrder(leaders), inAgentOrder(sample)...)
}

// unseenLocked is what agent i has not been shown of the current answers of the peers it
// reads (all of them without a bounded view), newest first; s.mu must be held.
func (s *session) unseenLocked(i int, c *conversation) []coord.Answer {
	news := s.m.Unseen(i, c.shown)
	if c.view != nil {
		news = slices.DeleteFunc(news, func(a coord.Answer) bool { return !c.view[a.Agent] })
	}
	return news
}

// cacheKey names the requests of agents on one model asking one question (OpenAI's
// prompt_cache_key): they share their prefix. It is a hash, so the question stays out of
// the request's metadata.
func (s *session) cacheKey(model string) string {
	h := sha256.Sum256([]byte(model + "\x00" + s.o.Question))
	return "massgen-" + hex.EncodeToString(h[:8])
}
