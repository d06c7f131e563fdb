package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// TestE2E_MemoryFilesystemMode: MassGen's filesystem memory. Turn 1: the builder saves a
// short-term and a long-term memory with the tools; the reviewer, who keeps none of its own,
// reads them at its next step (the short-term one in full, the long-term one by name) and
// loads the long-term one. The files are in the builder's workspace and the logged final one.
// Turn 2 of the conversation, in a new process as --continue makes it: the memories of both
// agents, the loser's too, are still read by every agent, and the builder changes its own.
func TestE2E_MemoryFilesystemMode(t *testing.T) {
	team := func(builderCalls, reviewerCalls string) *config.Config {
		cfg, rep := config.Parse("memory.yaml", []byte(`
agents:
  - id: builder
    backend:
      type: scripted
      latency: 100ms
      tool_calls: `+builderCalls+`
      answers: ["Done."]
      vote: agent1
  - id: reviewer
    backend:
      type: scripted
      latency: 400ms
      tool_calls: `+reviewerCalls+`
      answers: ["Also done."]
      vote: agent1
orchestrator:
  final_presentation: verbatim
  coordination: {enable_memory_filesystem_mode: true}
`))
		if !rep.OK() {
			t.Fatal(rep.Text())
		}
		return cfg
	}
	root := t.TempDir()
	var out bytes.Buffer
	opts := Options{Logging: true, LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"),
		Sinks: []event.Sink{view.NewPlain(&out)}, Question: "Remember things.", Turn: 1}
	first := team(`[{name: create_memory, args: {name: prefs, description: "What the user likes", content: "Answers in French."}},
        {name: create_memory, args: {name: history, description: "Project history", content: "Begun in 2024.", tier: long_term}}]`,
		`[{name: load_memory, args: {name: history}}, {name: update_memory, args: {name: prefs, content: "hijacked"}},
        {name: create_memory, args: {name: prefs, description: "The reviewer's own", content: "Reviews are short."}}]`)
	res1, err := Run(t.Context(), first, opts)
	if err != nil || res1.Winner != "builder" {
		t.Fatalf("turn 1: %+v %v\n%s", res1.Result, err, out.String())
	}
	reviewer := readModelInput(t, res1.Dir, "reviewer")
	for _, want := range []string{"### prefs [Agent: agent1]", "Answers in French.", "| agent1 | history | Project history |"} {
		if !strings.Contains(reviewer, want) {
			t.Errorf("the reviewer did not read %q of the memories; it read:\n%s", want, reviewer)
		}
	}
	if strings.Contains(reviewer, "Begun in 2024.\n\n---") {
		t.Errorf("the long-term memory's content was pushed into the reviewer's context")
	}
	rs := resultsInOrder(t, res1.Dir)
	var load, hijack *event.ToolResult
	for i := range rs {
		switch {
		case rs[i].Agent == "reviewer" && rs[i].Tool == "load_memory":
			load = &rs[i]
		case rs[i].Agent == "reviewer" && rs[i].Tool == "update_memory":
			hijack = &rs[i]
		}
	}
	if load == nil || load.IsError || !strings.Contains(load.Content, "Begun in 2024.") {
		t.Errorf("load_memory by the reviewer: %+v", load)
	}
	if hijack == nil || !hijack.IsError || !strings.Contains(hijack.Content, "agent1's") {
		t.Errorf("the reviewer changed the builder's memory: %+v", hijack)
	}
	logged := filepath.Join(res1.Dir, "final", "builder", "workspace", "memory", "short_term", "prefs.md")
	if data, err := os.ReadFile(logged); err != nil || !strings.Contains(string(data), "Answers in French.") {
		t.Fatalf("the logged workspace's memory: %q %v", data, err)
	}

	// Turn 2, in a new process: the conversation starts from the logged winner's workspace.
	out.Reset()
	opts.Conversation = ResumeConversation(filepath.Join(res1.Dir, "final", "builder", "workspace"))
	t.Cleanup(func() { _ = opts.Conversation.Close() })
	opts.Question, opts.Turn, opts.Session = "What do you remember?", 2, res1.Session
	second := team(`[{name: update_memory, args: {name: prefs, content: "Answers in Italian now."}}]`, `[]`)
	res2, err := Run(t.Context(), second, opts)
	if err != nil || res2.Winner != "builder" {
		t.Fatalf("turn 2: %+v %v\n%s", res2.Result, err, out.String())
	}
	if got := readModelInput(t, res2.Dir, "reviewer"); !strings.Contains(got, "Answers in") || !strings.Contains(got, "| agent1 | history |") {
		t.Errorf("turn 2: the reviewer did not read the first turn's memories:\n%s", got)
	}
	// The loser's memory of the same name came through the winner's workspace, in a file of
	// its own, and is still the reviewer's.
	if got := readModelInput(t, res2.Dir, "builder"); !strings.Contains(got, "### prefs [Agent: agent2]") || !strings.Contains(got, "Reviews are short.") {
		t.Errorf("turn 2: the builder did not read the reviewer's memory of turn 1:\n%s", got)
	}
	for _, r := range resultsInOrder(t, res2.Dir) {
		if r.Tool == "update_memory" && r.IsError {
			t.Errorf("turn 2: the builder could not change its memory: %s", r.Content)
		}
	}
	logged = filepath.Join(res2.Dir, "final", "builder", "workspace", "memory", "short_term", "prefs.md")
	if data, err := os.ReadFile(logged); err != nil || !strings.Contains(string(data), "Answers in Italian now.") {
		t.Errorf("turn 2's logged memory: %q %v", data, err)
	}
}

// readModelInput is everything the agent's model calls were sent in a session: system
// messages and messages.
func readModelInput(t *testing.T, dir, agent string) string {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range evs {
		if mc, ok := e.Payload.(event.ModelCalled); ok && mc.Agent == agent {
			b.WriteString(mc.System + "\n")
			for _, m := range mc.Messages {
				b.WriteString(m.Content + "\n")
			}
		}
	}
	return b.String()
}
