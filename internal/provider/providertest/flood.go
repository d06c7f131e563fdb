package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/provider"
)

// Flood is a response that never stops growing inside what a backend must assemble before the
// engine sees it: one tool call's arguments, one event, text held back.
type Flood struct {
	// Name the case.
	Name string
	// ContentType of the stream (text/event-stream for SSE).
	ContentType string
	// Head opens the stream, up to where Piece starts being repeated.
	Head string
	// Piece returns what adds p to the growing value: a delta event, or p itself when the
	// value is one event or one line.
	Piece func(p string) string
	// New builds the backend under test, pointed at baseURL.
	New func(baseURL string) provider.Provider
	// Request, when set, replaces Request() (to switch a backend's mode).
	Request func() provider.Request
}

// Flood sizes: the server would send FloodBytes; the backend is told FloodLimit.
const (
	FloodBytes = 20 << 20
	FloodLimit = 256 << 10
	floodPiece = 16 << 10
	// floodHeap bounds how far the heap may grow while the backend reads the flood, garbage
	// not yet collected included; holding the flood would take FloodBytes.
	floodHeap = 12 << 20
)

// RunFlood serves f until the backend stops reading, and checks that it stopped with a
// non-fatal *provider.Error wrapping provider.ErrResponseTooLarge, promptly, far short of the
// flood, and without allocating anything near its size.
func RunFlood(t *testing.T, f Flood) {
	t.Helper()
	t.Run(f.Name, func(t *testing.T) {
		piece := []byte(f.Piece(strings.Repeat("A", floodPiece)))
		var sent atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", f.ContentType)
			w.WriteHeader(http.StatusOK)
			if _, err := w.Write([]byte(f.Head)); err != nil {
				return
			}
			for sent.Load() < FloodBytes {
				if _, err := w.Write(piece); err != nil || r.Context().Err() != nil {
					return
				}
				sent.Add(floodPiece)
			}
			// The flood ends as if the response did not: a backend that read it all fails
			// the test by its allocations.
		}))
		defer srv.Close()
		req := Request()
		if f.Request != nil {
			req = f.Request()
		}
		req.MaxResponseBytes = FloodLimit
		p := f.New(srv.URL)

		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		runtime.GC()
		base := heap()
		peak := make(chan uint64)
		stop := make(chan struct{})
		go func() { // sampled, since whatever the backend held is garbage once it returns
			max := base
			tick := time.NewTicker(time.Millisecond)
			defer tick.Stop()
			for {
				max = maxOf(max, heap())
				select {
				case <-stop:
					peak <- max
					return
				case <-tick.C:
				}
			}
		}()
		start := time.Now()
		r := Collect(ctx, p, req)
		elapsed := time.Since(start)
		close(stop)
		grew := <-peak - base

		var pe *provider.Error
		if !errors.As(r.Err, &pe) || pe.Fatal || !errors.Is(r.Err, provider.ErrResponseTooLarge) {
			t.Errorf("the stream ended with %v (%T), want a non-fatal *provider.Error wrapping ErrResponseTooLarge", r.Err, r.Err)
		}
		if !strings.Contains(r.Err.Error(), "stopped reading") {
			t.Errorf("error %q does not say the backend stopped reading", r.Err)
		}
		if len(r.Calls) != 0 || r.Done {
			t.Errorf("got %d calls, done %v from a response that never ended", len(r.Calls), r.Done)
		}
		if elapsed > 10*time.Second {
			t.Errorf("took %s to stop", elapsed)
		}
		if grew > floodHeap {
			t.Errorf("the heap grew by %d bytes reading a flood cut at %d (want under %d)", grew, FloodLimit, floodHeap)
		}
		srv.CloseClientConnections()
		if n := sent.Load(); n >= FloodBytes {
			t.Errorf("the server sent all %d bytes: the backend did not stop reading", n)
		}
		t.Logf("stopped after %s, heap grew by at most %d bytes, server sent %d: %v", elapsed, grew, sent.Load(), r.Err)
	})
}

func heap() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func maxOf(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
