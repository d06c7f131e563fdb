package coord

import (
	"fmt"

	"massgen/internal/criteria"
)

// AdoptChecklist records a checklist that agent i's turn had accepted on another copy of this
// machine (a remote driver's replica, which ran SubmitChecklist), with the proposals it took:
// the agent acts on the verdict it read, so this machine enforces that one rather than
// scoring again on a state the agent did not see. Proposals merge here by text, as they did
// there; it returns the criteria they added and the ids evicted. A checklist of an agent out of
// the session, or after the end, changes nothing.
func (m *Machine) AdoptChecklist(i int, c Checklist, props []criteria.Proposal) (added []criteria.Criterion, evicted []string, err error) {
	switch {
	case !m.Gated():
		return nil, nil, fmt.Errorf("coord: a checklist, and votes are not checklist_gated")
	case i < 0 || i >= len(m.agents):
		return nil, nil, fmt.Errorf("coord: checklist of agent %d of %d", i+1, len(m.agents))
	case m.ended || m.agents[i].dead:
		return nil, nil, nil
	}
	if err := m.checkChecklist(i, &c); err != nil {
		return nil, nil, err
	}
	st := &m.agents[i]
	st.checklist = &c
	st.checklistCalls++
	if len(props) == 0 {
		return nil, nil, nil
	}
	st.proposed += len(props)
	added, evicted = m.acc.Merge(props)
	return added, evicted, nil
}
