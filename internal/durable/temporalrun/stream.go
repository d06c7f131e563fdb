package temporalrun

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"

	"massgen/internal/event"
)

// The activity's side of live.go: a turn's events go to the workflow in batches while the
// turn runs, coalesced (a batch holds one delta per run of text, not one per token), every
// Session.Live, at once when a call reports its usage (what was paid reaches the workflow
// before anything else can be lost; "at once" is kickCoalesce, which lets a turn that ends
// then send one batch), and at once past flushBytes. Batches go one at a time,
// in order; after one fails the activity sends no more and returns the rest as its result.

// DefaultLive is how often a running turn sends its events.
const DefaultLive = 500 * time.Millisecond

const (
	flushBytes    = 32 << 10  // a batch this big goes at once
	maxBatchBytes = 512 << 10 // one signal's events, well inside Temporal's payload limit
	signalTimeout = 10 * time.Second
	// kickCoalesce is how long a batch that must go at once waits for the turn to end.
	kickCoalesce = 50 * time.Millisecond
)

// streamer is the event sink of one activity attempt.
type streamer struct {
	ctx        context.Context
	c          client.Client
	wid, rid   string
	key        string
	attempt    int
	kick, stop chan struct{}
	wg         sync.WaitGroup
	send       sync.Mutex // one batch at a time, in order

	mu      sync.Mutex
	pending []event.Event // not sent yet, coalesced
	size    int           // pending's approximate size
	budget  int           // delta bytes left (maxDeltaBytes)
	all     []event.Event // every event taken from pending, in order
	sent    int           // of all, those the workflow has
	failed  bool          // a batch failed (or there is no client): the rest is the result
}

// newStreamer starts the attempt's sender; finish stops it. Without a client nothing is sent
// and everything is the result.
func newStreamer(ctx context.Context, c client.Client, key string, attempt int, every time.Duration) *streamer {
	info := activity.GetInfo(ctx)
	s := &streamer{ctx: ctx, c: c, wid: info.WorkflowExecution.ID, rid: info.WorkflowExecution.RunID, key: key,
		attempt: attempt, kick: make(chan struct{}, 1), stop: make(chan struct{}), budget: maxDeltaBytes, failed: c == nil || key == ""}
	if every <= 0 {
		every = DefaultLive
	}
	if !s.failed {
		s.wg.Go(func() { s.loop(every) })
	}
	return s
}

// Handle implements event.Sink; it never blocks on the network.
func (s *streamer) Handle(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := deltaLen(e.Payload); n > 0 {
		if n > s.budget {
			return // past the cap: the text is in the conversation and the answer besides
		}
		s.budget -= n
	}
	s.pending = merge(s.pending, e)
	s.size += approxSize(e)
	if _, paid := e.Payload.(event.UsageReported); paid || s.size >= flushBytes {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

func (s *streamer) loop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-s.kick:
			// A call's usage goes at once, but a turn that ends right after it sends
			// everything in its last batch: one signal, one workflow task, instead of two.
			select {
			case <-s.stop:
				return
			case <-time.After(kickCoalesce):
			}
		}
		s.flush(nil)
	}
}

// flush sends what is pending, last (when set) adding the outcome to the last batch; it
// reports whether everything went.
func (s *streamer) flush(last func(*Batch)) bool {
	s.send.Lock()
	defer s.send.Unlock()
	s.mu.Lock()
	evs, from, failed := s.pending, len(s.all), s.failed
	s.all = append(s.all, evs...)
	s.pending, s.size = nil, 0
	s.mu.Unlock()
	if failed {
		return false
	}
	for {
		k, size := 0, 0
		for k < len(evs) && (k == 0 || size+approxSize(evs[k]) <= maxBatchBytes) {
			size += approxSize(evs[k])
			k++
		}
		b := Batch{Key: s.key, Attempt: s.attempt, From: from, Events: evs[:k]}
		evs, from = evs[k:], from+k
		if len(evs) == 0 && last != nil {
			last(&b)
		}
		if len(b.Events) == 0 && b.Turn == nil && b.Present == nil {
			return true
		}
		if err := s.signal(b); err != nil {
			s.mu.Lock()
			s.failed = true
			s.mu.Unlock()
			return false
		}
		s.mu.Lock()
		s.sent = from
		s.mu.Unlock()
		if len(evs) == 0 {
			return true
		}
	}
}

// signal sends one batch; it goes even when the activity is cancelled, since what it reports
// was paid for.
func (s *streamer) signal(b Batch) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), signalTimeout)
	defer cancel()
	return s.c.SignalWorkflow(ctx, s.wid, s.rid, SignalLive, b)
}

// finish stops the sender and sends the rest, with the outcome when last is set. When
// everything went, streamed is true; otherwise rest are the events the workflow lacks, from
// index from of the attempt's.
//
// A turn that sent nothing while it ran (it ended before its first batch was due) sends
// nothing at the end either: the activity's result carries it all, one history event where a
// signal would add two and a workflow task, and it is as durable as the signal would be.
func (s *streamer) finish(last func(*Batch)) (streamed bool, from int, rest []event.Event) {
	close(s.stop)
	s.wg.Wait()
	s.mu.Lock()
	quiet := s.sent == 0
	s.mu.Unlock()
	if !quiet && s.flush(last) {
		return true, 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, s.pending...)
	s.pending, s.size = nil, 0
	return false, s.sent, s.all[s.sent:]
}

// attemptOf numbers the running attempt of a turn: Temporal's retries of this activity after
// base earlier ones (the workflow ran the turn again on another worker base times).
func attemptOf(ctx context.Context, base int) int { return base + int(activity.GetInfo(ctx).Attempt) }

// done asks the workflow whether an earlier attempt ended the turn key already.
func done(ctx context.Context, c client.Client, key string, attempt int) bool {
	if c == nil || key == "" || attempt <= 1 {
		return false
	}
	info := activity.GetInfo(ctx)
	qctx, cancel := context.WithTimeout(ctx, signalTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, QueryDone, key)
	var ok bool
	return err == nil && v.Get(&ok) == nil && ok
}
