// Package runlog turns the session's event stream into what MassGen leaves on disk (status.json,
// per-agent answer and vote snapshots, the final answer, coordination_table.txt and
// metadata.json) and reads it back: the session and turn readers and the one turn report
// every summary serialises. The fold itself is package readmodel's.
package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"massgen/internal/event"
	"massgen/internal/private"
	"massgen/internal/readmodel"
)

// Status file pacing: at most one write per minStatusGap, at least one per maxStatusGap.
const (
	minStatusGap = 50 * time.Millisecond
	maxStatusGap = 2 * time.Second
)

// Meta is what metadata.json needs that the event stream does not carry.
type Meta struct {
	Version    string   // massgen version
	ConfigPath string   // "" when the config was built in memory
	Config     any      // the config as the caller chose to show it: already redacted, never with keys
	Args       []string // command-line arguments
	// ConfigHash identifies the config the session runs with, so that a resume can tell it
	// has the same one (metadata.json's config_hash).
	ConfigHash string
	// PID and Host are the process writing the log, so that a reader on the same machine can
	// tell at once that a log without its end is not being written any more.
	PID  int
	Host string
	// Now is the clock for status.json's last_updated and the running elapsed_seconds; nil means
	// time.Now. Nothing else the Recorder writes reads a clock.
	Now func() time.Time
}

// Recorder is an event.Sink that writes a turn's log directory: events.jsonl, status.json,
// answer and vote snapshots, final/, coordination_table.txt and metadata.json. Handle writes
// the event's line to events.jsonl before it returns, one write per event, so that a process
// killed at any moment loses at most the event being written (massgen resume takes the log up
// from there); everything else is queued for a writer goroutine owned by the Recorder, so the
// other files never hold up the agents. Handle and Close are safe for concurrent use. A write
// error never stops the run: the first one is kept and returned by Close.
type Recorder struct {
	dir  string
	meta Meta
	now  func() time.Time

	mu     sync.Mutex // guards queue, closed and events until Close
	queue  []event.Event
	closed bool
	kick   chan struct{} // cap 1: events are queued, or Close was called
	done   chan struct{} // closed when the writer goroutine has finished

	// Owned by the writer goroutine (and by Close once it has finished).
	state      *readmodel.State
	table      *Table
	events     *event.Writer
	convs      map[string]*conversation
	folders    map[string]bool // <agent>/<ts> folders in use
	dirty      bool            // status.json is behind the state
	lastStatus time.Time
	summary    int64 // Seq of the last event the summary files were written for
	err        error
}

