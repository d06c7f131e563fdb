package event

import (
	"sync"
	"time"
)

// Sink consumes events. Handle is called in Seq order, one event at a time, while the bus is
// locked: it must be quick and must not publish.
type Sink interface{ Handle(Event) }

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Event)

// Handle calls f(e).
func (f SinkFunc) Handle(e Event) { f(e) }

// Bus numbers events and hands each to every sink in order. It is safe for concurrent use.
type Bus struct {
	mu    sync.Mutex
	seq   int64
	sinks []Sink
	now   func() time.Time
}

// NewBus returns a bus that stamps events with now (time.Now when nil).
func NewBus(now func() time.Time) *Bus {
	if now == nil {
		now = time.Now
	}
	return &Bus{now: now}
}

// Subscribe adds a sink; it sees only events published afterwards.
func (b *Bus) Subscribe(s Sink) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sinks = append(b.sinks, s)
}

// ResumeAt makes the next event number seq+1: a resumed session's log goes on where the one
// before stopped, without a gap. Call it before the first Publish.
func (b *Bus) ResumeAt(seq int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq = seq
}

// Publish stamps p and delivers it to every sink before returning.
func (b *Bus) Publish(p Payload) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e := Event{Seq: b.seq, Time: b.now(), Payload: p}
	for _, s := range b.sinks {
		s.Handle(e)
	}
	return e
}
