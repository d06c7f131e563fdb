package temporalrun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
)

// recordingModel is an OpenAI-compatible /chat/completions server that records every request
// and the key it came with, and plays one coordinating agent: it answers, then votes for
// agent1, then writes text when offered no tools.
type recordingModel struct {
	*httptest.Server
	requests atomic.Int32
	keys     atomic.Value // the last Authorization header
}

func newRecordingModel(t *testing.T, answer string) *recordingModel {
	t.Helper()
	m := &recordingModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.requests.Add(1)
		m.keys.Store(r.Header.Get("Authorization"))
		var body struct {
			Messages []json.RawMessage `json:"messages"`
			Tools    []struct {
				Function struct {
					Name       string          `json:"name"`
					Parameters json.RawMessage `json:"parameters"`
				} `json:"function"`
			} `json:"tools"`
		}
		raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err == nil {
			err = json.Unmarshal(raw, &body)
		}
		if err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		canVote := false
		for _, tl := range body.Tools {
			canVote = canVote || (tl.Function.Name == "vote" && strings.Contains(string(tl.Function.Parameters), `"enum":["agent1"]`))
		}
		msgs, _ := json.Marshal(body.Messages)
		answered := strings.Contains(string(msgs), `"name":"new_answer"`) || strings.Contains(string(msgs), "Your own current answer is the one labelled")
		tool, args := "", ""
		switch {
		case len(body.Tools) == 0:
		case !answered || !canVote:
			b, _ := json.Marshal(map[string]string{"content": answer})
			tool, args = "new_answer", string(b)
		default:
			tool, args = "vote", `{"agent_id":"agent1","reason":"it is right"}`
		}
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) {
			b, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
			fmt.Fprintf(w, "data: %s\n\n", b)
		}
		if tool != "" {
			chunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_1", "type": "function",
				"function": map[string]any{"name": tool, "arguments": args}}}}, "tool_calls")
		} else {
			chunk(map[string]any{"role": "assistant", "content": answer}, "stop")
		}
		// The usage chunk, as the API sends it when stream_options.include_usage is set.
		u, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
		fmt.Fprintf(w, "data: %s\n\n", u)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(m.Close)
	return m
}

