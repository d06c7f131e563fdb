package coord

import (
	"fmt"
	"slices"
)

// Restored is the protocol state a session reached before its process stopped, as its log
// recorded it: what Restore puts back.
type Restored struct {
	// Answers are every accepted answer in the order accepted: Version 1, 2, ...
	Answers []Answer
	// Votes are the votes still current, one per voter at most: cast on the latest answer
	// set, or, with a View (a bounded view), on answers none of which was replaced since.
	Votes []Vote
	// Dead lists the agents left out; Failures[i] is agent i's consecutive failed turns
	// (nil: none); Deferred lists the agents whose vote was held back (DeferVoting).
	Dead     []int
	Failures []int
	Deferred []int
	// Stops are the stops still current (decomposition mode), one per agent at most.
	Stops []Stop
	// Checklists are the agents' latest accepted checklists (checklist_gated), by agent: their
	// Version, Verdict, Gate and Scores (Best is ranked again from the scores).
	Checklists map[int]Checklist
}

// Restore puts r into a Machine that has not accepted anything yet, checking that it is a
// state the protocol can reach: a log that says otherwise is refused rather than misread.
func (m *Machine) Restore(r Restored) error {
	if m.version != 0 || m.ended {
		return fmt.Errorf("coord: restore into a machine that has started")
	}
	n := len(m.agents)
	for k, a := range r.Answers {
		if a.Agent < 0 || a.Agent >= n {
			return fmt.Errorf("coord: answer %s is by agent %d of %d", a.Label, a.Agent+1, n)
		}
		if a.Version != k+1 {
			return fmt.Errorf("coord: answer %s starts version %d where %d comes next", a.Label, a.Version, k+1)
		}
		if want := fmt.Sprintf("%s.%d", Label(a.Agent), len(m.agents[a.Agent].answers)+1); a.Label != want {
			return fmt.Errorf("coord: answer %s where %s comes next", a.Label, want)
		}
		m.agents[a.Agent].answers = append(m.agents[a.Agent].answers, a)
		m.agents[a.Agent].held = false // lazy start had let it join
		m.version = a.Version
	}
	for _, i := range r.Dead {
		if i < 0 || i >= n {
			return fmt.Errorf("coord: dead agent %d of %d", i+1, n)
		}
		m.agents[i].dead = true
	}
	for _, v := range r.Votes {
		switch {
		case v.Voter < 0 || v.Voter >= n || v.Target < 0 || v.Target >= n:
			return fmt.Errorf("coord: vote of agent %d for agent %d of %d", v.Voter+1, v.Target+1, n)
		case len(v.View) > n:
			return fmt.Errorf("coord: %s's vote was cast on a view of %d agents of %d", Label(v.Voter), len(v.View), n)
		case v.View != nil && !m.viewCurrent(v.View):
			return fmt.Errorf("coord: %s's vote was cast on answers it was shown that have since been replaced", Label(v.Voter))
		case v.View == nil && v.Version != m.version:
			return fmt.Errorf("coord: %s's vote was cast on version %d, not the current %d", Label(v.Voter), v.Version, m.version)
		case len(m.agents[v.Target].answers) == 0:
			return fmt.Errorf("coord: %s voted for %s, which has no answer", Label(v.Voter), Label(v.Target))
		case m.agents[v.Voter].vote != nil:
			return fmt.Errorf("coord: %s votes twice", Label(v.Voter))
		case m.agents[v.Voter].dead:
			continue // a dead agent's vote does not count
		}
		m.agents[v.Voter].vote = &v
		m.agents[v.Voter].held = false
	}
	for i, f := range r.Failures {
		if i < n && f > 0 {
			m.agents[i].failures = f
		}
	}
	for _, i := range r.Deferred {
		if i >= 0 && i < n {
			m.agents[i].deferred = true
		}
	}
	if err := m.restoreStops(r.Stops); err != nil {
		return err
	}
	return m.restoreChecklists(r.Checklists)
}

// restoreChecklists puts back the agents' latest checklists, so that a vote their verdict
// allowed before the stop is still allowed.
func (m *Machine) restoreChecklists(cks map[int]Checklist) error {
	if len(cks) == 0 {
		return nil
	}
	if !m.Gated() {
		return fmt.Errorf("coord: the log holds checklists, and votes are not checklist_gated")
	}
	for i, c := range cks {
		if i < 0 || i >= len(m.agents) {
			return fmt.Errorf("coord: checklist of agent %d of %d", i+1, len(m.agents))
		}
		if err := m.checkChecklist(i, &c); err != nil {
			return err
		}
		m.agents[i].checklist = &c
	}
	return nil
}

// checkChecklist checks that agent i's checklist c, as recorded elsewhere (a log, another
// copy of the machine), is one this machine could have accepted, and ranks its answers again
// (the agents behind the labels are not recorded).
func (m *Machine) checkChecklist(i int, c *Checklist) error {
	n := len(m.agents)
	if c.Version < 0 || c.Version > m.version {
		return fmt.Errorf("coord: %s's checklist scored version %d, past the %d accepted", Label(i), c.Version, m.version)
	}
	c.Scores = slices.Clone(c.Scores)
	for k, sc := range c.Scores {
		j := ParseLabel(sc.Label, n)
		if j < 0 {
			return fmt.Errorf("coord: %s's checklist scores %q, which is not an agent", Label(i), sc.Label)
		}
		c.Scores[k].Agent = j
	}
	if c.Verdict != VerdictVote && c.Verdict != VerdictNewAnswer || c.Verdict == VerdictVote && len(c.Scores) == 0 {
		return fmt.Errorf("coord: %s's checklist has verdict %q on %d scored answers", Label(i), c.Verdict, len(c.Scores))
	}
	c.Best, c.BestLabel = nil, ""
	m.rank(c)
	return nil
}

// AnswersOf returns agent i's accepted answers, oldest first.
func (m *Machine) AnswersOf(i int) []Answer { return append([]Answer(nil), m.agents[i].answers...) }
