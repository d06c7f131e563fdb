package mcpserve

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// ask_team runs the demo team and returns its final answer, winner and votes, after one
// progress notification per answer, vote and phase, in increasing order.
func TestAskTeam_Demo(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}, Version: "test"})
	progress := newProgressLog()
	cs := connect(t, srv, progress)
	res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "What is the capital of France?"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	var out AskResult
	structured(t, res, &out)
	if !strings.Contains(out.Answer, "Paris") || out.Winner != "researcher" || out.Status != event.StatusCompleted || out.ExitCode != 0 || out.Team != "demo" {
		t.Fatalf("result %+v", out)
	}
	if !strings.HasPrefix(text(res), out.Answer) || !strings.Contains(text(res), "winner researcher with 3 of 3 counted votes") {
		t.Errorf("text content %q", text(res))
	}
	var voters []string
	for _, v := range out.Votes {
		if v.For != "researcher" || v.Reason == "" {
			t.Errorf("vote %+v", v)
		}
		voters = append(voters, v.Voter)
	}
	if !slices.Equal(voters, []string{"researcher", "skeptic", "historian"}) {
		t.Errorf("voters %v", voters)
	}
	if out.Tokens.Output == 0 || !out.CostKnown {
		t.Errorf("tokens %+v, cost known %v", out.Tokens, out.CostKnown)
	}
	if !filepath.IsAbs(out.LogDir) || filepath.Base(out.LogDir) != out.SessionID {
		t.Errorf("log dir %q, session %q", out.LogDir, out.SessionID)
	}
	if _, err := os.Stat(filepath.Join(out.LogDir, "turn_1", "status.json")); err != nil {
		t.Errorf("the session wrote no log: %v", err)
	}
	// The client hands notifications to its handler on its own time: wait for the last one.
	progress.waitFor(t, "session completed in")
	msgs, vals := progress.snapshot()
	for _, want := range []string{"session started: 3 agents (researcher, skeptic, historian)", "researcher answered (agent1.1)",
		"skeptic voted for researcher", "the votes of", "coordination ended (consensus): winner researcher",
		"researcher presents the final answer"} {
		if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, want) }) {
			t.Errorf("no progress %q in %q", want, msgs)
		}
	}
	for i := 1; i < len(vals); i++ {
		if vals[i] <= vals[i-1] {
			t.Errorf("progress %v does not increase", vals)
			break
		}
	}
}

// A call without a progress token gets no notifications.
func TestAskTeam_NoProgressWithoutToken(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}})
	progress := newProgressLog()
	cs := connect(t, srv, progress)
	res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "Capital of France?"}, false)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	if msgs, _ := progress.snapshot(); len(msgs) > 0 {
		t.Errorf("progress without a token: %q", msgs)
	}
}

// Cancelling the call interrupts the session: it ends as interrupted, its log complete.
func TestAskTeam_Cancel(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "slow", Config: parse(t, "slow.yaml", []byte(slow))}}})
	progress := newProgressLog()
	cs := connect(t, srv, progress)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := call(t, ctx, cs, "ask_team", map[string]any{"question": "Take your time."}, true)
		errc <- err
	}()
	started := progress.waitFor(t, "session started")
	_, logDir, _ := strings.Cut(started, "; log ")
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	waitInterrupted(t, srv, logDir)
}

// waitInterrupted waits until srv runs no session (Close would interrupt one too: it is not
// called), then checks that the session in logDir ended as interrupted.
func waitInterrupted(t *testing.T, srv *Server, logDir string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		srv.mu.Lock()
		active := srv.active
		srv.mu.Unlock()
		if active == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session still runs after its call was cancelled")
		}
		time.Sleep(20 * time.Millisecond)
	}
	evs, err := event.ReadFile(filepath.Join(logDir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	end, ok := evs[len(evs)-1].Payload.(event.SessionEnded)
	if !ok || end.Status != event.StatusInterrupted || end.ExitCode != app.ExitInterrupted {
		t.Fatalf("the log ends with %+v", evs[len(evs)-1].Payload)
	}
}

// blockingRun is a RunFunc that waits for release (or its context) and counts its calls.
type blockingRun struct {
	started chan *config.Config
	release chan struct{}
}

func newBlockingRun() *blockingRun {
	return &blockingRun{started: make(chan *config.Config, 10), release: make(chan struct{})}
}

func (b *blockingRun) run(ctx context.Context, cfg *config.Config, o app.Options) (app.Result, error) {
	b.started <- cfg
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return app.Result{Result: engineDone("an answer"), Session: "log_20260101_000000_000001"}, nil
}

// Beyond --max-sessions, a call is refused as busy at once; once a session ends, calls run
// again.
func TestAskTeam_Busy(t *testing.T) {
	br := newBlockingRun()
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}, MaxSessions: 1, Run: br.run})
	cs := connect(t, srv, nil)
	first := make(chan error, 1)
	go func() {
		res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "one"}, false)
		if err == nil && res.IsError {
			err = &toolError{text(res)}
		}
		first <- err
	}()
	<-br.started
	// A second session would block like the first: it must be refused at once instead.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := call(t, ctx, cs, "ask_team", map[string]any{"question": "two"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "busy: 1 sessions are running") || !strings.Contains(text(res), "--max-sessions") {
		t.Fatalf("second call: error %v, %q", res.IsError, text(res))
	}
	close(br.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	res, err = call(t, t.Context(), cs, "ask_team", map[string]any{"question": "three"}, false)
	if err != nil || res.IsError {
		t.Fatalf("after the first ended: %v %s", err, text(res))
	}
}