// A session whose agent names a base_url of its own gets nothing from a worker that was not
// told to trust it: no request reaches the server, and the worker's key appears nowhere. The
// same session runs once the worker's operator allows that URL.
func TestSession_WorkerSendsItsKeyOnlyWhereAllowed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := devServer(t)
	const key = "sk-worker-0123456789-secret-abcdef"
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return key
		}
		return ""
	}
	model := newRecordingModel(t, "Paris is the capital.")
	base := model.URL + "/v1"
	cfg := loadTeam(t, fmt.Sprintf(`
agents:
  - id: collector
    backend: {type: chatcompletion, model: m, base_url: %q}
orchestrator:
  final_answer_strategy: winner_reuse
`, base))

	for _, tc := range []struct {
		name  string
		allow []string
		ok    bool
	}{
		{"refused", nil, false},
		{"allowed", []string{base}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := durable.Target{Address: addr, Queue: "endpoint-" + tc.name, Heartbeat: 5 * time.Second}
			c, err := Dial(context.Background(), target)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			allow, err := durable.NewAllowlist(tc.allow)
			if err != nil {
				t.Fatal(err)
			}
			w := worker.New(c, target.Queue, worker.Options{})
			Register(w, &Activities{Getenv: getenv, Allow: allow})
			if err := w.Start(); err != nil {
				t.Fatal(err)
			}
			defer w.Stop()

			before := model.requests.Load()
			var wid string
			remote := func(ctx context.Context, cfg *config.Config, o engine.Options) engine.Result {
				wid = sessionWorkflowID(o)
				return Run(ctx, c, target, cfg, o)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := app.Run(ctx, cfg, app.Options{Question: "What is the capital of France?", Logging: true, LogRoot: t.TempDir(), Remote: remote})
			if err != nil {
				t.Fatal(err)
			}
			got := model.requests.Load() - before

			if !tc.ok {
				if res.ExitCode != 2 || res.Err == nil {
					t.Fatalf("exit %d, err %v: want the session refused (exit 2)", res.ExitCode, res.Err)
				}
				for _, want := range []string{"agent collector", base, "--allow-base-url"} {
					if !strings.Contains(res.Err.Error(), want) {
						t.Errorf("the error %q does not name %q", res.Err, want)
					}
				}
				if got != 0 {
					t.Errorf("the server got %d requests from a worker that refused it", got)
				}
			} else {
				if res.ExitCode != 0 || !strings.Contains(res.FinalAnswer, "Paris") {
					t.Fatalf("exit %d, answer %q, err %v: want the allowed session to run", res.ExitCode, res.FinalAnswer, res.Err)
				}
				if !res.CostUnknown {
					t.Errorf("the result says the cost of model m, which has no price, is known: $%v for %+v", res.CostUSD, res.Usage)
				}
				if got == 0 || model.keys.Load() != "Bearer "+key {
					t.Errorf("%d requests, last with %q: want the worker's key at the allowed URL", got, model.keys.Load())
				}
			}

			// The worker's key is in no error, log file or workflow history.
			where := map[string]string{}
			if res.Err != nil {
				where["the error"] = res.Err.Error()
			}
			for _, f := range []string{"events.jsonl", "massgen.log", "status.json", "metadata.json"} {
				b, err := os.ReadFile(filepath.Join(res.Dir, f))
				if err != nil {
					t.Fatal(err)
				}
				where[f] = string(b)
			}
			h, err := protojson.Marshal(history(t, c, wid))
			if err != nil {
				t.Fatal(err)
			}
			where["the workflow history"] = string(h)
			for name, text := range where {
				if strings.Contains(text, key) || strings.Contains(text, key[3:20]) {
					t.Errorf("the worker's key is in %s", name)
				}
			}
		})
	}
}

// TestSession_ParaphraseWriterSendsItsKeyOnlyWhereAllowed: a session config (anyone who can
// start workflows writes it) points orchestrator.dspy.backend at a server of its own; the
// worker does not send its key there unless --allow-base-url names it: the step falls back
// to the original question, says why, and the session goes on.
func TestSession_ParaphraseWriterSendsItsKeyOnlyWhereAllowed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	const key = "sk-worker-0123456789-secret-abcdef"
	getenv := func(k string) string {
		if k == "OPENAI_API_KEY" {
			return key
		}
		return ""
	}
	model := newRecordingModel(t, "1. What city is the capital of France?")
	target := durable.Target{Address: devServer(t), Queue: "dspy-endpoint"}
	c := dialTarget(t, target)
	workerWith(t, c, target, &Activities{Getenv: getenv})
	cfg := loadTeam(t, fmt.Sprintf(`
agents:
  - id: a
    backend: {type: scripted, answers: ["Paris."]}
orchestrator:
  dspy: {enabled: true, num_variants: 1, cache_enabled: false, backend: {type: chatcompletion, model: m, base_url: %q}}
`, model.URL+"/v1"))
	res := runLogged(t, cfg, t.TempDir(), remoteOn(c, target))
	if res.ExitCode != 0 {
		t.Fatalf("result %+v", res.Result)
	}
	if n := model.requests.Load(); n != 0 {
		t.Errorf("the config's server got %d requests (last with %q) from a worker that does not allow it", n, model.keys.Load())
	}
	var warned bool
	for _, e := range readLog(t, res.Dir) {
		if p, ok := e.Payload.(event.QuestionParaphrased); ok {
			warned = strings.Contains(p.Warning, "--allow-base-url") && len(p.Variants) == 1 && p.Variants[0].Fallback
		}
	}
	if !warned {
		t.Error("the log does not say the paraphrase writer was refused, or a variant was used")
	}
}
