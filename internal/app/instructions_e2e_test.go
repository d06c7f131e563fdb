package app

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
)

// An agent's append_system_prompt reaches its model in the system message, after
// system_message, on every request.
func TestRun_AppendSystemPromptReachesTheModel(t *testing.T) {
	var mu sync.Mutex
	var systems []string
	answer := chatCompletions("It is Paris.")
	srv := newFake(t, nil, func(w http.ResponseWriter, body map[string]any) bool {
		first := obj(list(body["messages"])[0])
		mu.Lock()
		if first["role"] == "system" {
			systems = append(systems, fmt.Sprint(first["content"]))
		} else {
			systems = append(systems, "")
		}
		mu.Unlock()
		return answer(w, body)
	})
	cfg, rep := config.Parse("team.yaml", []byte(fmt.Sprintf(`
agents:
  - id: a
    system_message: You are a geographer.
    append_system_prompt: Always name the river.
    backend: {type: groq, model: llama-3.3-70b-versatile, base_url: "%s/openai/v1"}
timeout_settings: {agent_timeout_seconds: 10, orchestrator_timeout_seconds: 60}
`, srv.URL)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	res, err := Run(t.Context(), cfg, Options{Question: "Capital of France?", Getenv: func(k string) string { return keys[k] }})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("exit %d: %v %v", res.ExitCode, err, res.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(systems) == 0 {
		t.Fatal("no request reached the model")
	}
	for i, s := range systems {
		if !strings.Contains(s, "You are a geographer.\n\nAlways name the river.") {
			t.Errorf("request %d's system message lacks the appended instructions:\n%s", i, s)
		}
	}
}
