package engine

import (
	"fmt"
	"slices"
	"time"

	"massgen/internal/event"
)

// Steering a session a Coordinator drives (on Temporal): the acts of Steering, applied by the
// driver in its own goroutine and recorded as ops, so that the replicas the turns run on
// see them. Messages wait in the coordinator for each agent's next turn, which BeginTurn
// opens with them, as a local run delivers them at a turn boundary (agents there have no tool
// rounds to deliver them after).

// StopAgent takes agent id out of the session, as Steering.StopAgent does, and returns its
// index: the driver cancels the turn it is running.
func (x *Coordinator) StopAgent(id string) (int, error) {
	i := x.s.index(id)
	if err := x.steer.StopAgent(id); err != nil {
		return -1, err
	}
	x.ops = append(x.ops, Op{Kind: OpStop, Agent: i})
	return i, nil
}

// AnswerNow ends coordination, as Steering.AnswerNow does.
func (x *Coordinator) AnswerNow() error {
	if err := x.steer.AnswerNow(); err != nil {
		return err
	}
	x.ops = append(x.ops, Op{Kind: OpEnd, Reason: event.EndAnswerNow})
	return nil
}

// Send queues a message for every live agent's next turn, as Steering.Send does.
func (x *Coordinator) Send(text string) error { return x.steer.Send(text) }

// CoordinatorState is a Coordinator between turns, as it travels to a new driver (a workflow
// continued as new): everything else is rebuilt from the ops.
type CoordinatorState struct {
	Ops     []Op      `json:"ops"`
	Start   time.Time `json:"start"`
	Waiting []string  `json:"waiting,omitempty"`
	// Messages are the steering messages sent; Given how many of them each agent has read.
	Messages []string `json:"messages,omitempty"`
	Given    []int    `json:"given,omitempty"`
	// Notes are the broadcast answers made in each agent's name, not yet delivered.
	Notes [][]string `json:"notes,omitempty"`
}

// State is x as ResumeCoordinator takes it up. Call it between turns: a turn running
// elsewhere is not part of it.
func (x *Coordinator) State() CoordinatorState {
	st := x.steer
	st.mu.Lock()
	defer st.mu.Unlock()
	given := make([]int, len(x.s.agents))
	for i := range given {
		given[i] = st.given[i]
	}
	return CoordinatorState{Ops: slices.Clone(x.ops), Start: x.start, Waiting: slices.Clone(x.waiting),
		Messages: slices.Clone(st.messages), Given: given, Notes: x.notesState()}
}

// ResumeCoordinator rebuilds the coordinator State returned, for a session of o, publishing
// nothing: the session's events so far were published by the driver before.
func ResumeCoordinator(o Options, st CoordinatorState) (*Coordinator, error) {
	if st.Given != nil && len(st.Given) != len(o.Agents) || st.Waiting != nil && len(st.Waiting) != len(o.Agents) {
		return nil, fmt.Errorf("engine: the coordinator's state is for %d agents, the session has %d", max(len(st.Given), len(st.Waiting)), len(o.Agents))
	}
	steer := NewSteering()
	steer.messages = slices.Clone(st.Messages)
	for i, n := range st.Given {
		if n > len(st.Messages) {
			return nil, fmt.Errorf("engine: agent %d read %d of %d messages", i, n, len(st.Messages))
		}
		steer.given[i] = n
	}
	o.Steering = steer
	s := replica(o, st.Ops)
	steer.attach(s)
	x := &Coordinator{s: s, ops: slices.Clone(st.Ops), start: st.Start, steer: steer, waiting: make([]string, len(s.agents))}
	copy(x.waiting, st.Waiting)
	x.restoreNotes(st.Notes)
	x.attachBootstrap()
	return x, nil
}
