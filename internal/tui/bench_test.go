package tui

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"massgen/internal/event"
)

// BenchmarkStream applies 10k text deltas spread over the agents, re-rendering after every
// 16 ms worth of events at 100 tokens/s per agent (one frame at 60 FPS), and reports the cost
// per event. No timing is asserted.
func BenchmarkStream(b *testing.B) {
	cases := []struct {
		agents, w, h int
	}{
		{100, 160, 48}, // tabs
		{100, 80, 24},  // tabs
		{5, 160, 48},   // columns
	}
	const total = 10_000
	words := []string{"Go ", "is ", "a ", "language ", "with ", "goroutines, ", "channels ", "and\n", "interfaces. "}
	for _, c := range cases {
		b.Run(fmt.Sprintf("%dagents_%dx%d", c.agents, c.w, c.h), func(b *testing.B) {
			s := started(c.agents)
			for _, a := range s.events[0].Payload.(event.SessionStarted).Agents {
				s.add(0, event.TurnStarted{Agent: a.ID, Fresh: true})
			}
			head := len(s.events)
			agents := s.events[0].Payload.(event.SessionStarted).Agents
			for i := range total {
				a := agents[i%len(agents)].ID
				var p event.Payload = event.TextDelta{Agent: a, Text: words[i%len(words)]}
				if i%10 == 0 {
					p = event.ReasoningDelta{Agent: a, Text: "thinking about it "}
				}
				s.add(time.Second/time.Duration(100*len(agents)), p)
			}
			start, deltas := s.events[:head], s.events[head:]
			perFrame := max(len(agents)*100*16/1000, 1) // events in 16 ms
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ReportAllocs()
			for b.Loop() {
				m := New()
				m.Update(tea.WindowSizeMsg{Width: c.w, Height: c.h})
				m.Update(EventBatchMsg{Events: start})
				for i := 0; i < len(deltas); i += perFrame {
					m.Update(EventBatchMsg{Events: deltas[i:min(i+perFrame, len(deltas))]})
					_ = m.View()
				}
			}
			runtime.ReadMemStats(&after)
			n := float64(b.N * total)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/event")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/event")
		})
	}
}
