package runlog

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"massgen/internal/event"
)

func testMeta() Meta {
	return Meta{
		Version:    "0.1.0-test",
		ConfigPath: "configs/three.yaml",
		Config:     map[string]any{"agents": []string{"alice", "bob", "carol"}},
		Args:       []string{"--config", "configs/three.yaml", "question"},
		Now:        func() time.Time { return t0.Add(time.Minute) },
	}
}

// record feeds events to a new Recorder in dir and closes it.
func record(t *testing.T, dir string, events []event.Event) error {
	t.Helper()
	r, err := NewRecorder(dir, testMeta())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		r.Handle(e)
	}
	return r.Close()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(readFile(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// files lists every file under dir, slash-separated and sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func TestRecorder_WritesTurn(t *testing.T) {
	defer goleak.VerifyNone(t)
	events := session().events
	dir := filepath.Join(t.TempDir(), "turn_1")
	if err := record(t, dir, events); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// Every file, and no status.json.tmp left behind.
	want := []string{"coordination_table.txt", "events.jsonl", "final/bob/answer.txt", "final/bob/context.txt", "metadata.json", "status.json"}
	var final event.FinalAnswer
	var lastVote event.Event
	for _, e := range events {
		switch p := e.Payload.(type) {
		case event.AnswerSubmitted:
			d := p.Agent + "/" + folderTime(e.Time)
			want = append(want, d+"/answer.txt", d+"/context.txt")
		case event.VoteCast:
			d := p.Agent + "/" + folderTime(e.Time)
			want = append(want, d+"/vote.json", d+"/context.txt")
			if p.Agent == "alice" {
				lastVote = e
			}
		case event.FinalAnswer:
			final = p
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, files(t, dir)); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}

	// events.jsonl holds the stream.
	back, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, _ := json.Marshal(events)
	gotJSON, _ := json.Marshal(back)
	if string(wantJSON) != string(gotJSON) {
		t.Error("events.jsonl does not round-trip the stream")
	}

	// status.json, final/<winner>/answer.txt and events.jsonl agree.
	answer := readFile(t, filepath.Join(dir, "final", "bob", "answer.txt"))
	if answer != final.Content {
		t.Errorf("final answer.txt = %q, want %q", answer, final.Content)
	}
	var status struct {
		Meta    struct{ Status string }
		Results struct {
			Winner             string         `json:"winner"`
			FinalAnswerPreview string         `json:"final_answer_preview"`
			Votes              map[string]int `json:"votes"`
			ExitCode           *int           `json:"exit_code"`
		}
	}
	readJSON(t, filepath.Join(dir, "status.json"), &status)
	if status.Results.Winner != final.Agent || status.Results.FinalAnswerPreview != answer || status.Meta.Status != "completed" ||
		status.Results.ExitCode == nil || *status.Results.ExitCode != 0 {
		t.Errorf("status.json results = %+v meta = %+v", status.Results, status.Meta)
	}
	if got := string(StatusJSON(fold(back), t0.Add(time.Minute))); got != readFile(t, filepath.Join(dir, "status.json")) {
		t.Error("status.json differs from the status of events.jsonl")
	}

	// vote.json of alice's second vote.
	var vote map[string]any
	readJSON(t, filepath.Join(dir, "alice", folderTime(lastVote.Time), "vote.json"), &vote)
	wantVote := map[string]any{
		"voter_id": "alice", "voter_anon_id": "agent1", "voted_for": "bob", "voted_for_anon": "agent2",
		"voted_for_label": "agent2.1", "reason": lastVote.Payload.(event.VoteCast).Reason,
		"timestamp": lastVote.Time.Format(time.RFC3339Nano), "unix_timestamp": unix(lastVote.Time),
		"answer_set_version": 2.0, "available_options": []any{"alice", "bob"}, "available_options_anon": []any{"agent1", "agent2"},
		"vote_context": map[string]any{"total_agents": 3.0, "agents_with_answers": 2.0, "current_task": fold(events).Question},
	}
	if diff := cmp.Diff(wantVote, vote); diff != "" {
		t.Errorf("vote.json (-want +got):\n%s", diff)
	}

	// context.txt: the fresh call's system and messages, then the continued call's message.
	ctx := readFile(t, filepath.Join(dir, "alice", folderTime(lastVote.Time), "context.txt"))
	wantCtx := "=== system ===\nYou are alice, one of several agents answering the same question.\n\n" +
		"=== user ===\nQuestion: learn Go in a month?\n\n=== user ===\nagent1.1: Read the Tour of Go, then build a CLI.\n\n" +
		"=== user ===\nNew answers: agent2.1\n"
	if ctx != wantCtx {
		t.Errorf("context.txt =\n%s\nwant\n%s", ctx, wantCtx)
	}
	finalCtx := readFile(t, filepath.Join(dir, "final", "bob", "context.txt"))
	for _, want := range []string{"=== system ===\nYou are bob", "=== answers ===\n--- agent1.", "--- agent2.1 (bob) ---", "=== votes ===\nagent1 (alice) voted for agent2.1: "} {
		if !strings.Contains(finalCtx, want) {
			t.Errorf("final context.txt lacks %q:\n%s", want, finalCtx)
		}
	}
	if n := strings.Count(finalCtx, "=== user ==="); n != 4 {
		t.Errorf("final context.txt has %d user messages, want 4:\n%s", n, finalCtx)
	}

	// metadata.json and coordination_table.txt.
	var meta struct {
		Version, Status, Winner string
		FinalAnswerLabel        string `json:"final_answer_label"`
		ConfigPath              string `json:"config_path"`
		ExitCode                *int   `json:"exit_code"`
		Config                  map[string]any
		Args                    []string
		Agents                  []struct {
			ID, Label, Status string
			Answers, Votes    int
			CostUSD           float64 `json:"cost_usd"`
		}
		Totals struct {
			CostUSD float64 `json:"cost_usd"`
		}
	}
	readJSON(t, filepath.Join(dir, "metadata.json"), &meta)
	if meta.Version != "0.1.0-test" || meta.Status != "completed" || meta.Winner != "bob" || meta.FinalAnswerLabel != "agent2.final" || meta.ExitCode == nil || meta.ConfigPath != "configs/three.yaml" ||
		len(meta.Agents) != 3 || meta.Agents[1].Votes != 1 || meta.Agents[2].Status != "dead" || meta.Totals.CostUSD != 0.0254 ||
		len(meta.Args) != 3 || meta.Config["agents"] == nil {
		t.Errorf("metadata.json = %+v", meta)
	}
	if got := readFile(t, filepath.Join(dir, "coordination_table.txt")); got != FormatTable(events) {
		t.Error("coordination_table.txt differs from FormatTable(events)")
	}
}

func TestRecorder_SameTimestampGetsSuffix(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := started()
	s.add(time.Second, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
		add(0, event.VoteCast{Agent: "alice", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 1}).
		add(0, event.AnswerSubmitted{Agent: "bob", Label: "agent2.1", Content: "B", Version: 2})
	dir := t.TempDir()
	if err := record(t, dir, s.events); err != nil {
		t.Fatal(err)
	}
	ts := folderTime(t0.Add(time.Second))
	for _, f := range []string{"alice/" + ts + "/answer.txt", "alice/" + ts + "_2/vote.json", "bob/" + ts + "/answer.txt"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var meta struct{ Status string }
	readJSON(t, filepath.Join(dir, "metadata.json"), &meta)
	if meta.Status != "incomplete" {
		t.Errorf("metadata status without SessionEnded = %q, want incomplete", meta.Status)
	}
}

func TestRecorder_KeepsFirstError(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	// A file where alice's snapshot folder should go makes her snapshots fail.
	if err := os.WriteFile(filepath.Join(dir, "alice"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := record(t, dir, session().events)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "alice")) || !strings.HasPrefix(err.Error(), "runlog: write ") {
		t.Fatalf("Close error = %v, want one naming %s", err, filepath.Join(dir, "alice"))
	}
	// The run went on: everything else is there.
	for _, f := range []string{"status.json", "final/bob/answer.txt", "metadata.json", "coordination_table.txt", "bob"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestRecorder_CloseTwiceAndLateEvents(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	r, err := NewRecorder(dir, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	events := started().events
	r.Handle(events[0])
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r.Handle(event.Event{Seq: 2, Time: t0, Payload: event.SessionEnded{Status: event.StatusCompleted}})
	if err := r.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	back, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil || len(back) != 1 {
		t.Errorf("events after Close were recorded: %d events, %v", len(back), err)
	}
}

func TestNewRecorder_MissingParent(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "log_x", "turn_1")
	if _, err := NewRecorder(dir, Meta{}); err == nil {
		t.Fatal("NewRecorder created missing parent folders")
	}
}

// TestRecorder_StatusPacing checks, on a fake clock, that status.json follows changes within
// 50 ms, is written at most once per 50 ms, and at least every 2 s while nothing happens.
func TestRecorder_StatusPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		r, err := NewRecorder(dir, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "status.json")
		type status struct {
			Meta struct {
				LastUpdated float64 `json:"last_updated"`
			} `json:"meta"`
			Results struct {
				Votes map[string]int `json:"votes"`
			} `json:"results"`
			Agents map[string]struct {
				AnswerCount int `json:"answer_count"`
			} `json:"agents"`
		}
		read := func() status {
			var s status
			readJSON(t, path, &s)
			return s
		}
		s := started()
		s.add(0, event.AnswerSubmitted{Agent: "alice", Label: "agent1.1", Content: "A", Version: 1}).
			add(0, event.VoteCast{Agent: "bob", Target: "alice", TargetLabel: "agent1", AnswerLabel: "agent1.1", Version: 1})

		r.Handle(s.events[0])
		synctest.Wait()
		first := read()
		r.Handle(s.events[1])
		time.Sleep(10 * time.Millisecond)
		synctest.Wait()
		if got := read(); got.Agents["alice"].AnswerCount != 0 {
			t.Error("status.json rewritten within 50 ms of the previous write")
		}
		r.Handle(s.events[2])
		time.Sleep(40 * time.Millisecond)
		synctest.Wait()
		got := read()
		if got.Agents["alice"].AnswerCount != 1 || got.Results.Votes["agent1.1"] != 1 {
			t.Errorf("status.json 50 ms after two changes = %+v", got)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if later := read(); later.Meta.LastUpdated-first.Meta.LastUpdated < 2 {
			t.Errorf("last_updated moved %.3f s in 2 s without events", later.Meta.LastUpdated-first.Meta.LastUpdated)
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
			t.Errorf("status.json.tmp left behind: %v", err)
		}
	})
}
