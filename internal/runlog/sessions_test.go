package runlog

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/event"
	"massgen/internal/provider"
)

// turnSpec is one turn to record into a session folder.
type turnSpec struct {
	question string
	history  []provider.Message
	answer   string // "" for none
	status   string // "" leaves the session without session_ended (a crash)
	winnerWS bool   // write final/<winner>/workspace/notes.txt, as app does
}

// recordSession writes session id under root with a turn_<n> folder per spec, through the
// Recorder, as a real run would.
func recordSession(t *testing.T, root, id string, specs ...turnSpec) string {
	t.Helper()
	for i, sp := range specs {
		dir := filepath.Join(root, id, "turn_"+strconv.Itoa(i+1))
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		rec, err := NewRecorder(dir, Meta{Version: "test", ConfigPath: "team.yaml", Args: []string{"massgen", "--config", "team.yaml"},
			Config: map[string]any{"agents": []map[string]any{{"id": "bob", "backend": map[string]any{"type": "scripted", "model": "m"}}}},
			Now:    func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		s := &stream{}
		s.add(0, event.SessionStarted{Question: sp.question, Turn: i + 1, SessionID: id, History: sp.history,
			Agents: []event.AgentInfo{{ID: "bob", Label: "agent1", Backend: "scripted"}}})
		if sp.answer != "" {
			s.add(time.Millisecond, event.AnswerSubmitted{Agent: "bob", Label: "agent1.1", Content: sp.answer, Version: 1})
			s.add(time.Millisecond, event.CoordinationEnded{Reason: event.EndConsensus, Winner: "bob", WinnerLabel: "agent1", AnswerLabel: "agent1.1"})
			s.add(time.Millisecond, event.FinalAnswer{Agent: "bob", Label: "agent1.final", Content: sp.answer, Mode: "verbatim"})
		}
		if sp.status != "" {
			s.add(time.Millisecond, event.SessionEnded{Status: sp.status})
		}
		for _, e := range s.events {
			rec.Handle(e)
		}
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if sp.status == "" {
			// A crash leaves no metadata.json, and status.json says running, long ago.
			_ = os.Remove(filepath.Join(dir, "metadata.json"))
		}
		if sp.winnerWS {
			ws := filepath.Join(dir, "final", "bob", "workspace")
			if err := os.MkdirAll(ws, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("turn "+strconv.Itoa(i+1)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return filepath.Join(root, id)
}

func msgs(pairs ...string) []provider.Message {
	var out []provider.Message
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, provider.Message{Role: provider.RoleUser, Content: pairs[i]},
			provider.Message{Role: provider.RoleAssistant, Content: pairs[i+1]})
	}
	return out
}

func TestContinue(t *testing.T) {
	const id = "log_20250314_150926_535897"
	tests := []struct {
		name       string
		turns      []turnSpec
		emptyTurn  bool // add a turn folder the process died in before writing anything
		history    []provider.Message
		answered   int
		unfinished []int
		workspace  string // the turn whose workspace is carried, "" none
	}{
		{
			name: "two answered turns",
			turns: []turnSpec{
				{question: "q1", answer: "a1", status: event.StatusCompleted, winnerWS: true},
				{question: "q2", history: msgs("q1", "a1"), answer: "a2", status: event.StatusCompleted},
			},
			history: msgs("q1", "a1", "q2", "a2"), answered: 2, workspace: "turn_1",
		},
		{
			name: "a crashed last turn continues from the last answered one",
			turns: []turnSpec{
				{question: "q1", answer: "a1", status: event.StatusCompleted, winnerWS: true},
				{question: "q2", history: msgs("q1", "a1"), answer: "a2", status: event.StatusCompleted, winnerWS: true},
				{question: "q3", history: msgs("q1", "a1", "q2", "a2")},
			},
			history: msgs("q1", "a1", "q2", "a2"), answered: 2, unfinished: []int{3}, workspace: "turn_2",
		},
		{
			name: "a turn that died before writing anything",
			turns: []turnSpec{
				{question: "q1", answer: "a1", status: event.StatusCompleted},
			},
			emptyTurn: true,
			history:   msgs("q1", "a1"), answered: 1, unfinished: []int{2},
		},
		{
			name: "failed and interrupted turns carry nothing",
			turns: []turnSpec{
				{question: "q1", answer: "a1", status: event.StatusTimeout, winnerWS: true},
				{question: "q2", history: msgs("q1", "a1"), status: event.StatusFailed},
				{question: "q3", history: msgs("q1", "a1"), status: event.StatusInterrupted},
			},
			history: msgs("q1", "a1"), answered: 1, unfinished: []int{2, 3}, workspace: "turn_1",
		},
		{
			name: "after /reset nothing from before is carried",
			turns: []turnSpec{
				{question: "q1", answer: "a1", status: event.StatusCompleted, winnerWS: true},
				{question: "q2", answer: "a2", status: event.StatusCompleted},
			},
			history: msgs("q2", "a2"), answered: 2,
		},
		{
			name:  "nothing answered",
			turns: []turnSpec{{question: "q1", status: event.StatusFailed}},
			// The history is empty: no turn counts as answered.
			unfinished: []int{1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := recordSession(t, root, id, tc.turns...)
			next := len(tc.turns) + 1
			if tc.emptyTurn {
				if err := os.Mkdir(filepath.Join(dir, "turn_"+strconv.Itoa(next)), 0o755); err != nil {
					t.Fatal(err)
				}
				next++
			}
			s, err := ReadSession(root, id, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			c, err := Continue(s)
			if err != nil {
				t.Fatal(err)
			}
			if c.NextTurn != next {
				t.Errorf("next turn %d, want %d", c.NextTurn, next)
			}
			if diff := cmp.Diff(tc.history, c.History); diff != "" {
				t.Errorf("history (-want +got):\n%s", diff)
			}
			var unfinished []int
			for _, u := range c.Unfinished {
				unfinished = append(unfinished, u.N)
			}
			if c.Answered != tc.answered || !cmp.Equal(unfinished, tc.unfinished) {
				t.Errorf("answered %d unfinished %v, want %d %v", c.Answered, unfinished, tc.answered, tc.unfinished)
			}
			want := ""
			if tc.workspace != "" {
				want = filepath.Join(dir, tc.workspace, "final", "bob", "workspace")
			}
			if c.Workspace != want {
				t.Errorf("workspace %q, want %q", c.Workspace, want)
			}
			if c.ConfigPath != "team.yaml" && s.Last().Status != StatusIncomplete && len(tc.turns) > 0 {
				t.Errorf("config path %q", c.ConfigPath)
			}
		})
	}
}

func TestReadSession_Statuses(t *testing.T) {
	root := t.TempDir()
	recordSession(t, root, "log_20250314_150926_000001",
		turnSpec{question: "first question", answer: "a1", status: event.StatusCompleted},
		turnSpec{question: "second", history: msgs("first question", "a1")})
	s, err := ReadSession(root, "log_20250314_150926_000001", t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 2 || s.Turns[0].Status != event.StatusCompleted || s.Turns[0].Winner != "bob" || s.Turns[0].Question != "first question" {
		t.Fatalf("turn 1: %+v", s.Turns)
	}
	if got := s.Turns[1]; got.Status != StatusIncomplete || got.Question != "second" {
		t.Errorf("crashed turn 2: %+v", got)
	}
	if want := []TeamAgent{{ID: "bob", Type: "scripted", Model: "m"}}; !cmp.Equal(s.Turns[0].Team, want) {
		t.Errorf("team %+v", s.Turns[0].Team)
	}
	// Moments after its last status.json, a turn without an end is running.
	s, _ = ReadSession(root, "log_20250314_150926_000001", t0.Add(time.Second))
	if s.Status() != StatusRunning {
		t.Errorf("fresh status.json: %s, want running", s.Status())
	}
	if !s.Start.Equal(t0) {
		t.Errorf("start %v, want %v", s.Start, t0)
	}
}

func TestSessionIDs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"log_20250101_000000_000001", "log_20250301_000000_000001", "log_20250201_000000_000001_2", "other", "log_bad"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "log_20250401_000000_000001"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ids, err := SessionIDs(root)
	want := []string{"log_20250301_000000_000001", "log_20250201_000000_000001_2", "log_20250101_000000_000001"}
	if err != nil || !cmp.Equal(ids, want) {
		t.Errorf("ids %v %v, want %v", ids, err, want)
	}
	if ids, err := SessionIDs(filepath.Join(root, "missing")); ids != nil || err != nil {
		t.Errorf("missing root: %v %v", ids, err)
	}
	if _, err := ReadSession(root, "../etc", time.Now()); err == nil {
		t.Error("ReadSession took a path as id")
	}
}

// A log someone else wrote, or a crash left half-written, reads as a sparser summary: never
// a panic, never a file read whole when it is huge, never a link followed out of the log.
func TestReadSession_HostileFiles(t *testing.T) {
	const id = "log_20250314_150926_535897"
	root := t.TempDir()
	dir := recordSession(t, root, id, turnSpec{question: "q1", answer: "a1", status: event.StatusCompleted, winnerWS: true})
	turn := filepath.Join(dir, "turn_1")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("private"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustWrite := func(rel, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The winner's workspace replaced by a link to elsewhere: not carried.
	ws := filepath.Join(turn, "final", "bob", "workspace")
	if err := os.RemoveAll(ws); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, ws); err != nil {
		t.Fatal(err)
	}
	// Garbage and oversized files in other turns.
	mustWrite("turn_2/metadata.json", `{"status": 12, "agents": [`)
	mustWrite("turn_2/status.json", strings.Repeat("x", 100))
	mustWrite("turn_2/events.jsonl", `{"seq":1,"type":"vote_cast","data":{}}`+"\n")
	mustWrite("turn_3/metadata.json", `{"question": "`+strings.Repeat("q", maxJSONFile)+`"}`)
	mustWrite("turn_3/events.jsonl", strings.Repeat("{", 1<<20))
	mustWrite("turn_4/metadata.json", `{"status": "pwned\u001b[2J", "winner": "../../etc", "question": "q4"}`)
	mustWrite("turn_4/final/x/answer.txt", "nope")
	if err := os.Mkdir(filepath.Join(dir, "turn_5"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(dir, "turn_5", "metadata.json")); err != nil {
		t.Fatal(err)
	}

	s, err := ReadSession(root, id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 5 {
		t.Fatalf("%d turns", len(s.Turns))
	}
	for _, tt := range s.Turns[1:] {
		if tt.Status != StatusIncomplete && tt.Status != StatusUnknown && tt.Status != StatusRunning {
			t.Errorf("turn %d: status %q", tt.N, tt.Status)
		}
	}
	c, err := Continue(s)
	if err != nil {
		t.Fatal(err)
	}
	if c.Workspace != "" {
		t.Errorf("a linked workspace is carried: %s", c.Workspace)
	}
	if c.NextTurn != 6 || !cmp.Equal(c.History, msgs("q1", "a1")) {
		t.Errorf("next %d history %+v", c.NextTurn, c.History)
	}
	if _, ok := FinalAnswerText(s.Turns[3]); ok {
		t.Error("read the answer of a winner named ../../etc")
	}
}

func TestReadTurnLimited(t *testing.T) {
	dir := recordSession(t, t.TempDir(), "log_20250314_150926_535897", turnSpec{question: "q", answer: "a", status: event.StatusCompleted})
	turn, err := ReadTurnLimited(filepath.Join(dir, "turn_1"))
	if err != nil || turn.Incomplete != "" || turn.State.Winner != "bob" {
		t.Fatalf("%+v %v", turn, err)
	}
	if _, err := ReadTurnLimited(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no events.jsonl") {
		t.Errorf("empty folder: %v", err)
	}
}
