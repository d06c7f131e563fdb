package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
	"massgen/internal/usage"
	"massgen/internal/view"
)

var (
	uploadPNG = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	uploadPDF = []byte("%PDF-1.4\nHumanity's Last Exam: 26.6% for deep research.\n%%EOF\n")
)

// fileSearchTeam is MassGen's single_gpt5nano_file_search.yaml pointed at local fakes: the
// document's URL at docs, the OpenAI API at api.
const fileSearchTeam = `agent:
  id: "file-search_agent"
  backend:
    type: "openai"
    model: "gpt-5-nano"
    base_url: "%s/v1"
    upload_files:
      - file_path: "%s/API/docs/deep_research_blog.pdf"
  system_message: |
    You are a helpful research assistant
ui:
  display_type: "rich_terminal"
  logging_enabled: true
`

// openaiWithFiles is one fake OpenAI: Files and Vector Stores (providertest.OpenAIFiles) and
// the Responses API, whose model runs one file search in every response. hang makes each
// response wait for the caller to go away instead.
type openaiWithFiles struct {
	*fakeServer
	files   *providertest.OpenAIFiles
	mu      sync.Mutex
	tools   [][]any // the tools of each Responses request
	inputs  [][]any // and its input
	started chan struct{}
	once    sync.Once
}

func newOpenAIWithFiles(t *testing.T, answer string, hang bool) *openaiWithFiles {
	f := &openaiWithFiles{files: providertest.NewOpenAIFiles(keys["OPENAI_API_KEY"]), started: make(chan struct{})}
	f.files.PendingPolls = 1
	play := openaiResponses(answer)
	f.fakeServer = newFake(t, func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if hang && r.URL.Path == "/v1/responses" {
			f.once.Do(func() { close(f.started) })
			// Until the session gives up on the call: the server notices only once the body is read.
			_, _ = io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(time.Minute):
				t.Error("the call was never given up")
			}
			return true
		}
		return f.files.Serve(w, r)
	},
		func(w http.ResponseWriter, body map[string]any) bool {
			f.mu.Lock()
			f.tools = append(f.tools, list(body["tools"]))
			f.inputs = append(f.inputs, list(body["input"]))
			f.mu.Unlock()
			sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 9, "item": map[string]any{
				"id": fmt.Sprintf("fs_%d", len(f.tools)), "type": "file_search_call", "status": "completed", "queries": []any{"HLE score"}, "results": nil}})
			return play(w, body)
		})
	return f
}

// docServer serves the document the config names by URL.
func docServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/API/docs/deep_research_blog.pdf" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(uploadPDF)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func parseTeam(t *testing.T, name, yaml string) *config.Config {
	t.Helper()
	cfg, rep := config.Parse(name, []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg
}

func uploadEvents(t *testing.T, dir string) (ready, deleted []string) {
	t.Helper()
	evs, err := event.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if p, ok := e.Payload.(event.ToolServerStatus); ok && p.Server == event.ServerUploads {
			switch p.Status {
			case "ready":
				ready = append(ready, p.Detail)
			case "deleted":
				deleted = append(deleted, p.Detail)
			default:
				t.Errorf("uploads status %q: %s", p.Status, p.Detail)
			}
		}
	}
	return ready, deleted
}

