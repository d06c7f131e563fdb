package engine

import (
	"context"
	"fmt"
	"io/fs"
	"iter"
	"path/filepath"
	"runtime"
	"strings"
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
	peakHeap := samplePeakHeap(5 * time.Millisecond)
	start := time.Now()
	res := Run(b.Context(), Options{Question: "What is the capital of France?", Agents: agents, Bus: bus})
	if rec != nil {
		if err := rec.Close(); err != nil {
			b.Fatal(err)
		}
	}
	wall := time.Since(start)
	peak = peakHeap()
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

// hostile streams, on its first coordination call, a flood of text or of tool calls, and
// behaves from then on.
type hostile struct {
	text  int // bytes of text, in 64 KiB chunks
	calls int // tool calls
	after *fake
	n     atomic.Int64
}

func (h *hostile) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	if h.n.Add(1) > 1 || req.Stage == provider.StagePresentation {
		return h.after.Stream(ctx, req)
	}
	return func(yield func(provider.Chunk, error) bool) {
		chunk := strings.Repeat("flood ", 64<<10/6)
		for sent := 0; sent < h.text; sent += len(chunk) {
			if !yield(provider.TextDelta{Text: chunk}, nil) {
				return
			}
		}
		for k := range h.calls {
			if !yield(provider.ToolCallChunk{Call: provider.ToolCall{ID: fmt.Sprintf("t%d", k), Name: "search", Arguments: `{"q":"again and again"}`}}, nil) {
				return
			}
		}
		yield(provider.Done{StopReason: "stop"}, nil)
	}
}

// BenchmarkHostileOutput measures what one hostile response costs: 50 MB of text, or 10,000
// tool calls, in one response of one of two agents, with the on-disk log. Run with:
//
//	go test -run '^$' -bench HostileOutput -benchtime 3x ./internal/engine/
func BenchmarkHostileOutput(b *testing.B) {
	for _, tc := range []struct {
		name string
		h    func() *hostile
	}{
		{"text=50MB", func() *hostile { return &hostile{text: 50 << 20} }},
		{"toolcalls=10000", func() *hostile { return &hostile{calls: 10_000} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var peak, alloc, logged uint64
			for b.Loop() {
				p, a, l := hostileSession(b, tc.h())
				peak, alloc, logged = max(peak, p), max(alloc, a), max(logged, l)
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(alloc)/(1<<20), "alloc-MiB")
			b.ReportMetric(float64(logged)/(1<<20), "log-MiB")
		})
	}
}

func hostileSession(b *testing.B, h *hostile) (peak, alloc, logged uint64) {
	h.after = answerThenVote("Paris, France.", "agent1")
	dir := b.TempDir() + "/turn_1"
	rec, err := runlog.NewRecorder(dir, runlog.Meta{})
	if err != nil {
		b.Fatal(err)
	}
	bus := event.NewBus(nil)
	bus.Subscribe(rec)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peakHeap := samplePeakHeap(2 * time.Millisecond)
	res := Run(b.Context(), Options{Question: "What is the capital of France?", Bus: bus,
		Agents: agents(answerThenVote("Paris.", "agent1"), h), RetryDelay: func(int) time.Duration { return 0 }})
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	peak = peakHeap()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if res.ExitCode != 0 {
		b.Fatalf("session failed: %+v", res)
	}
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				logged += uint64(info.Size())
			}
		}
		return nil
	})
	return peak, after.TotalAlloc - before.TotalAlloc, logged
}

// samplePeakHeap samples the heap every d until the returned function is called, which
// returns the largest HeapAlloc seen.
func samplePeakHeap(d time.Duration) func() uint64 {
	var stop atomic.Bool
	var peak uint64
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for !stop.Load() {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			time.Sleep(d)
		}
	})
	return func() uint64 {
		stop.Store(true)
		wg.Wait()
		return peak
	}
}
