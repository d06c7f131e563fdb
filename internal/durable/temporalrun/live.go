package temporalrun

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"massgen/internal/engine"
	"massgen/internal/event"
)

// What the workflow does with a running turn's events. A turn's activity sends them in
// batches while it runs (SignalLive), and its outcome with the last one; the workflow shows
// them at once as previews (the caller's views show them, its log does not) and keeps them
// with the attempt that made them. When the turn ends, the events of the attempt that ended
// it are logged (those shown already are marked so, and the views skip them). An attempt
// that another one replaced (its worker died or went silent) is not logged: only its usage
// reports are, marked Retried, and its cost counts, since the calls were paid for.
//
// Usage reports are not previewed: the caller's views take them from the log, so that a
// lost attempt's calls are counted once, as retried, everywhere. A turn whose outcome came
// with its batches is ended at once, without waiting for its activity: a later attempt of it
// (a worker that reported its outcome and died before its activity completed) asks
// QueryDone first and does nothing.

// Batch is what a running turn's activity sends: the attempt's events from index From on,
// and with the last batch the turn's outcome (Turn, or Present for the presentation).
type Batch struct {
	Key     string              `json:"key"`
	Attempt int                 `json:"attempt"`
	From    int                 `json:"from"`
	Events  []event.Event       `json:"events,omitempty"`
	Turn    *engine.TurnOutcome `json:"turn,omitempty"`
	Present *PresentResult      `json:"present,omitempty"`
}

// liveTurn is one turn (or presentation) of this run as the workflow follows it.
type liveTurn struct {
	key     string
	agent   int
	present bool
	attempt int           // the newest attempt heard from
	evs     []event.Event // that attempt's events so far
	shown   []bool        // evs[k] went to the views as a preview
	done    bool          // the turn has ended here; later batches only report spending
	cancel  workflow.CancelFunc
	tries   int // the times its activity was started (by the workflow, not Temporal's retries)
	// presented is the presentation's result, once done.
	presented PresentResult
}

func (w *run) newTurn(i int) *liveTurn {
	w.nturns++
	lt := &liveTurn{key: fmt.Sprint(w.nturns), agent: i}
	w.turns[lt.key] = lt
	return lt
}

// onBatch takes a batch in.
func (w *run) onBatch(b Batch) {
	lt := w.turns[b.Key]
	if lt == nil {
		return
	}
	if lt.done || b.Attempt < lt.attempt {
		// An attempt whose work is not used still ran somewhere: its calls are paid.
		retried := b.Attempt
		if b.Attempt == lt.attempt {
			retried = 0 // the same attempt, late: its turn was cancelled
		}
		w.settleEvents(lt.agent, b.Events, retried)
		return
	}
	final := b.Turn != nil || b.Present != nil
	w.received(lt, b.Attempt, b.From, b.Events, !final)
	switch {
	case b.Turn != nil:
		w.finishTurn(lt, *b.Turn, false)
	case b.Present != nil:
		w.finishPresent(lt, *b.Present)
	}
}

// received keeps attempt's events from index from on, showing them as previews when preview
// is set. An attempt newer than the one kept replaces it: the older one was lost.
func (w *run) received(lt *liveTurn, attempt, from int, evs []event.Event, preview bool) {
	if attempt == 0 {
		attempt = lt.attempt // a result from a worker that does not stream
	}
	if attempt > lt.attempt {
		if lt.attempt > 0 {
			w.settle(lt, lt.attempt)
		}
		lt.attempt = attempt
	}
	skip := max(len(lt.evs)-from, 0) // a gap cannot be: an activity stops sending at its first failed batch
	for _, e := range evs[min(skip, len(evs)):] {
		show := preview && previewable(e.Payload)
		lt.evs, lt.shown = append(lt.evs, e), append(lt.shown, show)
		if show {
			w.tail = append(w.tail, event.Event{Seq: w.seq, Time: e.Time, Payload: e.Payload, Preview: true})
		}
	}
}

// previewable: what the views may show while the turn runs. The replica's answers and votes
// are the coordinator's to decide, and usage is shown once it is final.
func previewable(p event.Payload) bool {
	_, usage := p.(event.UsageReported)
	return !usage && !engine.Decided(p)
}

// settle logs and counts the usage of lt's kept attempt, which retried replaced (0: none,
// it ended without an outcome), and drops its events.
func (w *run) settle(lt *liveTurn, retried int) {
	w.settleEvents(lt.agent, lt.evs, retried)
	lt.evs, lt.shown = nil, nil
}

func (w *run) settleEvents(i int, evs []event.Event, retried int) {
	for _, e := range evs {
		u, ok := e.Payload.(event.UsageReported)
		if !ok {
			continue
		}
		u.Retried = retried
		w.x.Account(w.agentIndex(u.Agent, i), u.Usage, u.CostUSD) // a side call's is the answering agent's
		w.bus.Publish(u)
	}
}

// commit logs the kept attempt's events, counting their usage when account is set (an
// outcome counts its own).
func (w *run) commit(lt *liveTurn, account bool) {
	for k, e := range lt.evs {
		if engine.Decided(e.Payload) {
			continue // the coordinator publishes its own when it applies the outcome
		}
		if u, ok := e.Payload.(event.UsageReported); ok && account {
			w.x.Account(w.agentIndex(u.Agent, lt.agent), u.Usage, u.CostUSD)
		}
		if lt.shown[k] {
			w.bus.PublishPreviewed(e.Payload)
		} else {
			w.bus.Publish(e.Payload)
		}
	}
	lt.evs, lt.shown = nil, nil
}

// finishTurn ends a turn with its outcome; account counts the kept events' usage (an
// outcome that failed the turn carries none).
func (w *run) finishTurn(lt *liveTurn, out engine.TurnOutcome, account bool) {
	w.commit(lt, account)
	w.release(lt)
	i := lt.agent
	w.convs[i] = w.x.Finish(i, out)
	w.afterTurn(i, out)
}

// failed ends a turn that could not run: what its last attempt did is logged and paid.
func (w *run) failed(lt *liveTurn, out engine.TurnOutcome) { w.finishTurn(lt, out, true) }

// cancelled ends a turn stopped by the session's end or a person: what it did stands.
func (w *run) cancelled(lt *liveTurn) {
	w.commit(lt, true)
	w.release(lt)
}

func (w *run) release(lt *liveTurn) {
	lt.done = true
	if w.running[lt.agent] == lt {
		w.running[lt.agent] = nil
		w.busy[lt.agent] = false
	}
}

// settleRunning ends the turns still running when coordination ended.
func (w *run) settleRunning() {
	w.drainLive()
	for _, lt := range w.running {
		if lt != nil {
			w.cancelled(lt)
		}
	}
}

// finishPresent ends the presentation with its result.
func (w *run) finishPresent(lt *liveTurn, r PresentResult) {
	w.commit(lt, false)
	lt.done = true
	w.x.Account(lt.agent, r.Usage, r.Cost)
	lt.presented = r
}

// drainLive takes in the batches that have arrived.
func (w *run) drainLive() {
	for {
		var b Batch
		if !w.live.ReceiveAsync(&b) {
			return
		}
		w.onBatch(b)
	}
}

// idle: no turn runs and no agent waits out a pause.
func (w *run) idle() bool {
	for i := range w.busy {
		if w.busy[i] || w.paused[i] {
			return false
		}
	}
	return true
}
