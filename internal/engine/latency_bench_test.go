package engine

import (
	"fmt"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider/scripted"
	"massgen/internal/readmodel"
)

// BenchmarkLatency compares a session's wall time with one agent's single call on the same
// fake (every call waits latency), as a ratio, and reports the critical path next to it. A
// plain session is at least three calls deep (answer, vote, presentation); winner_reuse cuts
// the presentation and end_when_decided the wait for the slowest vote. Run with:
//
//	go test -run '^$' -bench Latency -benchtime 3x ./internal/engine/
func BenchmarkLatency(b *testing.B) {
	const latency = 100 * time.Millisecond
	single := func() time.Duration {
		s := config.Script{Answers: []string{"Paris."}, Latency: latency}
		start := time.Now()
		res := Run(b.Context(), Options{Question: "q", Agents: []Agent{{ID: "solo", Backend: "scripted", Provider: scripted.New(s, "m")}},
			Orchestrator: config.Orchestrator{SkipVoting: true, FinalAnswerStrategy: config.StrategyWinnerReuse}})
		if res.ExitCode != 0 {
			b.Fatalf("single call: %+v", res)
		}
		return time.Since(start)
	}
	for _, tc := range []struct {
		name string
		orch config.Orchestrator
	}{
		{"default", config.Orchestrator{}},
		{"winner_reuse", config.Orchestrator{FinalAnswerStrategy: config.StrategyWinnerReuse}},
		{"winner_reuse+end_when_decided", config.Orchestrator{FinalAnswerStrategy: config.StrategyWinnerReuse, EndWhenDecided: true}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var ratio, path float64
			for b.Loop() {
				base := single()
				wall, cp := latencySession(b, tc.orch, latency)
				ratio += wall.Seconds() / base.Seconds()
				path += cp.Path.Seconds() / base.Seconds()
			}
			b.ReportMetric(ratio/float64(b.N), "wall/single-call")
			b.ReportMetric(path/float64(b.N), "critical-path/single-call")
		})
	}
}

// latencySession runs three agents, the third three times slower, that all vote for agent1.
func latencySession(b *testing.B, o config.Orchestrator, latency time.Duration) (time.Duration, readmodel.CriticalPath) {
	agents := make([]Agent, 3)
	for i := range agents {
		s := config.Script{Answers: []string{fmt.Sprintf("Answer %d: Paris.", i)}, Vote: "agent1", Latency: latency}
		if i == 2 {
			s.Latency = 3 * latency
		}
		agents[i] = Agent{ID: fmt.Sprintf("a%d", i+1), Backend: "scripted", Provider: scripted.New(s, "m")}
	}
	var calls readmodel.Calls
	bus := event.NewBus(nil)
	var end time.Time
	bus.Subscribe(event.SinkFunc(func(e event.Event) {
		calls.Apply(e)
		if _, ok := e.Payload.(event.SessionEnded); ok {
			end = e.Time
		}
	}))
	start := time.Now()
	res := Run(b.Context(), Options{Question: "q", Agents: agents, Bus: bus, Orchestrator: o})
	wall := time.Since(start)
	if res.ExitCode != 0 {
		b.Fatalf("session: %+v", res)
	}
	return wall, calls.CriticalPath(end)
}
