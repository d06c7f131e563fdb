package mcpserve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/event"
)

// read_session summarises the session ask_team wrote, found by its log_dir, a turn folder,
// its id or as the newest; anything outside the log root is refused.
func TestReadSession(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}})
	cs := connect(t, srv, nil)
	none, err := call(t, t.Context(), cs, "read_session", nil, false)
	if err != nil || !none.IsError || !strings.Contains(text(none), "no session in the log root") {
		t.Fatalf("before any session: %v %q", err, text(none))
	}
	res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "What is the capital of France?"}, false)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var asked AskResult
	structured(t, res, &asked)

	outside := t.TempDir()
	if err := os.Symlink(asked.LogDir, filepath.Join(outside, "link")); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(srv.logRoot, asked.SessionID, "..", "..")
	for _, tc := range []struct {
		name string
		args map[string]any
		want string // "" for a summary of the demo session
	}{
		{"log_dir", map[string]any{"log_dir": asked.LogDir}, ""},
		{"turn folder", map[string]any{"log_dir": filepath.Join(asked.LogDir, "turn_1")}, ""},
		{"session id", map[string]any{"session_id": asked.SessionID}, ""},
		{"newest", map[string]any{}, ""},
		{"a link into the root reads the session", map[string]any{"log_dir": filepath.Join(outside, "link")}, ""},
		{"outside the root", map[string]any{"log_dir": outside}, "is not a session folder under this server's log root"},
		{"dot-dot out of the root", map[string]any{"log_dir": escape}, "is not a session folder under this server's log root"},
		{"a file in the session", map[string]any{"log_dir": filepath.Join(asked.LogDir, "turn_1", "status.json")}, "is not a session folder"},
		{"missing", map[string]any{"log_dir": filepath.Join(srv.logRoot, "log_20200101_000000")}, "does not exist"},
		{"bad id", map[string]any{"session_id": "../etc"}, `"../etc" is not a session id`},
		{"unknown id", map[string]any{"session_id": "log_20200101_000000"}, "no session log_20200101_000000"},
		{"both", map[string]any{"session_id": asked.SessionID, "log_dir": asked.LogDir}, "not both"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := call(t, t.Context(), cs, "read_session", tc.args, false)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if !res.IsError || !strings.Contains(text(res), tc.want) {
					t.Fatalf("error %v, %q; want %q", res.IsError, text(res), tc.want)
				}
				return
			}
			if res.IsError {
				t.Fatal(text(res))
			}
			var rep SessionReport
			structured(t, res, &rep)
			if rep.SessionID != asked.SessionID || rep.LogDir != asked.LogDir || rep.Status != event.StatusCompleted || len(rep.Turns) != 1 {
				t.Fatalf("report %+v", rep)
			}
			turn := rep.Turns[0]
			if turn.Question != "What is the capital of France?" || turn.Winner != "researcher" || turn.FinalAnswer != asked.Answer ||
				turn.ExitCode == nil || *turn.ExitCode != 0 || len(turn.Votes) != 3 || len(turn.Agents) != 3 || turn.Answers != 4 ||
				turn.WinnerAnswer != "agent1.2" || turn.Tokens != asked.Tokens {
				t.Errorf("turn %+v", turn)
			}
			if turn.Agents[1].ID != "skeptic" || turn.Agents[1].VotesCast == 0 || turn.Agents[1].Answers != 1 {
				t.Errorf("agent %+v", turn.Agents[1])
			}
		})
	}
}
