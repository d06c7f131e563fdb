package temporalrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"massgen/internal/event"
	"massgen/internal/permission"
)

// Permission asks on Temporal. A held session's permission gate runs on its worker; when a
// rule asks and the starter takes a person's answers (Session.Asks: the live view, the
// dashboard, --inbox-dir), the ask goes to the starter as an event like any other, the
// starter's broker hands the person's answer to the workflow (an UpdateSteer act), and the
// worker, while one of its asks waits, reads the answers from the workflow (QueryAnswers)
// and gives them to its gate. Without a person to ask, the gate follows automation_default at
// once, as under --automation.

// QueryAnswers answers the person's answers to permission asks so far, in order.
const QueryAnswers = "massgen.answers"

// AskAnswer is a person's answer to permission ask ID: allow or deny.
type AskAnswer struct {
	ID       string `json:"id"`
	Decision string `json:"decision"`
}

// maxAnswers bounds the answers a session keeps.
const maxAnswers = 1000

func (w *run) validAnswer(a AskAnswer) error {
	switch {
	case a.ID == "" || len(a.ID) > 100:
		return errors.New("an answer names the ask it answers (at most 100 bytes)")
	case a.Decision != permission.Allow && a.Decision != permission.Deny:
		return fmt.Errorf("decision %q: use allow or deny", a.Decision)
	case len(w.answers) >= maxAnswers:
		return fmt.Errorf("the session has taken %d answers, its limit", maxAnswers)
	}
	return nil
}

// answersEvery is how often a worker whose gate waits for a person reads the answers.
const answersEvery = 300 * time.Millisecond

// followAnswers gives h's gate the answers the workflow holds for the asks waiting there,
// until stop.
func (h *heldSession) followAnswers(ctx context.Context, c client.Client, wid, rid string) (stop func()) {
	if h == nil || h.asks == nil || c == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(answersEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if h.asks.Waiting() == 0 {
				continue
			}
			qctx, qcancel := context.WithTimeout(ctx, signalTimeout)
			v, err := c.QueryWorkflow(qctx, wid, rid, QueryAnswers)
			qcancel()
			var answers []AskAnswer
			if err != nil || v.Get(&answers) != nil {
				continue
			}
			for _, a := range answers {
				_ = h.asks.Answer(a.ID, a.Decision) // one asked here and waiting; others are not
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}

// askRelay is the starter's side: each permission ask of the session's events waits in the
// starter's broker, and the person's answer goes to the workflow.
type askRelay struct {
	broker *permission.Broker
	send   func(AskAnswer)

	mu       sync.Mutex
	seen     map[string]bool
	withdraw map[string]func()
}

func newAskRelay(b *permission.Broker, send func(AskAnswer)) *askRelay {
	return &askRelay{broker: b, send: send, seen: map[string]bool{}, withdraw: map[string]func(){}}
}

// Handle implements event.Sink: an ask seen for the first time waits for its answer; a
// decided one stops waiting.
func (r *askRelay) Handle(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch p := e.Payload.(type) {
	case event.PermissionAsked:
		if r.seen[p.ID] {
			return // its logged copy, or an ask already decided
		}
		r.seen[p.ID] = true
		id := p.ID
		r.withdraw[id] = r.broker.Forward(id, func(decision string) { r.send(AskAnswer{ID: id, Decision: decision}) })
	case event.PermissionDecided:
		r.seen[p.ID] = true
		if w := r.withdraw[p.ID]; w != nil {
			w()
			delete(r.withdraw, p.ID)
		}
	}
}

// close withdraws every ask still waiting: the session is over.
func (r *askRelay) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, w := range r.withdraw {
		w()
		delete(r.withdraw, id)
	}
}

// relayAsks makes the session's permission asks wait in b for a person's answer, which goes
// to the workflow, until the returned stop.
func relayAsks(ctx context.Context, b *permission.Broker, bus *event.Bus, to remoteSteering) (stop func()) {
	answers := make(chan AskAnswer, 64)
	r := newAskRelay(b, func(a AskAnswer) {
		select {
		case answers <- a:
		default: // 64 answers on their way: this one is lost, and its ask times out
		}
	})
	bus.Subscribe(r)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case a := <-answers:
				_ = to.send(Steer{Answer: &a})
			}
		}
	})
	return func() {
		r.close()
		cancel()
		wg.Wait()
	}
}
