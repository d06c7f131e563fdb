package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// partBlock finds the answer blocks of a request body as JSON writes them (\n escaped).
var partBlock = regexp.MustCompile(`<agent\d+>\\n(.*?)\\n<end of agent\d+>`)

// partsPlayer plays an agent owning a part: it shares its part once, then stops; asked to
// integrate (no workflow tools), it joins every part it is shown.
func partsPlayer(answer string, offered []string, _ []any, answered bool, body map[string]any) move {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(body)
	raw := b.String()
	if len(offered) == 0 || strings.Contains(raw, "Integrate the parts into the final result now.") {
		var parts []string
		for _, m := range partBlock.FindAllStringSubmatch(raw, -1) {
			parts = append(parts, m[1])
		}
		return move{text: "FINAL: " + strings.Join(parts, " | ")}
	}
	if !answered && !strings.Contains(raw, "Your own current answer is the one labelled") {
		args, _ := json.Marshal(map[string]string{"content": answer})
		return move{tool: "new_answer", args: string(args), text: answer}
	}
	return move{tool: "stop", args: `{"summary":"my part is done","status":"complete"}`}
}

// Three agents on three real wire formats own one subtask each; each shares its part and
// stops, and the presenter (the last agent, MassGen's default) integrates all three.
func TestE2E_DecompositionOnThreeProviders(t *testing.T) {
	gpt := newFake(t, nil, openaiResponsesAs("The page: a form and a list.", partsPlayer))
	claude := newFake(t, nil, anthropicMessagesAs("The API: POST /todos and GET /todos.", partsPlayer))
	fast := newFake(t, nil, chatCompletionsAs("The tests: one per endpoint.", partsPlayer))
	cfg, rep := config.Parse("parts.yaml", []byte(fmt.Sprintf(`
agents:
  - id: gpt
    subtask: Build the page.
    backend: {type: openai, model: gpt-5-mini, base_url: "%s/v1"}
  - id: claude
    subtask: Build the API.
    backend: {type: claude, model: claude-sonnet-4-5, base_url: "%s"}
  - id: fast
    subtask: Write the tests.
    backend: {type: groq, model: llama-3.3-70b-versatile, base_url: "%s/openai/v1"}
orchestrator: {coordination_mode: decomposition}
timeout_settings: {agent_timeout_seconds: 4, orchestrator_timeout_seconds: 120}
`, gpt.URL, claude.URL, fast.URL)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Build a small todo app.", Logging: true, LogRoot: root,
		Getenv: func(k string) string { return keys[k] }, Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "fast" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	for _, part := range []string{"The page: a form and a list.", "The API: POST /todos and GET /todos.", "The tests: one per endpoint."} {
		if !strings.Contains(res.FinalAnswer, part) {
			t.Errorf("the final answer lacks %q: %s", part, res.FinalAnswer)
		}
	}
	var status struct {
		Agents map[string]struct {
			Subtask struct {
				Text, Status string
			} `json:"subtask"`
		} `json:"agents"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	for id, want := range map[string]string{"gpt": "Build the page.", "claude": "Build the API.", "fast": "Write the tests."} {
		if st := status.Agents[id].Subtask; st.Text != want || st.Status != event.PartComplete {
			t.Errorf("status.json %s subtask %+v", id, st)
		}
	}
	for _, line := range []string{"subtask of agent2 claude (config): Build the API.", "agent1 gpt: stopped (complete): my part is done", "coordination ended: all_stopped"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("the plain view lacks %q:\n%s", line, out.String())
		}
	}
	assertNoKeys(t, root)
}

// decompositionTeam is three scripted agents with workspaces: the frontend and the backend
// both write README.md (differently), each writes files of its own, and the integrator
// joins the parts. hang makes that agent hang on every call.
func decompositionTeam(t *testing.T, hang string) *config.Config {
	t.Helper()
	fault := func(id string) string {
		if id == hang {
			return "\n      faults: [{kind: hang}]"
		}
		return ""
	}
	cfg, rep := config.Parse("parts.yaml", []byte(fmt.Sprintf(`
agents:
  - id: frontend
    subtask: The page.
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: ui/index.html, content: "<form></form>"}}
        - {name: write_file, args: {path: README.md, content: "Open ui/index.html."}}
      answers: ["The page is in ui/index.html."]%s
  - id: backend
    subtask: The API.
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: api/server.go, content: "package api"}}
        - {name: write_file, args: {path: README.md, content: "Run go run ./api."}}
      answers: ["The API is in api/server.go."]%s
  - id: integrator
    subtask: The docs, and the integration.
    backend:
      type: scripted
      cwd: ws
      tool_calls:
        - {name: write_file, args: {path: docs/usage.md, content: "Usage."}}
      answers: ["The docs are in docs/usage.md."]
      final: "All parts:\n{{parts}}"
