package engine

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/scripted"
	"massgen/internal/runlog"
)

// BenchmarkOrchestration measures what the engine adds on top of waiting for models: N scripted
// agents whose every call takes a fixed latency, with and without the on-disk log. The ideal
// wall time is the latency times the longest chain of sequential calls any agent made (plus the
// presentation call); wall/ideal is the overhead ratio. Run with:
//
//	go test -run '^$' -bench Orchestration -benchtime 3x ./internal/engine/
func BenchmarkOrchestration(b *testing.B) {
	const latency = 200 * time.Millisecond
	for _, n := range []int{3, 10, 100} {
		for _, logged := range []bool{false, true} {
			name := fmt.Sprintf("agents=%d/log=%v", n, logged)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				var ratio float64
				var peak uint64
				for b.Loop() {
					r, p := benchSession(b, n, latency, logged)
					ratio += r
					peak = max(peak, p)
				}
				b.ReportMetric(ratio/float64(b.N), "wall/ideal")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

func benchSession(b *testing.B, n int, latency time.Duration, logged bool) (ratio float64, peak uint64) {
	agents := make([]Agent, n)
	for i := range agents {
		s := config.Script{
			Answers: []string{fmt.Sprintf("Answer %d: Paris is the capital of France, on the Seine, with about two million people.", i)},
			Vote:    "first", Latency: latency,
		}
		agents[i] = Agent{ID: fmt.Sprintf("agent_%d", i), Backend: "scripted", Model: "scripted", Provider: scripted.New(s, "scripted")}
	}
	bus := event.NewBus(nil)
	calls := make(map[string]int)
	var mu sync.Mutex
	bus.Subscribe(event.SinkFunc(func(e event.Event) {
		if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Stage != provider.StagePresentation {
			mu.Lock()
			calls[mc.Agent]++
			mu.Unlock()
		}
	}))
	var rec *runlog.Recorder
	if logged {
		var err error
		if rec, err = runlog.NewRecorder(b.TempDir()+"/turn_1", runlog.Meta{}); err != nil {
			b.Fatal(err)
		}
		bus.Subscribe(rec)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for !stop.Load() {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			time.Sleep(5 * time.Millisecond)
		}
	})
	start := time.Now()
	res := Run(b.Context(), Options{Question: "What is the capital of France?", Agents: agents, Bus: bus})
	if rec != nil {
		if err := rec.Close(); err != nil {
			b.Fatal(err)
		}
	}
	wall := time.Since(start)
	stop.Store(true)
	wg.Wait()
	if res.ExitCode != 0 {
		b.Fatalf("session failed: %+v", res)
	}
	longest := 0
	for _, c := range calls {
		longest = max(longest, c)
	}
	ideal := time.Duration(longest+1) * latency
	return float64(wall) / float64(ideal), peak
}
