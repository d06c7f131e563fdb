package readmodel

import (
	"time"

	"massgen/internal/event"
)

// Subagent is one subagent an agent started (spawn_subagents): a nested session with its own
// log folder, which every view names so that it can be opened.
type Subagent struct {
	ID, Kind, Task string
	Background     bool
	LogDir         string // its turn folder, "" without logs
	// Status is "running" until it ends, then one of SubagentFinished's statuses.
	Status  string
	Answer  string
	Error   string
	CostUSD float64
	Started time.Time
}

// SubagentRunning is a Subagent's Status until it ends.
const SubagentRunning = "running"

func (s *State) subagentStarted(t time.Time, p event.SubagentStarted) {
	s.touch(p.Agent, t, func(a *Agent) {
		a.Subagents = append(a.Subagents, Subagent{ID: p.ID, Kind: p.Kind, Task: p.Task, Background: p.Background,
			LogDir: p.LogDir, Status: SubagentRunning, Started: t})
	})
}

func (s *State) subagentFinished(t time.Time, p event.SubagentFinished) {
	s.touch(p.Agent, t, func(a *Agent) {
		for k := range a.Subagents {
			if sa := &a.Subagents[k]; sa.ID == p.ID {
				sa.Status, sa.Answer, sa.Error, sa.CostUSD = p.Status, p.Answer, p.Error, p.CostUSD
				if p.LogDir != "" {
					sa.LogDir = p.LogDir
				}
				return
			}
		}
		a.Subagents = append(a.Subagents, Subagent{ID: p.ID, Background: p.Background, LogDir: p.LogDir, Status: p.Status,
			Answer: p.Answer, Error: p.Error, CostUSD: p.CostUSD, Started: t})
	})
}