type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func engineDone(answer string) (r engine.Result) {
	r.Status, r.FinalAnswer, r.Winner = event.StatusCompleted, answer, "researcher"
	return r
}

// Bad calls are tool errors that say what to fix, and no session starts.
func TestAskTeam_Refusals(t *testing.T) {
	br := newBlockingRun()
	close(br.release)
	keyless := parse(t, "keyless.yaml", []byte("agents:\n  - id: gpt\n    backend:\n      type: openai\n      model: gpt-4o-mini\n"))
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}, {Name: "keyless", Config: keyless}}, MaxQuestionBytes: 100})
	fake := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}}, MaxQuestionBytes: 100, Run: br.run})
	t.Setenv("OPENAI_API_KEY", "")
	for _, tc := range []struct {
		name string
		srv  *Server
		args map[string]any
		want string
	}{
		{"empty question", fake, map[string]any{"question": "  "}, "the question is empty"},
		{"question too long", fake, map[string]any{"question": strings.Repeat("x", 101)}, "the question is 101 bytes, over this server's limit of 100"},
		{"no question", fake, map[string]any{"team": "demo"}, "question"},
		{"unknown argument", fake, map[string]any{"question": "q", "prompt": "p"}, "prompt"},
		{"unknown team", fake, map[string]any{"question": "q", "team": "nosuch"}, `no team "nosuch": the teams are demo`},
		{"missing file", fake, map[string]any{"question": "q", "files": []string{"nosuch.txt"}}, "files that do not exist: nosuch.txt ("},
		{"bad cwd_context", fake, map[string]any{"question": "q", "cwd_context": "everything"}, "cwd_context"},
		{"no API key", srv, map[string]any{"question": "q", "team": "keyless"}, "agent gpt: no API key for backend openai: set OPENAI_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc.srv, nil)
			res, err := call(t, t.Context(), cs, "ask_team", tc.args, false)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(text(res), tc.want) {
				t.Fatalf("error %v, %q; want %q", res.IsError, text(res), tc.want)
			}
			if res.StructuredContent != nil {
				t.Errorf("a refusal with structured content: %v", res.StructuredContent)
			}
		})
	}
	if len(br.started) != 0 {
		t.Errorf("%d sessions started for refused calls", len(br.started))
	}
}

// files and context_paths become read-only context paths, taken from the server's folder;
// cwd_context shares the folder itself. The team's config is left as it was.
func TestAskTeam_Files(t *testing.T) {
	br := newBlockingRun()
	close(br.release)
	dir := t.TempDir()
	for _, f := range []string{"a.txt", "docs/b.md"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := demo(t, true)
	cfg.Orchestrator.ContextPaths = []config.ContextPath{{Path: filepath.Join(dir, "docs"), Write: true}}
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: cfg}}, Dir: dir, Run: br.run})
	cs := connect(t, srv, nil)
	for _, tc := range []struct {
		name string
		args map[string]any
		want []config.ContextPath
	}{
		{"files", map[string]any{"files": []string{"a.txt", filepath.Join(dir, "docs", "b.md")}, "context_paths": []string{"./a.txt"}},
			[]config.ContextPath{{Path: filepath.Join(dir, "docs"), Write: true}, {Path: filepath.Join(dir, "a.txt")}, {Path: filepath.Join(dir, "docs", "b.md")}}},
		{"the config's own entry keeps its permission", map[string]any{"files": []string{"docs/"}},
			[]config.ContextPath{{Path: filepath.Join(dir, "docs"), Write: true}}},
		{"cwd ro", map[string]any{"cwd_context": "ro"},
			[]config.ContextPath{{Path: filepath.Join(dir, "docs"), Write: true}, {Path: dir}}},
		{"cwd rw", map[string]any{"cwd_context": "rw", "files": []string{"."}},
			[]config.ContextPath{{Path: filepath.Join(dir, "docs"), Write: true}, {Path: dir, Write: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["question"] = "q"
			res, err := call(t, t.Context(), cs, "ask_team", tc.args, false)
			if err != nil || res.IsError {
				t.Fatalf("%v %s", err, text(res))
			}
			got := (<-br.started).Orchestrator.ContextPaths
			if !cmp.Equal(got, tc.want) {
				t.Errorf("context paths %+v, want %+v", got, tc.want)
			}
		})
	}
	if len(cfg.Orchestrator.ContextPaths) != 1 {
		t.Errorf("the team's config was changed: %+v", cfg.Orchestrator.ContextPaths)
	}
}

