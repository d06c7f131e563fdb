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
	"sync"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/durable"
	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/provider/providertest"
)

const uploadsKey = "sk-worker-uploads-0123456789"

// filesModel is a fake OpenAI: Files and Vector Stores (providertest.OpenAIFiles) and a
// Responses API that plays one coordinating agent (it answers, votes for agent1, then writes
// the final text when offered no tools), recording what each request carried and which
// files the vector stores held when it came.
type filesModel struct {
	*httptest.Server
	files *providertest.OpenAIFiles
	mu    sync.Mutex
	calls []filesCall
}

type filesCall struct {
	tools, input string
	stored       map[string]providertest.FakeFile
}

func newFilesModel(t *testing.T, answer string) *filesModel {
	t.Helper()
	m := &filesModel{files: providertest.NewOpenAIFiles(uploadsKey)}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.files.Serve(w, r) {
			return
		}
		if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+uploadsKey {
			http.Error(w, "unexpected request", http.StatusNotFound)
			return
		}
		var body struct {
			Tools []json.RawMessage `json:"tools"`
			Input []json.RawMessage `json:"input"`
		}
		raw, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err == nil {
			err = json.Unmarshal(raw, &body)
		}
		if err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		tools, _ := json.Marshal(body.Tools)
		input, _ := json.Marshal(body.Input)
		m.mu.Lock()
		m.calls = append(m.calls, filesCall{tools: string(tools), input: string(input), stored: m.files.Files()})
		m.mu.Unlock()
		canVote := strings.Contains(string(tools), `"name":"vote"`)
		answered := strings.Contains(string(input), `"name":"new_answer"`) || strings.Contains(string(input), "Your own current answer is the one labelled")
		var item map[string]any
		switch {
		case !strings.Contains(string(tools), `"type":"function"`):
		case !answered || !canVote:
			b, _ := json.Marshal(map[string]string{"content": answer})
			item = map[string]any{"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "new_answer", "arguments": string(b)}
		default:
			item = map[string]any{"id": "fc_1", "type": "function_call", "status": "completed", "call_id": "call_1", "name": "vote",
				"arguments": `{"agent_id":"agent1","reason":"it cites the document"}`}
		}
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(typ string, data map[string]any) {
			data["type"] = typ
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
		}
		send("response.created", map[string]any{"response": map[string]any{"id": "resp_1", "status": "in_progress", "output": []any{}}})
		var output []any
		if item != nil {
			send("response.output_item.added", map[string]any{"output_index": 0, "item": item})
			send("response.output_item.done", map[string]any{"output_index": 0, "item": item})
			output = append(output, item)
		} else {
			send("response.output_text.delta", map[string]any{"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": answer})
		}
		send("response.completed", map[string]any{"response": map[string]any{"id": "resp_1", "status": "completed", "output": output,
			"usage": map[string]any{"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
				"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 110}}})
	}))
	t.Cleanup(m.Close)
	return m
}

// uploadsTeam writes a config whose OpenAI agent sends a PDF (into a vector store) and an
// image (inline) from the config's folder, by relative paths, and loads it.
func uploadsTeam(t *testing.T, base string) (cfg *config.Config, pdf []byte) {
	t.Helper()
	dir := t.TempDir()
	pdf = []byte("%PDF-1.4\nHumanity's Last Exam: 26.6% for deep research.\n%%EOF\n")
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	for name, data := range map[string][]byte{"blog.pdf": pdf, "chart.png": png} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(dir, "team.yaml")
	yaml := fmt.Sprintf(`
agents:
  - id: reader
    backend:
      type: openai
      model: gpt-5-nano
      base_url: %q
      upload_files:
        - file_path: blog.pdf
        - image_path: chart.png
orchestrator: {final_answer_strategy: winner_reuse}
`, base)
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, rep := config.Load(conf)
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg, pdf
}

// TestSession_UploadsOnTheWorker: a session whose OpenAI agent sends local files runs on the
// worker that holds it, which trusts its sessions: the worker reads the files, uploads the
// document into a vector store made for the session, every model call carries the store and
// the image, and the store and its file are deleted when the session ends, as the caller's log
// says.
func TestSession_UploadsOnTheWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := devServer(t)
	model := newFilesModel(t, "Deep research scored 26.6% on Humanity's Last Exam.")
	base := model.URL + "/v1"
	cfg, pdf := uploadsTeam(t, base)

	target := durable.Target{Address: addr, Queue: "uploads-test", Heartbeat: 5 * time.Second, Store: t.TempDir()}
	c := dialTarget(t, target)
	allow, err := durable.NewAllowlist([]string{base})
	if err != nil {
		t.Fatal(err)
	}
	workerWith(t, c, target, &Activities{Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return uploadsKey
		}
		return ""
	}, Allow: allow, TrustSessions: true, WorkspaceRoot: t.TempDir(), Store: durable.FolderStore{Dir: target.Store}})

	res, _ := runRemote(t, c, target, cfg, nil, nil)
	if res.Winner != "reader" || !strings.Contains(res.FinalAnswer, "26.6%") {
		t.Fatalf("result %+v", res.Result)
	}

	model.mu.Lock()
	calls := model.calls
	model.mu.Unlock()
	if len(calls) == 0 {
		t.Fatal("no model call")
	}
	var store string
	for i, call := range calls {
		if len(call.stored) != 1 {
			t.Fatalf("call %d: the vector store holds %d files", i, len(call.stored))
		}
		for _, f := range call.stored {
			if f.Name != "blog.pdf" || string(f.Data) != string(pdf) {
				t.Errorf("call %d: the store holds %s: %q", i, f.Name, f.Data)
			}
		}
		var tools []struct {
			Type   string   `json:"type"`
			Stores []string `json:"vector_store_ids"`
		}
		_ = json.Unmarshal([]byte(call.tools), &tools)
		searches := 0
		for _, tl := range tools {
			if tl.Type == "file_search" {
				searches++
				if store == "" && len(tl.Stores) == 1 {
					store = tl.Stores[0]
				}
				if len(tl.Stores) != 1 || tl.Stores[0] != store {
					searches = -1
				}
			}
		}
		if searches != 1 || store == "" {
			t.Errorf("call %d offers no file_search on the session's store %q: %s", i, store, call.tools)
		}
		if !strings.Contains(call.input, `"type":"input_image"`) {
			t.Errorf("call %d carries no image: %.400s", i, call.input)
		}
	}
	if len(model.files.Files()) != 0 || len(model.files.Stores()) != 0 {
		t.Errorf("left on OpenAI: files %v, stores %v", model.files.Files(), model.files.Stores())
	}
	if d := model.files.Deleted(); len(d) != 2 || d[0] != store || !strings.HasPrefix(d[1], "file-") {
		t.Errorf("deleted %v, want the store %s then the file", d, store)
	}

	var ready, deleted []string
	for _, e := range readLog(t, res.Dir) {
		if p, ok := e.Payload.(event.ToolServerStatus); ok && p.Server == event.ServerUploads {
			switch p.Status {
			case "ready":
				ready = append(ready, p.Detail)
			case "deleted":
				deleted = append(deleted, p.Detail)
			default:
				t.Errorf("uploads %s: %s", p.Status, p.Detail)
			}
		}
	}
	if len(ready) != 1 || !strings.Contains(ready[0], "image chart.png") || !strings.Contains(ready[0], "vector store "+store) {
		t.Errorf("ready %q", ready)
	}
	if len(deleted) != 1 || deleted[0] != "reader: vector store "+store+" and 1 uploaded file" {
		t.Errorf("deleted %q", deleted)
	}
}

