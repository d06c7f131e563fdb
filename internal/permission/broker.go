package permission

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// ErrNoAsk is an answer to an ask that is not waiting (never made, or already decided).
var ErrNoAsk = errors.New("no such ask is waiting")

// Broker hands a person's answers to the asks waiting for them. The views that can answer
// (the live view, the dashboard) share one with the sessions they show; its ask IDs are
// unique for its lifetime.
type Broker struct {
	mu      sync.Mutex
	seq     int
	pending map[string]chan string
}

// NewBroker returns a broker with no asks waiting.
func NewBroker() *Broker { return &Broker{pending: map[string]chan string{}} }

// newID returns the next ID.
func (b *Broker) newID() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	return "ask_" + strconv.Itoa(b.seq)
}

// Answer decides the waiting ask id: decision is "allow" or "deny".
func (b *Broker) Answer(id, decision string) error {
	if decision != Allow && decision != Deny {
		return fmt.Errorf("decision %q: use allow or deny", clip(decision))
	}
	b.mu.Lock()
	ch, ok := b.pending[id]
	if ok {
		delete(b.pending, id)
	}
	b.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoAsk, clip(id))
	}
	ch <- decision // buffered: the waiter may have given up already
	return nil
}

// open registers ask id before anybody is told of it, so an answer that comes at once is
// not lost.
func (b *Broker) open(id string) chan string {
	ch := make(chan string, 1)
	b.mu.Lock()
	b.pending[id] = ch
	b.mu.Unlock()
	return ch
}

// wait returns the answer to id, or "" with why nobody gave one (timeout or the context).
// It holds no lock while it waits.
func (b *Broker) wait(ctx context.Context, id string, ch chan string, timeout time.Duration) (decision, by string) {
	defer func() {
		b.mu.Lock()
		delete(b.pending, id)
		b.mu.Unlock()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case d := <-ch:
		return d, "person"
	case <-t.C:
		return "", "timeout"
	case <-ctx.Done():
		return "", "cancelled"
	}
}

// Waiting reports how many asks wait for an answer.
func (b *Broker) Waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}
