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

// Broker hands a person's answers to the asks waiting for them: the permission asks (allow or
// deny) and the questions agents ask the person with ask_others (broadcast: human; any text).
// The views that can answer (the live view, the terminal, the dashboard, an --inbox-dir) share
// one with the sessions they show; its ask IDs are unique for its lifetime, and a session
// names its questions itself ("bc_1", ...) so they never take a permission ask's ID.
type Broker struct {
	mu      sync.Mutex
	seq     int
	pending map[string]waiting
}

// waiting is one ask waiting for its answer.
type waiting struct {
	ch       chan string
	question bool // a question (free text) rather than a permission ask (allow or deny)
	// forward takes the answer instead of ch: the ask waits somewhere else (Forward).
	forward func(answer string)
}

// MaxReply caps a person's answer to a question, in bytes.
const MaxReply = 16 << 10

// NewBroker returns a broker with no asks waiting.
func NewBroker() *Broker { return &Broker{pending: map[string]waiting{}} }

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
	return b.give(id, decision, false)
}

// Reply answers the waiting question id with text; empty text skips it (the asking agent is
// told the person chose not to answer).
func (b *Broker) Reply(id, text string) error {
	if len(text) > MaxReply {
		return fmt.Errorf("the answer is %d bytes, over the %d-byte limit", len(text), MaxReply)
	}
	return b.give(id, text, true)
}

// give hands answer to ask id if it is waiting and of the kind the answer is for.
func (b *Broker) give(id, answer string, question bool) error {
	b.mu.Lock()
	w, ok := b.pending[id]
	switch {
	case !ok:
		b.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrNoAsk, clip(id))
	case w.question != question && question:
		b.mu.Unlock()
		return fmt.Errorf("%s is a permission ask: answer it with allow or deny", clip(id))
	case w.question != question:
		b.mu.Unlock()
		return fmt.Errorf("%s is a question: answer it with text", clip(id))
	}
	delete(b.pending, id)
	b.mu.Unlock()
	if w.forward != nil {
		w.forward(answer)
		return nil
	}
	w.ch <- answer // buffered: the waiter may have given up already
	return nil
}

// Forward takes the answer to permission ask id, made somewhere else (a worker on Temporal,
// whose gate waits there), and hands it to forward, which must not block; withdraw forgets
// the ask once it was decided there. An id already waiting is left as it is.
func (b *Broker) Forward(id string, forward func(answer string)) (withdraw func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.pending[id]; dup {
		return func() {}
	}
	b.pending[id] = waiting{forward: forward}
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if w, ok := b.pending[id]; ok && w.forward != nil {
			delete(b.pending, id)
		}
	}
}

// Question waits for a person's answer to question id, announced by announce once an answer
// can be taken. It returns the answer and "person", or "" and why none came: "timeout",
// "cancelled" (ctx), or "taken" when id is already waiting. An empty answer is a skip.
func (b *Broker) Question(ctx context.Context, id string, timeout time.Duration, announce func()) (answer, by string) {
	b.mu.Lock()
	if _, dup := b.pending[id]; dup {
		b.mu.Unlock()
		return "", "taken"
	}
	ch := make(chan string, 1)
	b.pending[id] = waiting{ch: ch, question: true}
	b.mu.Unlock()
	announce()
	return b.wait(ctx, id, ch, timeout)
}

// open registers ask id before anybody is told of it, so an answer that comes at once is
// not lost.
func (b *Broker) open(id string) chan string {
	ch := make(chan string, 1)
	b.mu.Lock()
	b.pending[id] = waiting{ch: ch}
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
