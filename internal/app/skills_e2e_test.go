package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// writeSkill writes the skill hello under dir: a SKILL.md and a script.
func writeSkill(t *testing.T, dir string) {
	t.Helper()
	files := map[string]string{
		"hello/SKILL.md":         "---\nname: hello\ndescription: Greets in the house style. Use it for any greeting.\n---\n\nRun scripts/greet.sh and keep its line.\n",
		"hello/scripts/greet.sh": "echo \"house greeting: $1\"\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// resultsInOrder are the results of the model's tool calls in a session's log, in order.
func resultsInOrder(t *testing.T, dir string) []event.ToolResult {
	return resultsFrom(t, dir, false)
}

// resultsFrom are the session's tool results in order, of the model's calls or, fromCode,
// of the calls its code made through the tools' socket.
func resultsFrom(t *testing.T, dir string, fromCode bool) []event.ToolResult {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []event.ToolResult
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok && r.FromCode == fromCode {
			out = append(out, r)
		}
	}
	return out
}

// TestE2E_SkillListedLoadedAndRun: with use_skills, a scripted agent sees the skill in its
// system prompt, loads it with read_skill, and runs its script with execute_command in the srt
// sandbox, where the skill's folder is visible but not writable.
func TestE2E_SkillListedLoadedAndRun(t *testing.T) {
	needBwrap(t)
	root := t.TempDir()
	skills := filepath.Join(root, "skills")
	writeSkill(t, skills)
	cfg, rep := config.Parse("skills.yaml", []byte(fmt.Sprintf(`
agents:
  - id: builder
    backend:
      type: scripted
      cwd: ws
      enable_mcp_command_line: true
      command_line_execution_mode: srt
      tool_calls:
        - {name: read_skill, args: {name: hello}}
        - {name: execute_command, args: {command: "sh ../../.skills/hello/scripts/greet.sh team > out.txt && cat out.txt"}}
        - {name: execute_command, args: {command: "d=../../.skills/hello; echo pwned > $d/SKILL.md"}}
      answers: ["out.txt holds the house greeting."]
      vote: agent1
  - id: reviewer
    backend: {type: scripted, answers: ["Short."], vote: agent1}
orchestrator:
  final_presentation: verbatim
  coordination: {use_skills: true, skills_directory: %q}
`, skills)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Greet the team.", Logging: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "builder" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	rs := resultsInOrder(t, res.Dir)
	if len(rs) != 3 {
		t.Fatalf("tool results: %+v", rs)
	}
	if rs[0].IsError || !strings.Contains(rs[0].Content, "Run scripts/greet.sh") || !strings.Contains(rs[0].Content, "- scripts/greet.sh") {
		t.Errorf("read_skill: %+v", rs[0])
	}
	if rs[1].IsError || !strings.Contains(rs[1].Content, "house greeting: team") {
		t.Errorf("the skill's script: %+v", rs[1])
	}
	if !rs[2].IsError || !strings.Contains(rs[2].Content, "Read-only file system") {
		t.Errorf("a write into the skill's folder: %+v", rs[2])
	}
	if b, err := os.ReadFile(filepath.Join(skills, "hello", "SKILL.md")); err != nil || strings.Contains(string(b), "pwned") {
		t.Errorf("the skill was changed: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(res.Dir, "final", "builder", "workspace", "out.txt")); err != nil || string(b) != "house greeting: team\n" {
		t.Errorf("final workspace out.txt = %q, %v", b, err)
	}
	var listed bool
	_ = filepath.WalkDir(filepath.Join(res.Dir, "builder"), func(p string, d os.DirEntry, _ error) error {
		if d != nil && d.Name() == "context.txt" {
			b, _ := os.ReadFile(p)
			listed = listed || strings.Contains(string(b), "<name>hello</name>") && strings.Contains(string(b), "Greets in the house style.")
		}
		return nil
	})
	if !listed {
		t.Error("no context.txt of the builder lists the skill in its system prompt")
	}
}

// TestE2E_SkillLinkOutRefused: a skill whose file links outside its folder stops the run
// before any model call, naming the link, and nothing is copied.
func TestE2E_SkillLinkOutRefused(t *testing.T) {
	root := t.TempDir()
	skills := filepath.Join(root, "skills")
	writeSkill(t, skills)
	secret := filepath.Join(root, "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(skills, "hello", "data.txt")); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Parse("skills.yaml", []byte(fmt.Sprintf(`
agents:
  - id: a
    backend: {type: scripted, answers: ["x"]}
orchestrator:
  coordination: {use_skills: true, skills_directory: %q}
`, skills)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	_, err := Run(t.Context(), cfg, Options{Question: "Q?", WorkspaceRoot: filepath.Join(root, "ws")})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != ExitConfig || !strings.Contains(err.Error(), "data.txt is a symbolic link to "+secret) ||
		!strings.Contains(err.Error(), "no model was called") {
		t.Fatalf("error %v, want a config error naming the link", err)
	}
}
