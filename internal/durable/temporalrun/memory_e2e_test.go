package temporalrun

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/durable"
	"massgen/internal/event"
	"massgen/internal/provider"
)

// Persistent memory on Temporal: the store is on the workers, and two sessions of one config
// there remember and recall what two local sessions of it do.

// embeddingsServer is a local OpenAI embeddings endpoint: each word of a text adds to one of
// 32 dimensions, so texts that share words are near; every text costs 11 tokens.
func embeddingsServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&body) != nil {
			http.Error(w, `{"error":{"message":"unexpected request"}}`, http.StatusBadRequest)
			return
		}
		data := make([]any, len(body.Input))
		for i, s := range body.Input {
			v := make([]float32, 32)
			for _, word := range strings.Fields(strings.ToLower(s)) {
				h := 0
				for _, c := range strings.Trim(word, ".,?!") {
					h = h*31 + int(c)
				}
				v[(h%31+31)%31]++
			}
			v[31] = 0.01
			data[i] = map[string]any{"object": "embedding", "index": i, "embedding": v}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body.Model,
			"usage": map[string]any{"prompt_tokens": 11 * len(body.Input), "total_tokens": 11 * len(body.Input)}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// memoryLog is what memory did in a log: its events, and the usage reported after the final
// answer (remembering's) and before the first turn (recall's).
func memoryLog(evs []event.Event) (mem []string, recall, remember []string, logged provider.Usage) {
	final, turned := false, false
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.MemoryRetrieved, event.MemoryStored, event.MemoryTrouble:
			b, _ := json.Marshal(p)
			mem = append(mem, p.Type()+" "+string(b))
		case event.FinalAnswer:
			final = true
		case event.TurnStarted:
			turned = true
		case event.UsageReported:
			logged = logged.Add(p.Usage)
			u := fmt.Sprintf("%s %d/%d", p.Agent, p.Usage.InputTokens, p.Usage.OutputTokens)
			switch {
			case final:
				remember = append(remember, u)
			case !turned:
				recall = append(recall, u)
			}
		}
	}
	return mem, recall, remember, logged
}