// MassGen's file search example runs to a final answer: the document, downloaded from its
// URL, goes into a vector store made for the session, every request offers file_search on
// it, the searches are billed, and the store and the file are deleted at the end, as the log
// says.
func TestE2E_FileSearchExample(t *testing.T) {
	api := newOpenAIWithFiles(t, "Deep research scored 26.6% on Humanity's Last Exam.", false)
	cfg := parseTeam(t, "single_gpt5nano_file_search.yaml", fmt.Sprintf(fileSearchTeam, api.URL, docServer(t)))
	root := t.TempDir()
	res, out := runTeam(t, team{cfg: cfg}, root)
	if res.ExitCode != 0 || !strings.Contains(res.FinalAnswer, "26.6%") {
		t.Fatalf("result %+v\n%s", res.Result, out)
	}
	if len(api.tools) == 0 {
		t.Fatal("no Responses request")
	}
	var store string
	for i, tools := range api.tools {
		var found bool
		for _, tl := range tools {
			if obj(tl)["type"] == "file_search" {
				ids := list(obj(tl)["vector_store_ids"])
				if len(ids) != 1 || (store != "" && ids[0] != store) {
					t.Errorf("request %d: file_search on %v", i, ids)
				}
				store, found = fmt.Sprint(ids[0]), true
			}
		}
		if !found {
			t.Errorf("request %d offers no file_search: %v", i, tools)
		}
	}
	if len(api.files.Files()) != 0 || len(api.files.Stores()) != 0 {
		t.Errorf("left on OpenAI: files %v, stores %v", api.files.Files(), api.files.Stores())
	}
	if d := api.files.Deleted(); len(d) != 2 || d[0] != store || !strings.HasPrefix(d[1], "file-") {
		t.Errorf("deleted %v, want the store %s then the file", d, store)
	}
	ready, deleted := uploadEvents(t, res.Dir)
	if len(ready) != 1 || !strings.Contains(ready[0], "1 document in vector store "+store) || !strings.Contains(ready[0], "deep_research_blog.pdf") ||
		len(deleted) != 1 || !strings.Contains(deleted[0], "vector store "+store+" and 1 uploaded file") {
		t.Errorf("events: ready %q, deleted %q", ready, deleted)
	}
	log, err := os.ReadFile(filepath.Join(res.Dir, "massgen.log"))
	if err != nil || !strings.Contains(string(log), "uploads: deleted: file-search_agent: vector store "+store) {
		t.Errorf("massgen.log does not say the store was deleted (%v):\n%s", err, log)
	}
	// Each response ran one file search, billed beside the tokens.
	n := int64(len(api.tools))
	want := usage.Cost("openai", "gpt-5-nano", provider.Usage{InputTokens: n * usageIn, OutputTokens: n * usageOut, FileSearches: n})
	var status struct {
		Usage struct {
			Cost float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
	if !near(status.Usage.Cost, want) || want <= usage.Cost("openai", "gpt-5-nano", provider.Usage{InputTokens: n * usageIn, OutputTokens: n * usageOut}) {
		t.Errorf("cost %v, want %v with %d file searches", status.Usage.Cost, want, n)
	}
	if strings.Contains(out+string(log), keys["OPENAI_API_KEY"]) {
		t.Error("the key reached the output")
	}
}

// A session interrupted mid-call (Ctrl-C) still deletes the vector store and the files.
func TestE2E_FileSearchCleanedUpWhenCancelled(t *testing.T) {
	api := newOpenAIWithFiles(t, "", true)
	cfg := parseTeam(t, "fs.yaml", fmt.Sprintf(fileSearchTeam, api.URL, docServer(t)))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-api.started:
			cancel()
		case <-ctx.Done():
		}
	}()
	var out bytes.Buffer
	res, err := Run(ctx, cfg, Options{Question: "What is the HLE score?", Logging: true, LogRoot: t.TempDir(),
		Getenv: func(k string) string { return keys[k] }, Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != ExitInterrupted {
		t.Errorf("exit %d, want %d\n%s", res.ExitCode, ExitInterrupted, out.String())
	}
	if len(api.files.Files()) != 0 || len(api.files.Stores()) != 0 || len(api.files.Deleted()) != 2 {
		t.Errorf("left on OpenAI: files %v, stores %v (deleted %v)", api.files.Files(), api.files.Stores(), api.files.Deleted())
	}
	if _, deleted := uploadEvents(t, res.Dir); len(deleted) != 1 {
		t.Errorf("deleted events %q\n%s", deleted, out.String())
	}
}

// An upload that fails stops the run before any model call, and what it made is deleted.
func TestE2E_FileSearchUploadFails(t *testing.T) {
	api := newOpenAIWithFiles(t, "x", false)
	api.files.Failed = 1
	cfg := parseTeam(t, "fs.yaml", fmt.Sprintf(fileSearchTeam, api.URL, docServer(t)))
	_, err := Run(t.Context(), cfg, Options{Question: "Q?", Getenv: func(k string) string { return keys[k] }})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != ExitExecution || !strings.Contains(err.Error(), "could not be indexed") {
		t.Fatalf("err = %v", err)
	}
	if len(api.tools) != 0 || len(api.files.Files()) != 0 || len(api.files.Stores()) != 0 {
		t.Errorf("model calls %d; left: files %v, stores %v", len(api.tools), api.files.Files(), api.files.Stores())
	}
}

// MassGen's gpt5nano_image_understanding.yaml (two agents, one image each): the image goes
// inline with every call, before the task. A file swapped for a link out of the allowed
// folders after validation is refused when the run starts.
func TestE2E_ImageUnderstanding(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "multimodality.jpg")
	if err := os.WriteFile(img, uploadPNG, 0o644); err != nil { // a PNG named .jpg: sniffed
		t.Fatal(err)
	}
	var mu sync.Mutex
	var firstParts [][]any
	srv := newFake(t, nil, func(w http.ResponseWriter, body map[string]any) bool {
		mu.Lock()
		firstParts = append(firstParts, list(obj(list(body["input"])[0])["content"]))
		mu.Unlock()
		return openaiResponses("The image shows a diagram of modalities.")(w, body)
	})
	yaml := fmt.Sprintf(`agents:
  - id: "response_agent1"
    backend: {type: "openai", model: "gpt-5-nano", base_url: "%[1]s/v1", upload_files: [{image_path: "multimodality.jpg"}]}
    system_message: "You are a helpful assistant"
  - id: "response_agent2"
    backend: {type: "openai", model: "gpt-5-nano", base_url: "%[1]s/v1", upload_files: [{image_path: "multimodality.jpg"}]}
    system_message: "You are a helpful assistant"
`, srv.URL)
	cfg := parseTeam(t, filepath.Join(dir, "gpt5nano_image_understanding.yaml"), yaml)
	res, out := runTeam(t, team{cfg: cfg}, t.TempDir())
	if res.ExitCode != 0 {
		t.Fatalf("result %+v\n%s", res.Result, out)
	}
	for i, parts := range firstParts {
		if len(parts) != 2 || obj(parts[0])["type"] != "input_image" || !strings.HasPrefix(fmt.Sprint(obj(parts[0])["image_url"]), "data:image/png;base64,") ||
			obj(parts[1])["type"] != "input_text" {
			t.Errorf("request %d: first message %v", i, parts)
		}
	}
	if ready, _ := uploadEvents(t, res.Dir); len(ready) != 2 || !strings.Contains(ready[0], "1 file sent with the task (image multimodality.jpg") {
		t.Errorf("ready events %q", ready)
	}

	outside := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(outside, uploadPNG, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(img); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, img); err != nil {
		t.Skip(err)
	}
	before := srv.requests.Load()
	_, err := Run(t.Context(), cfg, Options{Question: "Q?", Getenv: func(k string) string { return keys[k] }})
	var ae *Error
	if !errors.As(err, &ae) || ae.Code != ExitConfig || !strings.Contains(err.Error(), "outside the folders upload_files may read") ||
		!strings.Contains(err.Error(), "agent response_agent1") {
		t.Fatalf("err = %v", err)
	}
	if srv.requests.Load() != before {
		t.Error("a model was called")
	}
}

// A backend that cannot take a kind of file is refused when its files are read (the validator
// refuses it earlier by key; this is the check on the bytes).
func TestLoadUploads_RefusedByBackend(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pic.bmp"), append([]byte("BM"), make([]byte, 64)...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"openai", "claude", "gemini"} {
		cfg := parseTeam(t, filepath.Join(dir, "c.yaml"), "agents:\n  - id: a\n    backend: {type: "+typ+", model: m, upload_files: [{image_path: pic.bmp}]}\n")
		_, err := loadUploads(t.Context(), cfg, localRoots(cfg))
		if err == nil || !strings.Contains(err.Error(), "pic.bmp") || !strings.Contains(err.Error(), "convert it") {
			t.Errorf("%s: err = %v", typ, err)
		}
	}
	cfg := parseTeam(t, filepath.Join(dir, "c.yaml"), "agents:\n  - id: a\n    backend: {type: groq, model: m, upload_files: [{image_path: pic.bmp}]}\n")
	if files, err := loadUploads(t.Context(), cfg, localRoots(cfg)); err != nil || !slices.ContainsFunc(files[0], func(a provider.Attachment) bool { return a.MIME == "image/bmp" }) {
		t.Errorf("groq: %v %v", files, err)
	}
}

