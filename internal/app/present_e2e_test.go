package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// presenting reports whether a request continues a conversation into the final presentation.
func presenting(body map[string]any) bool {
	raw, _ := json.Marshal(body)
	return strings.Contains(string(raw), "Coordination is over.")
}

// forbidsCalls reports whether a request forbids tool calls, in any of the four wire formats.
func forbidsCalls(body map[string]any) bool {
	return body["tool_choice"] == "none" || obj(body["tool_choice"])["type"] == "none" ||
		obj(obj(body["toolConfig"])["functionCallingConfig"])["mode"] == "NONE"
}

// votingPresenter plays decide, except that presenting it votes again, as the fake in the
// review did: unless the request forbids tool calls and honour is set (an API that enforces
// the tool choice), in which case it writes its answer.
func votingPresenter(honour bool) player {
	return func(answer string, offered []string, enum []any, answered bool, body map[string]any) move {
		m := decide(answer, offered, enum, answered, body)
		if !presenting(body) || honour && forbidsCalls(body) {
			return m
		}
		return move{tool: "vote", args: `{"agent_id":"agent1","reason":"still the best"}`}
	}
}

// recording wraps a fake's responder to keep the presentation requests' bodies.
type recording struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (r *recording) wrap(respond func(http.ResponseWriter, map[string]any) bool) func(http.ResponseWriter, map[string]any) bool {
	return func(w http.ResponseWriter, body map[string]any) bool {
		if presenting(body) {
			r.mu.Lock()
			r.bodies = append(r.bodies, body)
			r.mu.Unlock()
		}
		return respond(w, body)
	}
}

// TestE2E_VotingPresenterIsBounded runs a one-agent team on each API's fake whose model keeps
// calling vote in the final presentation (presentation_context: continue, the default). The
// first presentation request keeps the API's default tool choice (the cached conversation
// stays valid); after the refused vote the next one forbids tool calls in that API's format.
// An API that enforces it gives the presented answer on that second call, and a model that
// ignores it is stopped there with the stored answer: two calls, not 25 rounds.
func TestE2E_VotingPresenterIsBounded(t *testing.T) {
	const answer = "Paris is the capital of France."
	wires := []struct {
		name, backend string
		serve         func(string, player) func(http.ResponseWriter, map[string]any) bool
		path          string
	}{
		{"responses", "openai", openaiResponsesAs, "/v1"},
		{"chat completions", "groq", chatCompletionsAs, "/openai/v1"},
		{"anthropic", "claude", anthropicMessagesAs, ""},
		{"gemini", "gemini", geminiStreamAs, ""},
	}
	for _, wire := range wires {
		for _, honour := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/honours tool choice %v", wire.name, honour), func(t *testing.T) {
				rec := &recording{}
				srv := newFake(t, nil, rec.wrap(wire.serve(answer, votingPresenter(honour))))
				yaml := fmt.Sprintf("agents:\n  - id: solo\n    backend: {type: %s, model: m1, base_url: %q}\n"+
					"timeout_settings: {agent_timeout_seconds: 4}\n", wire.backend, srv.URL+wire.path)
				cfg, rep := config.Parse("solo.yaml", []byte(yaml))
				if !rep.OK() {
					t.Fatal(rep.Text())
				}
				var out bytes.Buffer
				res, err := Run(t.Context(), cfg, Options{Question: "What is the capital of France?", LogRoot: t.TempDir(),
					Getenv: func(k string) string { return keys[k] }, Sinks: []event.Sink{view.NewPlain(&out)}})
				if err != nil {
					t.Fatal(err)
				}
				want, calls := "FINAL: "+answer, 2
				if !honour {
					want = answer
				}
				if res.ExitCode != 0 || res.FinalAnswer != want {
					t.Fatalf("result %+v, want %q\n%s", res.Result, want, out.String())
				}
				if len(rec.bodies) != calls {
					t.Fatalf("%d presentation requests (%d input tokens), want %d\n%s", len(rec.bodies), len(rec.bodies)*usageIn, calls, out.String())
				}
				for k, b := range rec.bodies {
					if forbidsCalls(b) != (k > 0) {
						t.Errorf("presentation request %d: forbids tool calls %v, want %v (tool_choice %v, toolConfig %v)",
							k+1, forbidsCalls(b), k > 0, b["tool_choice"], b["toolConfig"])
					}
					if len(list(b["tools"])) == 0 {
						t.Errorf("presentation request %d lost its tools, and with them the cached prefix", k+1)
					}
				}
				if !honour && !strings.Contains(out.String(), "the presenter kept calling vote after being told not to") {
					t.Errorf("the output does not say why the stored answer was used:\n%s", out.String())
				}
			})
		}
	}
}