// NewRecorder starts recording into dir, creating dir itself (not its parents) when missing,
// and starts the writer goroutine. The caller must call Close.
func NewRecorder(dir string, meta Meta) (*Recorder, error) {
	if err := private.Mkdir(dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	w, err := event.Create(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	r := newRecorder(dir, meta, w)
	// Before the first event: a log holds its config from its first line on.
	r.writeAtomic("metadata.json", metadataJSON(r.state, r.meta))
	go r.loop()
	return r, nil
}

// ResumeRecorder goes on recording the interrupted turn it: events.jsonl is cut back to its
// whole events (a line cut off mid-event goes) and appended to, and the other files are
// rewritten from the old events and the new ones, as if one process had written them all.
func ResumeRecorder(it *Interrupted, meta Meta) (*Recorder, error) {
	w, err := event.Append(filepath.Join(it.Dir, "events.jsonl"), it.Keep)
	if err != nil {
		return nil, fmt.Errorf("runlog: %w", err)
	}
	r := newRecorder(it.Dir, meta, w)
	for _, e := range it.Events {
		r.table.Handle(e)
		switch p := e.Payload.(type) {
		case event.ModelCalled:
			r.conv(p.Agent).apply(p)
		case event.AnswerSubmitted:
			r.snapshotDir(p.Agent, e.Time) // its folder is taken
		case event.VoteCast:
			r.snapshotDir(p.Agent, e.Time)
		case event.FinalAnswer:
			// The process may have died between logging the final answer and writing its
			// files; a resume that finds the answer logged does not present it again.
			r.writeFinal(p)
		case event.OrchestrationRestarted:
			r.dropTurnFinal()
		}
	}
	r.dirty = true
	go r.loop()
	return r, nil
}

func newRecorder(dir string, meta Meta, w *event.Writer) *Recorder {
	now := meta.Now
	if now == nil {
		now = time.Now
	}
	w.Batched = true
	state := readmodel.NewState()
	r := &Recorder{
		dir:     dir,
		meta:    meta,
		now:     now,
		state:   state,
		table:   NewTableOn(state),
		events:  w,
		convs:   map[string]*conversation{},
		folders: map[string]bool{},
		kick:    make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	return r
}

// Dir returns the directory the Recorder writes into.
func (r *Recorder) Dir() string { return r.dir }

// Handle writes e to events.jsonl and queues it for the writer goroutine. Events after Close
// are dropped.
func (r *Recorder) Handle(e event.Event) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	// A whole line per write, the buffer empty before it: a kill cuts at most this line.
	r.events.Handle(e)
	r.events.Flush()
	r.queue = append(r.queue, e)
	r.mu.Unlock()
	r.signal()
}

func (r *Recorder) signal() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Close writes everything still queued, coordination_table.txt, metadata.json and a final
// status.json, closes events.jsonl and stops the writer goroutine. It returns the first error
// met while recording, wrapped with the file's path. Calling Close again returns nil.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.signal()
	<-r.done
	return r.err
}

// loop is the writer goroutine. It records queued events in order and writes status.json when
// the state changed, at most every minStatusGap, and at least every maxStatusGap so
// elapsed_seconds moves.
func (r *Recorder) loop() {
	defer close(r.done)
	tick := time.NewTicker(maxStatusGap)
	defer tick.Stop()
	gap := time.NewTimer(0)
	<-gap.C
	for {
		select {
		case <-r.kick:
		case <-tick.C:
			r.dirty = true
		case <-gap.C:
		}
		r.mu.Lock()
		batch, closed := r.queue, r.closed
		r.queue = nil
		r.mu.Unlock()
		for _, e := range batch {
			r.record(e)
		}
		if closed {
			r.finish()
			return
		}
		if !r.dirty || r.state.StartTime.IsZero() {
			continue
		}
		if wait := minStatusGap - r.now().Sub(r.lastStatus); wait > 0 {
			gap.Reset(wait)
			continue
		}
		r.writeStatusNow()
	}
}

// record applies one event to the state and writes the files it calls for.
func (r *Recorder) record(e event.Event) {
	r.table.Handle(e) // applies e to r.state

	switch p := e.Payload.(type) {
	case event.TextDelta, event.ReasoningDelta, event.ToolCallStreaming:
		return
	case event.ModelCalled:
		r.conv(p.Agent).apply(p)
	case event.AnswerSubmitted:
		r.writeAnswer(e, p)
	case event.VoteCast:
		r.writeVote(e, p)
	case event.FinalAnswer:
		r.writeFinal(p)
	case event.CriteriaEmerged:
		r.writeCriteria(p)
	case event.TaskPlanChanged:
		r.writePlan(p.Agent, safeName(p.Agent)+"/tasks/plan.json")
	case event.OrchestrationRestarted:
		r.dropTurnFinal()
	case event.SessionStarted, event.SessionResumed, event.SessionEnded:
		// metadata.json from the start: a killed run leaves the config it ran with.
		r.writeSummary()
	}
	r.dirty = true
}

// finish writes the summary files and the last status.json and closes events.jsonl.
func (r *Recorder) finish() {
	if r.summary != r.state.LastSeq || r.summary == 0 {
		r.writeSummary()
	}
	if !r.state.StartTime.IsZero() {
		r.writeStatusNow()
	}
	if err := r.events.Close(); err != nil {
		r.fail(filepath.Join(r.dir, "events.jsonl"), err)
	}
}

func (r *Recorder) writeStatusNow() {
	r.dirty = false
	r.lastStatus = r.now()
	r.writeStatus(StatusJSON(r.state, r.lastStatus))
}

// writeStatus writes status.json through a temporary file and a rename, so readers never see
// half a file. Only the writer goroutine writes it.
func (r *Recorder) writeStatus(data []byte) { r.writeAtomic("status.json", data) }

// writeAtomic writes dir/name through a temporary file and a rename, so that readers, and a process
// killed while writing it, never leave half a file.
func (r *Recorder) writeAtomic(name string, data []byte) {
	path := filepath.Join(r.dir, name)
	if err := private.WriteFileAtomic(path, data); err != nil {
		r.fail(path, err)
	}
}

// CriteriaFile holds the criteria that emerged during a turn (criteria_mode), as MassGen's
// bootstrap_criteria_accumulator.json does: rewritten whenever they change.
const CriteriaFile = "bootstrap_criteria_accumulator.json"

func (r *Recorder) writeCriteria(p event.CriteriaEmerged) {
	list := p.Criteria
	if list == nil {
		list = []event.Criterion{}
	}
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		r.fail(filepath.Join(r.dir, CriteriaFile), err)
		return
	}
	r.writeAtomic(CriteriaFile, append(b, '\n'))
}

// writeSummary writes coordination_table.txt and metadata.json.
func (r *Recorder) writeSummary() {
	r.summary = r.state.LastSeq
	r.writeFile("coordination_table.txt", []byte(r.table.String()))
	r.writeAtomic("metadata.json", metadataJSON(r.state, r.meta))
}

// writeFile writes rel (slash-separated, under dir), creating its parent folders.
func (r *Recorder) writeFile(rel string, data []byte) {
	path := filepath.Join(r.dir, filepath.FromSlash(rel))
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		r.fail(path, err)
		return
	}
	if err := private.WriteFile(path, data); err != nil {
		r.fail(path, err)
	}
}

// fail keeps the first error, naming path once.
func (r *Recorder) fail(path string, err error) {
	if r.err != nil {
		return
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	r.err = fmt.Errorf("runlog: write %s: %w", path, err)
}