// MassGen's single_openrouter_audio_understanding.yaml, pointed at local fakes: the recording
// is downloaded from its URL and sent as an input_audio part with every call.
func TestE2E_AudioUnderstandingOnChatCompletions(t *testing.T) {
	wav := append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 64)...)
	audio := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "audio/wav")
		_, _ = w.Write(wav)
	}))
	defer audio.Close()
	var mu sync.Mutex
	var parts [][]any
	srv := newFake(t, nil, func(w http.ResponseWriter, body map[string]any) bool {
		for _, m := range list(body["messages"]) {
			if obj(m)["role"] == "user" {
				mu.Lock()
				parts = append(parts, list(obj(m)["content"]))
				mu.Unlock()
				break
			}
		}
		return chatCompletions("A voice reads a short sentence.")(w, body)
	})
	cfg := parseTeam(t, "single_openrouter_audio_understanding.yaml", fmt.Sprintf(`agent:
  id: "audio_agent"
  backend:
    type: "chatcompletion"
    base_url: "%s/v1"
    model: "google/gemini-2.5-flash"
    upload_files:
      - audio_path: "%s/API/docs/audio/alloy.wav"
  system_message: "You are a helpful assistant"
`, srv.URL, audio.URL))
	res, out := runTeam(t, team{cfg: cfg}, t.TempDir())
	if res.ExitCode != 0 || len(parts) == 0 {
		t.Fatalf("result %+v\n%s", res.Result, out)
	}
	for i, p := range parts {
		a := obj(obj(p[0])["input_audio"])
		if len(p) != 2 || obj(p[0])["type"] != "input_audio" || a["format"] != "wav" || a["data"] != base64.StdEncoding.EncodeToString(wav) {
			t.Errorf("request %d: first user message %v", i, p)
		}
	}
}
