package openai

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/provider"
	"massgen/internal/provider/providertest"
)

// filesServer serves the fake Files and Vector Stores endpoints.
func filesServer(t *testing.T, f *providertest.OpenAIFiles) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.Serve(w, r) {
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

var docs = []provider.Attachment{
	{Kind: provider.AttachDocument, MIME: "application/pdf", Name: "report.pdf", Data: []byte("%PDF-1.4 report")},
	{Kind: provider.AttachDocument, MIME: "text/plain", Name: "notes.md", Data: []byte("# Notes")},
}

// The documents go up through the Files API, into a vector store of their own as one batch
// polled until indexed; Delete removes the store and the files, and a second Delete has
// nothing left to do.
func TestFileSearch_UploadIndexDelete(t *testing.T) {
	fake := providertest.NewOpenAIFiles("sk-test")
	fake.PendingPolls = 2
	fs := NewFileSearch(provider.Options{APIKey: "sk-test", BaseURL: filesServer(t, fake)})
	store, err := fs.Upload(t.Context(), "massgen_file_search_a", docs)
	if err != nil {
		t.Fatal(err)
	}
	files := fake.Files()
	var ids []string
	for id, f := range files {
		ids = append(ids, id)
		want := docs[0]
		if f.Name == "notes.md" {
			want = docs[1]
		}
		if f.Purpose != "assistants" || string(f.Data) != string(want.Data) || f.ContentType != want.MIME {
			t.Errorf("uploaded %s: %+v", id, f)
		}
		if !slices.ContainsFunc(keysOf(f.Form), func(k string) bool { return strings.Contains(k, "seconds") }) {
			t.Errorf("no expiry on %s: %v", id, f.Form)
		}
	}
	s, ok := fake.Stores()[store]
	if len(files) != 2 || !ok || s.Name != "massgen_file_search_a" || len(s.FileIDs) != 2 || fake.Polls() != 3 {
		t.Fatalf("files %v, store %q %+v, %d polls", files, store, s, fake.Polls())
	}
	if exp, _ := s.Body["expires_after"].(map[string]any); exp["anchor"] != "last_active_at" || exp["days"] != float64(1) {
		t.Errorf("store expiry %v", s.Body["expires_after"])
	}
	gotStore, gotFiles := fs.Made()
	slices.Sort(ids)
	slices.Sort(gotFiles)
	if gotStore != store || !slices.Equal(gotFiles, ids) {
		t.Errorf("Made() = %q %v, want %q %v", gotStore, gotFiles, store, ids)
	}

	nStores, nFiles, err := fs.Delete(t.Context())
	if err != nil || nStores != 1 || nFiles != 2 {
		t.Fatalf("Delete = %d, %d, %v", nStores, nFiles, err)
	}
	if len(fake.Files()) != 0 || len(fake.Stores()) != 0 || fake.Deleted()[0] != store {
		t.Errorf("left: files %v, stores %v; deleted %v (the store first)", fake.Files(), fake.Stores(), fake.Deleted())
	}
	if nStores, nFiles, err := fs.Delete(t.Context()); err != nil || nStores+nFiles != 0 {
		t.Errorf("second Delete = %d, %d, %v", nStores, nFiles, err)
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Whatever Upload made before it failed or was cancelled is deleted by Delete.
func TestFileSearch_FailuresLeaveNothingBehind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		set    func(*providertest.OpenAIFiles)
		cancel bool
		want   string
	}{
		{"a document fails to index", func(f *providertest.OpenAIFiles) { f.Failed = 1 }, false, "1 of 2 documents could not be indexed"},
		{"cancelled while indexing", func(f *providertest.OpenAIFiles) { f.Hang = true }, true, "context canceled"},
		{"a rejected key", func(f *providertest.OpenAIFiles) { f.Key = "sk-other" }, false, "the API key was rejected: check OPENAI_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := providertest.NewOpenAIFiles("sk-test")
			tc.set(fake)
			fs := NewFileSearch(provider.Options{APIKey: "sk-test", KeyEnv: "OPENAI_API_KEY", BaseURL: filesServer(t, fake)})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tc.cancel {
				go func() {
					select {
					case <-fake.Started:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			_, err := fs.Upload(ctx, "s", docs)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sk-test") {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if _, _, err := fs.Delete(context.Background()); err != nil {
				t.Fatal(err)
			}
			if len(fake.Files()) != 0 || len(fake.Stores()) != 0 {
				t.Errorf("left behind: files %v, stores %v", fake.Files(), fake.Stores())
			}
		})
	}
}

// A deletion that fails is reported and kept for another try; something already gone counts
// as deleted.
func TestFileSearch_DeleteFailures(t *testing.T) {
	fake := providertest.NewOpenAIFiles("k")
	fs := NewFileSearch(provider.Options{APIKey: "k", BaseURL: filesServer(t, fake)})
	store, err := fs.Upload(t.Context(), "s", docs[:1])
	if err != nil {
		t.Fatal(err)
	}
	fake.DeleteStatus = http.StatusBadRequest
	if n, m, err := fs.Delete(t.Context()); err == nil || n+m != 0 || !strings.Contains(err.Error(), "delete vector store "+store) {
		t.Fatalf("Delete = %d, %d, %v", n, m, err)
	}
	if s, f := fs.Made(); s != store || len(f) != 1 {
		t.Fatalf("after a failed Delete: %q %v", s, f)
	}
	fake.DeleteStatus = 0
	for id := range fake.Files() { // gone behind its back
		fake.Serve(httptest.NewRecorder(), deleteRequest(t, "/v1/files/"+id, "k"))
	}
	if n, m, err := fs.Delete(t.Context()); err != nil || n != 1 || m != 1 {
		t.Fatalf("retry = %d, %d, %v", n, m, err)
	}
}

func deleteRequest(t *testing.T, path, key string) *http.Request {
	r := httptest.NewRequestWithContext(t.Context(), http.MethodDelete, path, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	return r
}

// The file_search tool names the session's vector store, after the other tools; a file
// search in the stream is shown as a hosted call and billed.
func TestToWire_FileSearchTool(t *testing.T) {
	req := providertest.Request()
	req.FileSearch = []string{"vs_1"}
	got := captureBody(t, provider.Options{WebSearch: true}, req)
	want := jsonValue(t, `[`+voteTool+`, {"type": "web_search"}, {"type": "file_search", "vector_store_ids": ["vs_1"]}]`)
	if d := cmp.Diff(want, got["tools"]); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}

	p := newProvider(t, provider.Options{APIKey: "k", BaseURL: "http://127.0.0.1:1/v1",
		Params: map[string]any{"tools": []any{map[string]any{"type": "file_search", "vector_store_ids": []any{"vs_mine"}}}}})
	r := providertest.Collect(t.Context(), p, req)
	if !provider.IsFatal(r.Err) || !strings.Contains(r.Err.Error(), "remove one of them") {
		t.Errorf("two file_search tools: err = %v", r.Err)
	}
}

func TestTranslator_FileSearch(t *testing.T) {
	events := `{"type":"response.output_item.done","output_index":0,"item":{"id":"fs_1","type":"file_search_call","status":"completed","queries":["HLE score of deep research"],"results":null}}
{"type":"response.output_item.done","output_index":1,"item":{"id":"fs_2","type":"file_search_call","status":"completed","queries":["a","b"],"results":[{"file_id":"file-1","filename":"report.pdf","score":0.9,"text":"26.6%"},{"file_id":"file-1","filename":"report.pdf","score":0.8,"text":"x"}]}}
{"type":"response.output_item.done","output_index":2,"item":{"id":"fs_3","type":"file_search_call","status":"failed","queries":["c"]}}
` + completed
	got, _, err := translate(t, events)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Chunk{
		hostedChunk("fs_1", provider.HostedFileSearch, `{"queries":["HLE score of deep research"]}`, "", false),
		hostedChunk("fs_2", provider.HostedFileSearch, `{"queries":["a","b"]}`, "2 results from report.pdf", false),
		hostedChunk("fs_3", provider.HostedFileSearch, `{"queries":["c"]}`, "", true),
		provider.UsageChunk{Usage: provider.Usage{InputTokens: 10, CachedInputTokens: 4, OutputTokens: 6, ReasoningTokens: 2, FileSearches: 2}},
		provider.Done{StopReason: "stop"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("chunks (-want +got):\n%s", d)
	}
	if !isHostedCall(provider.ToolCall{ID: "fs_1", Name: provider.HostedFileSearch}) {
		t.Error("a file search in the history would be sent back as a function call")
	}
}

// Images go before the task's text in the first user message; audio, video and documents
// sent inline are refused by name.
func TestToWire_Attachments(t *testing.T) {
	img := provider.Attachment{Kind: provider.AttachImage, MIME: "image/png", Name: "chart.png", Data: []byte("\x89PNG")}
	req := providertest.Request()
	req.Attachments = []provider.Attachment{img}
	got := captureBody(t, provider.Options{}, req)
	input, _ := got["input"].([]any)
	first, _ := input[0].(map[string]any)
	want := []any{
		map[string]any{"type": "input_image", "image_url": "data:image/png;base64,iVBORw==", "detail": "auto"},
		map[string]any{"type": "input_text", "text": req.Messages[0].Content},
	}
	if d := cmp.Diff(want, first["content"]); d != "" {
		t.Errorf("first message (-want +got):\n%s", d)
	}
	for _, tc := range []struct {
		a    provider.Attachment
		want string
	}{
		{provider.Attachment{Kind: provider.AttachAudio, MIME: "audio/wav", Name: "a.wav"}, "takes no audio input"},
		{provider.Attachment{Kind: provider.AttachVideo, MIME: "video/mp4", Name: "v.mp4"}, "takes no video"},
		{provider.Attachment{Kind: provider.AttachImage, MIME: "image/bmp", Name: "b.bmp"}, "convert it"},
		{docs[0], "through file search"},
		{provider.Attachment{Kind: provider.AttachImage, MIME: "image/png", Name: "big.png", Data: make([]byte, maxImageBytes+1)}, "over the 50.0 MB"},
	} {
		req.Attachments = []provider.Attachment{tc.a}
		p := newProvider(t, provider.Options{APIKey: "k", BaseURL: "http://127.0.0.1:1/v1"})
		r := providertest.Collect(t.Context(), p, req)
		var pe *provider.Error
		if !errors.As(r.Err, &pe) || !pe.Fatal || !strings.Contains(r.Err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a fatal error saying %q", tc.a.Name, r.Err, tc.want)
		}
	}
}