// A worker that does not trust its sessions sends none of its files: a session naming a local
// file fails (exit 2) naming the file and --trust-sessions, before anything reaches OpenAI; one
// whose files are URLs needs no trust.
func TestSession_UploadsNeedTrust(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	addr := devServer(t)
	model := newFilesModel(t, "Paris.")
	base := model.URL + "/v1"
	target := durable.Target{Address: addr, Queue: "uploads-untrusted", Heartbeat: 5 * time.Second, Store: t.TempDir()}
	c := dialTarget(t, target)
	allow, err := durable.NewAllowlist([]string{base})
	if err != nil {
		t.Fatal(err)
	}
	workerWith(t, c, target, &Activities{Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" {
			return uploadsKey
		}
		return ""
	}, Allow: allow, WorkspaceRoot: t.TempDir(), Store: durable.FolderStore{Dir: target.Store}})

	cfg, _ := uploadsTeam(t, base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res := Run(ctx, c, target, cfg, engine.Options{Question: "q", Bus: event.NewBus(nil)})
	if res.ExitCode != 2 || res.Err == nil || !strings.Contains(res.Err.Error(), "sends the local file") ||
		!strings.Contains(res.Err.Error(), "blog.pdf") || !strings.Contains(res.Err.Error(), "--trust-sessions") {
		t.Errorf("exit %d, err %v: want exit 2 naming the file and --trust-sessions", res.ExitCode, res.Err)
	}
	model.mu.Lock()
	n := len(model.calls)
	model.mu.Unlock()
	if n += len(model.files.Files()) + len(model.files.Deleted()); n != 0 {
		t.Errorf("%d requests reached OpenAI", n)
	}

	// The same agent with a document by URL runs on the same worker.
	doc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write([]byte("%PDF-1.4\nParis.\n%%EOF\n"))
	}))
	defer doc.Close()
	cfg = loadTeam(t, fmt.Sprintf(`
agents:
  - id: reader
    backend: {type: openai, model: gpt-5-nano, base_url: %q, upload_files: [{file_path: "%s/doc.pdf"}]}
orchestrator: {final_answer_strategy: winner_reuse}
`, base, doc.URL))
	res2, _ := runRemote(t, c, target, cfg, nil, nil)
	if !strings.Contains(res2.FinalAnswer, "Paris.") || len(model.files.Stores()) != 0 || len(model.files.Deleted()) != 2 {
		t.Errorf("URL session: %+v; stores left %v, deleted %v", res2.Result, model.files.Stores(), model.files.Deleted())
	}
}