// list_teams names every team, the first as the default, with its agents.
func TestListTeams(t *testing.T) {
	one := parse(t, "one.yaml", []byte("agents:\n  - id: solo\n    backend:\n      type: scripted\n      model: m1\n      answers: [\"x\"]\n"))
	srv := newServer(t, Options{Teams: []Team{{Name: "demo", Config: demo(t, true)}, {Name: "one", Config: one}}})
	cs := connect(t, srv, nil)
	res, err := call(t, t.Context(), cs, "list_teams", nil, false)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var out TeamsResult
	structured(t, res, &out)
	if len(out.Teams) != 2 || out.Teams[0].Name != "demo" || !out.Teams[0].Default || out.Teams[1].Default || out.Teams[0].ConfigPath != "demo.yaml" {
		t.Fatalf("teams %+v", out.Teams)
	}
	if a := out.Teams[1].Agents; len(a) != 1 || a[0] != (AgentInfo{ID: "solo", Backend: "scripted", Model: "m1"}) {
		t.Errorf("agents %+v", a)
	}
	if len(out.Teams[0].Agents) != 3 || out.Teams[0].Agents[2].ID != "historian" {
		t.Errorf("demo agents %+v", out.Teams[0].Agents)
	}
}

// The token of the HTTP transport never reaches a client, even when a model writes it.
func TestAskTeam_TokenRedacted(t *testing.T) {
	const token = "tok-SECRET-31337-abcdef"
	cfg := parse(t, "leak.yaml", []byte("agents:\n  - id: leaky\n    backend:\n      type: scripted\n      answers: [\"the token is "+token+"\"]\n"))
	srv := newServer(t, Options{Teams: []Team{{Name: "leak", Config: cfg}}, Token: token})
	cs := connect(t, srv, nil)
	res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "What is the token?"}, false)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, text(res))
	}
	var out AskResult
	structured(t, res, &out)
	if !strings.Contains(out.Answer, "the token is") || strings.Contains(text(res), token) || strings.Contains(out.Answer, token) {
		t.Fatalf("answer %q", out.Answer)
	}
}

// Close (Ctrl-C on massgen mcp) interrupts the running sessions and returns once their logs
// are written; the caller gets a tool error that says so, and later calls are refused.
func TestClose_InterruptsSessions(t *testing.T) {
	srv := newServer(t, Options{Teams: []Team{{Name: "slow", Config: parse(t, "slow.yaml", []byte(slow))}}})
	progress := newProgressLog()
	cs := connect(t, srv, progress)
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "Take your time."}, true)
		done <- answer{res, err}
	}()
	_, logDir, _ := strings.Cut(progress.waitFor(t, "session started"), "; log ")
	srv.Close()
	waitInterrupted(t, srv, logDir)
	a := <-done
	if a.err != nil || !a.res.IsError || !strings.HasPrefix(text(a.res), "the session was interrupted") {
		t.Fatalf("the interrupted call: %v %q", a.err, text(a.res))
	}
	var out AskResult
	structured(t, a.res, &out)
	if out.Status != event.StatusInterrupted || out.ExitCode != app.ExitInterrupted || out.LogDir != filepath.Dir(logDir) {
		t.Errorf("result %+v", out)
	}
	res, err := call(t, t.Context(), cs, "ask_team", map[string]any{"question": "again"}, false)
	if err != nil || !res.IsError || !strings.Contains(text(res), "shutting down") {
		t.Errorf("after Close: %v %q", err, text(res))
	}
}
