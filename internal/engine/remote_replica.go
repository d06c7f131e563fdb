package engine

import "massgen/internal/prompt"

// onReplica gives agent i's turn, on the replica that runs it, what the coordinator's
// BeginTurn could not: the coordinator's agents hold no tools (those live where the turns
// run). A conversation not sent yet gets its system prompt from the agent as built here, with
// its tools' notes (memory, skills, code tools), its plan file and its changedoc; and the
// agent's Inbox (the team's memory files, ...) is read at the start of the turn, as Run reads
// it in beginTurnLocked.
func (s *session) onReplica(i int, c *conversation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.sent == 0 && c.system != "" {
		c.system = prompt.SystemFor(s.coordinationPrompt(i)) + s.planningSection()
	}
	s.deliverInboxLocked(i, c)
}
