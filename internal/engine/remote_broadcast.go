package engine

import (
	"fmt"
	"slices"

	"massgen/internal/coord"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// Broadcast (ask_others with broadcast: agents) in a turn run on a replica: the asker's
// replica makes the side calls with the other agents' providers, reading each one's
// conversation as the driver last saw it (Options.PeerContext); what those calls spent is
// the answering agents' (TurnOutcome.Side), and what they answered in an agent's name reaches
// that agent at its next turn (TurnOutcome.Notes, kept by the coordinator).

// Spend is what one agent's calls cost in another agent's turn.
type Spend struct {
	Agent int            `json:"agent"`
	Usage provider.Usage `json:"usage,omitzero"`
	Cost  float64        `json:"cost,omitempty"`
}

// questionsOf numbers the questions of agent i's turn in round apart from every other
// turn's, each of which is a replica numbering from one: "bc_agent2.3_1".
func (s *session) questionsOf(i, round int) {
	if s.bc != nil {
		s.bc.prefix = fmt.Sprintf("%s.%d_", coord.Label(i), round)
	}
}

// sideSpending adds up, from the replica's events, the usage of other agents than i; the
// returned func reports it per agent once the turn is over.
func (s *session) sideSpending(i int) func() []Spend {
	if s.bc == nil {
		return func() []Spend { return nil }
	}
	spent := make([]Spend, len(s.agents))
	s.o.Bus.Subscribe(event.SinkFunc(func(e event.Event) {
		u, ok := e.Payload.(event.UsageReported)
		if k := s.index(u.Agent); ok && k >= 0 && k != i {
			spent[k].Usage = spent[k].Usage.Add(u.Usage)
			spent[k].Cost += u.CostUSD
		}
	}))
	return func() []Spend {
		var out []Spend
		for k, sp := range spent {
			if sp.Usage != (provider.Usage{}) || sp.Cost != 0 {
				sp.Agent = k
				out = append(out, sp)
			}
		}
		return out
	}
}

// takeNotes are the replica's notes for the other agents, by id, taken from it.
func (s *session) takeNotes() map[string][]string {
	if s.bc == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string][]string
	for k, ns := range s.bc.notes {
		if len(ns) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[s.agents[k].ID] = ns
		s.bc.notes[k] = nil
	}
	return out
}

// keepNotes keeps a turn's notes for the agents they were answered for, until their next
// turn begins (beginTurnLocked delivers them).
func (x *Coordinator) keepNotes(notes map[string][]string) {
	s := x.s
	if s.bc == nil {
		return
	}
	for id, ns := range notes {
		if k := s.index(id); k >= 0 {
			s.bc.notes[k] = append(s.bc.notes[k], ns...)
		}
	}
}

// notesState and restoreNotes carry the notes not yet delivered across a driver's restart.
func (x *Coordinator) notesState() [][]string {
	if x.s.bc == nil {
		return nil
	}
	out := make([][]string, len(x.s.bc.notes))
	for k, ns := range x.s.bc.notes {
		out[k] = slices.Clone(ns)
	}
	return out
}

func (x *Coordinator) restoreNotes(notes [][]string) {
	if x.s.bc == nil || len(notes) != len(x.s.bc.notes) {
		return
	}
	for k, ns := range notes {
		x.s.bc.notes[k] = slices.Clone(ns)
	}
}