orchestrator: {coordination_mode: decomposition, presenter_agent: integrator}
timeout_settings: {orchestrator_timeout_seconds: 3}
`, fault("frontend"), fault("backend"))))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg
}

func runParts(t *testing.T, cfg *config.Config) (Result, string) {
	t.Helper()
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Build a small todo app.", Logging: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

// Every part's workspace files reach the final workspace; the file two parts wrote
// differently is kept from the first and the other's version put beside it, said in the
// presenter's prompt, the plain view and status.json.
func TestE2E_DecompositionWorkspacesReachTheFinalWorkspace(t *testing.T) {
	res, out := runParts(t, decompositionTeam(t, ""))
	if res.ExitCode != 0 || res.Winner != "integrator" {
		t.Fatalf("result %+v\n%s", res.Result, out)
	}
	for _, part := range []string{"The page is in ui/index.html.", "The API is in api/server.go.", "The docs are in docs/usage.md."} {
		if !strings.Contains(res.FinalAnswer, part) {
			t.Errorf("the final answer lacks %q:\n%s", part, res.FinalAnswer)
		}
	}
	final := filepath.Join(res.Dir, "final", "integrator", "workspace")
	for rel, want := range map[string]string{"ui/index.html": "<form></form>", "api/server.go": "package api", "docs/usage.md": "Usage.",
		"README.md": "Open ui/index.html.", "README.md.from-agent2": "Run go run ./api."} {
		b, err := os.ReadFile(filepath.Join(final, filepath.FromSlash(rel)))
		if err != nil || string(b) != want {
			t.Errorf("final workspace %s = %q, %v; want %q", rel, b, err, want)
		}
	}
	if !strings.Contains(out, "conflict: README.md written differently by several parts; agent1's kept, agent2's at README.md.from-agent2") {
		t.Errorf("the plain view does not show the conflict:\n%s", out)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var presented string
	for _, e := range evs {
		if m, ok := e.Payload.(event.ModelCalled); ok && m.Agent == "integrator" && m.Stage == "presentation" {
			presented = m.Messages[0].Content
		}
	}
	if !strings.Contains(presented, "README.md: agent1's version is in place; agent2's is at README.md.from-agent2") {
		t.Errorf("the presenter was not told of the conflict:\n%s", presented)
	}
	var status struct {
		Results struct {
			Conflicts []event.FileConflict `json:"file_conflicts"`
			Gathered  int                  `json:"gathered_files"`
		} `json:"results"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	if len(status.Results.Conflicts) != 1 || status.Results.Conflicts[0].Path != "README.md" || status.Results.Gathered != 3 {
		t.Errorf("status.json results %+v", status.Results)
	}
}

// A part that never stops is cut by the session timeout and named in the final answer; the
// others' work and files still reach the result.
func TestE2E_DecompositionTimedOutPartIsNamed(t *testing.T) {
	res, out := runParts(t, decompositionTeam(t, "backend"))
	if res.ExitCode != 3 {
		t.Fatalf("result %+v\n%s", res.Result, out)
	}
	if !strings.Contains(res.FinalAnswer, "Incomplete: agent2 (the session timed out before it stopped)") ||
		!strings.Contains(res.FinalAnswer, "The page is in ui/index.html.") {
		t.Fatalf("final answer:\n%s", res.FinalAnswer)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "final", "integrator", "workspace", "ui", "index.html")); err != nil {
		t.Errorf("the finished part's file did not reach the final workspace: %v", err)
	}
	var status struct {
		Agents map[string]struct {
			Subtask struct{ Status, Why string } `json:"subtask"`
		} `json:"agents"`
		Results struct {
			Unfinished []string `json:"unfinished_parts"`
		} `json:"results"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	if st := status.Agents["backend"].Subtask; st.Status != event.PartUnfinished || len(status.Results.Unfinished) != 1 {
		t.Errorf("status.json: backend %+v, unfinished %v", st, status.Results.Unfinished)
	}
	if !strings.Contains(out, "part agent2: unfinished: the session timed out before it stopped") {
		t.Errorf("the plain view does not name the unfinished part:\n%s", out)
	}
}

// MassGen's documented decomposition config runs as is, its three OpenAI agents served by a
// local fake of the Responses API: the integrator it names presents every part.
func TestE2E_MassGenDecompositionConfigOnAFake(t *testing.T) {
	cfg, rep := config.Load("../config/testdata/massgen_decomposition.yaml")
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	answers := map[string]string{"frontend": "UI: a React page.", "backend": "API: a SQLite store.", "integrator": "Glue: one compose file."}
	for i := range cfg.Agents {
		a := &cfg.Agents[i]
		a.Backend.BaseURL = newFake(t, nil, openaiResponsesAs(answers[a.ID], partsPlayer)).URL + "/v1"
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Build a small full-stack todo app.", Logging: true, LogRoot: root,
		Getenv: func(k string) string { return keys[k] }, Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "integrator" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	for _, a := range answers {
		if !strings.Contains(res.FinalAnswer, a) {
			t.Errorf("the final answer lacks %q: %s", a, res.FinalAnswer)
		}
	}
	assertNoKeys(t, root)
}
