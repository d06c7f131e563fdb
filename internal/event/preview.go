package event

// A session that runs elsewhere (on Temporal) sends each agent turn's events twice: as they
// happen, while the turn runs on a worker, and once more when the turn has ended and its
// result is final. Only the final copy may enter the log (a turn whose worker died is run
// again, and what its first attempt streamed is not part of the session), while a person
// watching wants the text as it streams. So the first copy is a preview, which the views show
// and the log never holds, and the final copy of an event already previewed is logged and not
// shown a second time: each sink sees every event once.

// PublishPreview delivers p, unnumbered, as a preview: only sinks behind ForViews act on it.
// Its Seq is the last numbered event's.
func (b *Bus) PublishPreview(p Payload) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := Event{Seq: b.seq, Time: b.now(), Payload: p, Preview: true}
	for _, s := range b.sinks {
		s.Handle(e)
	}
}

// PublishPreviewed publishes p as Publish does, marked as already shown as a preview: sinks
// behind ForViews skip it.
func (b *Bus) PublishPreviewed(p Payload) Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	e := Event{Seq: b.seq, Time: b.now(), Payload: p, Previewed: true}
	for _, s := range b.sinks {
		s.Handle(e)
	}
	return e
}

// ForLog wraps a sink that keeps the session's record (events.jsonl, status.json, massgen.log):
// it sees no previews, and every logged event as a plain one.
func ForLog(s Sink) Sink {
	return SinkFunc(func(e Event) {
		if e.Preview {
			return
		}
		e.Previewed = false
		s.Handle(e)
	})
}

// ForViews wraps a sink that shows the session to someone (the terminal, the studio, a
// stream): it sees previews, and not the logged copies of what they showed.
func ForViews(s Sink) Sink {
	return SinkFunc(func(e Event) {
		if !e.Previewed {
			s.Handle(e)
		}
	})
}
