package coord

import "slices"

// Lazy start (ours, after Adaptive-Consistency): most questions are easy, and on an easy question
// every agent writes the same answer, so the calls of all but two of them are paid for nothing.
// A lazy team starts its first agents only; an agent that has answered and sees no other answer
// waits for a second opinion instead of voting for itself, and a held agent joins only when every
// agent in play is done or waiting and the winner is not yet settled. The winner is settled
// (Decided) once enough agents back one answer (its author and its voters) that the held agents,
// all voting against it, could not outvote it. The bet is the one of adaptive consistency: a
// held agent might have written a better answer, and on a question where the first agents agree
// that is rare.

// LazySettings configure lazy start.
type LazySettings struct {
	// Start is how many agents (the first in config order) are in play at first; at least 1.
	Start int
	// Agreement is how many agents must back one answer (its author plus its voters) before the
	// held agents are given up; at least 2, so that one agent never settles a question alone.
	Agreement int
}

const (
	lazyHeldReason  = "lazy start: joins only if the agents in play disagree"
	lazyAloneReason = "lazy start: waits for a second opinion on its answer"
)

func (m *Machine) holdLazy() {
	if m.s.Lazy == nil {
		return
	}
	m.s.Lazy.Start = max(m.s.Lazy.Start, 1)
	m.s.Lazy.Agreement = max(m.s.Lazy.Agreement, 2)
	for i := m.s.Lazy.Start; i < len(m.agents); i++ {
		m.agents[i].held = true
	}
}

// Held reports whether lazy start still keeps agent i out of play.
func (m *Machine) Held(i int) bool { return m.agents[i].held }

// anyHeld reports whether some live agent is still held back.
func (m *Machine) anyHeld() bool {
	for _, a := range m.agents {
		if a.held && !a.dead {
			return true
		}
	}
	return false
}

// awaitingSecondOpinion: under lazy start, an agent whose answer is the only one in play waits
// for a held agent to judge it rather than spend a turn voting for itself.
func (m *Machine) awaitingSecondOpinion(i int) bool {
	if m.s.Lazy == nil || len(m.agents[i].answers) == 0 || !m.anyHeld() {
		return false
	}
	for k, a := range m.agents {
		if k != i && len(a.answers) > 0 {
			return false
		}
	}
	return true
}

// ReleaseNext brings the next held agent into play when the agents in play can do no more (each
// is dead, holds a current vote or waits) and the winner is not settled; it returns the agent, or
// -1 when none joins now. The engine calls it after every change.
func (m *Machine) ReleaseNext() int {
	if m.ended || !m.anyHeld() {
		return -1
	}
	if _, settled := m.Decided(); settled {
		return -1
	}
	next := -1
	for i, a := range m.agents {
		switch {
		case a.dead:
		case a.held:
			if next < 0 {
				next = i
			}
		case m.NeedsTurn(i):
			return -1 // still at work
		}
	}
	if next >= 0 {
		m.agents[next].held = false
	}
	return next
}

// Release brings agent i into play at once: resuming a session whose log shows it at work.
func (m *Machine) Release(i int) { m.agents[i].held = false }

// backers is how many distinct live agents back agent j's current answer: its author and the
// agents whose current vote is for it.
func (m *Machine) backers(j int, voters []int) int {
	n := len(voters)
	if !m.agents[j].dead && !slices.Contains(voters, j) {
		n++
	}
	return n
}
