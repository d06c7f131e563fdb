package runlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"massgen/internal/event"
)

// line is one events.jsonl line of event seq with payload p.
func line(t *testing.T, seq int64, p event.Payload) string {
	t.Helper()
	b, err := event.EncodeLine(event.Event{Seq: seq, Time: time.Unix(100+seq, 0).UTC(), Payload: p})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Every shape a killed or damaged log takes: what is kept, what is dropped, what is refused.
func TestReadInterrupted_LogShapes(t *testing.T) {
	start := line(t, 1, event.SessionStarted{Question: "q", Turn: 1, Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}})
	answer := line(t, 2, event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "Paris", Version: 1})
	vote := line(t, 3, event.VoteCast{Agent: "a", Target: "a", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 1})
	ended := func(status string) string { return line(t, 3, event.SessionEnded{Status: status}) }
	tests := []struct {
		name     string
		log      string
		events   int
		keep     int    // bytes kept
		dropped  bool   // a cut line was left out
		previous string // "" when refused
		err      string
	}{
		{name: "whole lines", log: start + answer, events: 2, keep: len(start + answer), previous: "killed"},
		{name: "torn last line", log: start + answer + vote[:len(vote)/2], events: 2, keep: len(start + answer), dropped: true, previous: "killed"},
		{name: "last line without its newline", log: start + answer + strings.TrimSuffix(vote, "\n"), events: 3, keep: len(start+answer+vote) - 1, previous: "killed"},
		{name: "torn after a blank line", log: start + "\n" + answer[:10], events: 1, keep: len(start) + 1, dropped: true, previous: "killed"},
		{name: "only the start, torn", log: start[:20], err: "no whole event"},
		{name: "empty", log: "", err: "no whole event"},
		{name: "bad line in the middle", log: start + "{not json}\n" + answer, err: "line 2 is not a massgen event"},
		{name: "a gap in the numbers", log: start + vote, err: "holds event 3 where event 2 belongs"},
		{name: "no session_started", log: answer, err: "holds event 2 where event 1 belongs"},
		{name: "finished", log: start + answer + ended(event.StatusCompleted), err: "the session finished completed"},
		{name: "Ctrl-C", log: start + answer + ended(event.StatusInterrupted), events: 3, keep: len(start + answer + ended("interrupted")), previous: "interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(tt.log), 0o644); err != nil {
				t.Fatal(err)
			}
			it, err := ReadInterrupted(dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				if strings.Contains(tt.err, "finished") && !errors.Is(err, ErrFinished) {
					t.Errorf("%v does not wrap ErrFinished", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(it.Events) != tt.events || it.Keep != int64(tt.keep) || (it.Dropped != "") != tt.dropped || it.Previous != tt.previous {
				t.Errorf("events %d keep %d dropped %q previous %q; want %d %d %v %q", len(it.Events), it.Keep, it.Dropped, it.Previous,
					tt.events, tt.keep, tt.dropped, tt.previous)
			}
		})
	}
}

// A resumed recorder cuts the torn line away and goes on numbering, so the whole log reads
// back as one session that was resumed once.
func TestResumeRecorder_GoesOnFromTheWholeEvents(t *testing.T) {
	dir := t.TempDir()
	start := line(t, 1, event.SessionStarted{Question: "q", Turn: 1, Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}})
	answer := line(t, 2, event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "Paris", Version: 1})
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(start+answer+`{"seq":3,"ti`), 0o644); err != nil {
		t.Fatal(err)
	}
	it, err := ReadInterrupted(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ResumeRecorder(it, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	bus := event.NewBus(nil)
	bus.ResumeAt(2)
	bus.Subscribe(rec)
	bus.Publish(event.SessionResumed{Turn: 1, AfterSeq: 2, AfterType: "answer_submitted", Phase: event.ResumeCoordination, Previous: "killed"})
	bus.Publish(event.SessionEnded{Status: event.StatusCompleted})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTurn(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Events) != 4 || tr.Events[2].Seq != 3 || tr.Incomplete != "" || len(tr.State.Resumes) != 1 || tr.State.Totals.Answers != 1 {
		t.Fatalf("read back %d events, incomplete %q, resumes %d, answers %d", len(tr.Events), tr.Incomplete, len(tr.State.Resumes), tr.State.Totals.Answers)
	}
	status, err := os.ReadFile(filepath.Join(dir, "status.json"))
	if err != nil || !strings.Contains(string(status), `"after_event": 2`) || !strings.Contains(string(status), `"status": "completed"`) {
		t.Errorf("status.json: %s (%v)", status, err)
	}
}

// Killed between logging the final answer and writing final/<winner>/answer.txt: the resume,
// which does not present again, writes the file from the log (TestKillAndResume hit it).
func TestResumeRecorder_WritesALoggedFinalAnswersFiles(t *testing.T) {
	dir := t.TempDir()
	start := line(t, 1, event.SessionStarted{Question: "q", Turn: 1, Agents: []event.AgentInfo{{ID: "a", Label: "agent1"}}})
	answer := line(t, 2, event.AnswerSubmitted{Agent: "a", Label: "agent1.1", Content: "Paris", Version: 1})
	final := line(t, 3, event.FinalAnswer{Agent: "a", Label: "agent1.1", Content: "**Paris**"})
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(start+answer+final), 0o644); err != nil {
		t.Fatal(err)
	}
	it, err := ReadInterrupted(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := ResumeRecorder(it, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "final", "a", "answer.txt"))
	if err != nil || string(got) != "**Paris**" {
		t.Errorf("final/a/answer.txt = %q (%v), want the logged final answer", got, err)
	}
}