func TestSession_MemoryAsLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	emb := embeddingsServer(t)
	t.Setenv("OPENAI_API_KEY", "test-embeddings-key")
	t.Setenv("OPENAI_BASE_URL", emb.URL+"/v1")
	target := durable.Target{Address: devServer(t), Queue: "memory-test"}
	c := dialTarget(t, target)
	allow, err := durable.NewAllowlist([]string{emb.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	workerWith(t, c, target, &Activities{Allow: allow})
	team := func(store string) string {
		return fmt.Sprintf(`
agents:
  - id: a
    backend: {type: scripted, model: s, answers: ["Paris is the capital of France. It lies on the Seine."], vote: agent1}
  - id: b
    backend: {type: scripted, model: s, latency: 200ms, answers: ["The capital is Paris."], vote: agent1}
orchestrator:
  final_presentation: verbatim
memory:
  enabled: true
  persistent_memory: {session_name: capitals, embedding: {provider: openai}, qdrant: {path: %q}}
`, store)
	}
	localStore, remoteStore := t.TempDir(), t.TempDir()
	for k := range 2 {
		local := runLogged(t, loadTeam(t, team(localStore)), t.TempDir(), nil)
		remote := runLogged(t, loadTeam(t, team(remoteStore)), t.TempDir(), remoteOn(c, target))
		if remote.ExitCode != 0 || remote.Winner != local.Winner || remote.FinalAnswer != local.FinalAnswer {
			t.Fatalf("session %d: Temporal %s %q (exit %d, %v); local %s %q", k+1, remote.Winner, remote.FinalAnswer, remote.ExitCode, remote.Err,
				local.Winner, local.FinalAnswer)
		}
		lmem, lrecall, lremember, _ := memoryLog(readLog(t, local.Dir))
		rlog := readLog(t, remote.Dir)
		rmem, rrecall, rremember, logged := memoryLog(rlog)
		if d := cmp.Diff(lmem, rmem); d != "" {
			t.Errorf("session %d: memory's events differ from the local run's (-local +Temporal):\n%s", k+1, d)
		}
		stored, retrieved := 0, 0
		for _, m := range rmem {
			stored += strings.Count(m, "memory_stored")
			retrieved += strings.Count(m, "memory_retrieved")
		}
		if stored == 0 || retrieved != 2*k {
			t.Errorf("session %d: %d memory_stored and %d memory_retrieved events, want some and %d:\n%s", k+1, stored, retrieved, 2*k, strings.Join(rmem, "\n"))
		}
		if !cmp.Equal(lrecall, rrecall) || !cmp.Equal(lremember, rremember) || len(rremember) == 0 {
			t.Errorf("session %d: recall paid %q, remembering %q on Temporal; locally %q, %q", k+1, rrecall, rremember, lrecall, lremember)
		}
		// Every call is in the session's cost, memory's included (its embeddings are the only
		// priced calls).
		logged.CostUSD = 0 // the events' own figures, added up in CostUSD
		if remote.Usage != logged || remote.CostUSD != local.CostUSD || remote.CostUSD == 0 {
			t.Errorf("session %d: the result's usage %+v and cost %v, the log's usage %+v; locally cost %v", k+1, remote.Usage, remote.CostUSD, logged, local.CostUSD)
		}
		// The second session's agents read what the first remembered.
		for _, id := range []string{"a", "b"} {
			for _, e := range rlog {
				m, ok := e.Payload.(event.ModelCalled)
				if !ok || m.Agent != id || m.Stage != provider.StageInitial {
					continue
				}
				if has := strings.Contains(m.System, "## Relevant memories") && strings.Contains(m.System, "Paris is the capital of France."); has != (k == 1) {
					t.Errorf("session %d: %s's system prompt carries the first session's memories: %v", k+1, id, has)
				}
				break
			}
		}
	}
	// A session on Temporal shares the memories of the local runs of its config: the scope
	// travels with it.
	shared := runLogged(t, loadTeam(t, team(localStore)), t.TempDir(), remoteOn(c, target))
	mem, _, _, _ := memoryLog(readLog(t, shared.Dir))
	if n := strings.Count(strings.Join(mem, "\n"), "memory_retrieved"); n != 2 {
		t.Errorf("a session on Temporal recalled from the local runs' store %d times, want 2:\n%s", n, strings.Join(mem, "\n"))
	}
}

// A session with workspaces is held by one worker: its agents remember there before it is
// released, and the next session recalls it.
func TestSession_MemoryOnTheHolder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	emb := embeddingsServer(t)
	t.Setenv("OPENAI_API_KEY", "test-embeddings-key")
	t.Setenv("OPENAI_BASE_URL", emb.URL+"/v1")
	allow, err := durable.NewAllowlist([]string{emb.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	target, c, _ := heldSessions(t, "memory-held-test", &Activities{Allow: allow, TrustSessions: true})
	cfg := loadTeam(t, fmt.Sprintf(`
agents:
  - id: a
    backend: {type: scripted, model: s, cwd: ws, answers: ["Paris is the capital of France."], vote: agent1}
  - id: b
    backend: {type: scripted, model: s, latency: 200ms, answers: ["The capital is Paris."], vote: agent1}
orchestrator:
  final_presentation: verbatim
memory:
  enabled: true
  persistent_memory: {session_name: held, embedding: {provider: openai}, qdrant: {path: %q}}
`, t.TempDir()))
	for k := range 2 {
		res := runLogged(t, cfg, t.TempDir(), remoteOn(c, target))
		evs := readLog(t, res.Dir)
		for _, e := range evs {
			// Remembering after the release would claim the session again.
			if s, ok := e.Payload.(event.ToolServerStatus); ok && s.Status == "moved" {
				t.Errorf("session %d moved: %s", k+1, s.Detail)
			}
		}
		mem, _, remember, _ := memoryLog(evs)
		all := strings.Join(mem, "\n")
		if res.ExitCode != 0 || strings.Count(all, "memory_retrieved") != 2*k || !strings.Contains(all, "memory_stored") ||
			strings.Contains(all, "memory_trouble") || len(remember) == 0 {
			t.Errorf("session %d (exit %d, %v): memory did\n%s\nand paid %q after the final answer", k+1, res.ExitCode, res.Err, all, remember)
		}
	}
}

// A worker sends embeddings only where its allowlist lets them go; memory that cannot run
// there is reported, and the session goes on, as locally when the endpoint fails.
func TestSession_MemoryEndpointRefusedByTheWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	emb := embeddingsServer(t)
	t.Setenv("OPENAI_API_KEY", "test-embeddings-key")
	t.Setenv("OPENAI_BASE_URL", emb.URL+"/v1")
	target := durable.Target{Address: devServer(t), Queue: "memory-refused-test"}
	c := dialTarget(t, target)
	workerWith(t, c, target, &Activities{}) // no --allow-base-url
	cfg := loadTeam(t, fmt.Sprintf(`
agents:
  - id: a
    backend: {type: scripted, model: s, answers: ["Paris is the capital of France."]}
memory:
  enabled: true
  persistent_memory: {embedding: {provider: openai}, qdrant: {path: %q}}
`, t.TempDir()))
	res := runLogged(t, cfg, t.TempDir(), remoteOn(c, target))
	mem, _, _, _ := memoryLog(readLog(t, res.Dir))
	all := strings.Join(mem, "\n")
	if res.ExitCode != 0 || res.FinalAnswer != "Paris is the capital of France." {
		t.Errorf("exit %d (%v), final %q", res.ExitCode, res.Err, res.FinalAnswer)
	}
	if strings.Count(all, "memory_trouble") != 2 || strings.Count(all, "does not send the key in its OPENAI_API_KEY") != 2 || strings.Contains(all, "memory_stored") {
		t.Errorf("memory did:\n%s\nwant the refusal reported by recall and by remembering", all)
	}
}
