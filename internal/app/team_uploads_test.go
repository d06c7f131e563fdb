package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider/providertest"
)

// receivedTeam is a session as a worker receives it (durable's wire document): one OpenAI
// agent whose local files are named by absolute path.
func receivedTeam(t *testing.T, api string, files ...string) *config.Config {
	t.Helper()
	var ups []string
	for _, f := range files {
		kind := "file_path"
		if strings.HasSuffix(f, ".png") {
			kind = "image_path"
		}
		ups = append(ups, fmt.Sprintf("{%s: %q}", kind, f))
	}
	cfg, rep := config.ParseReceived("session.json", []byte(fmt.Sprintf(`agents:
  - id: reader
    backend: {type: openai, model: gpt-5-nano, base_url: "%s/v1", upload_files: [%s]}
`, api, strings.Join(ups, ", "))))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	return cfg
}

// A team built on a worker reads the files the session names on its machine (here outside
// the folder it runs in, which a local session could not read), puts the document in a vector
// store, sends the image and the store with every call, and deletes the store when it is
// closed; what the uploads report is in its preamble, and the deletion in its reports.
func TestBuildTeam_Uploads(t *testing.T) {
	api := newOpenAIWithFiles(t, "26.6%.", false)
	dir := t.TempDir()
	doc, img := filepath.Join(dir, "blog.pdf"), filepath.Join(dir, "pic.png")
	for p, data := range map[string][]byte{doc: uploadPDF, img: uploadPNG} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := receivedTeam(t, api.URL, doc, img)
	if !NeedsMachine(cfg) {
		t.Error("a session with upload_files is not held by one worker")
	}
	team, err := BuildTeam(t.Context(), cfg, TeamOptions{Getenv: func(k string) string { return keys[k] }, WorkspaceRoot: t.TempDir(), RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer team.Close()
	stores := api.files.Stores()
	if len(stores) != 1 || len(api.files.Files()) != 1 {
		t.Fatalf("stores %v, files %v", stores, api.files.Files())
	}
	var store string
	for id := range stores {
		store = id
	}
	for _, f := range api.files.Files() {
		if f.Name != "blog.pdf" || string(f.Data) != string(uploadPDF) {
			t.Errorf("uploaded %s: %q", f.Name, f.Data)
		}
	}
	var ready []string
	for _, p := range team.Preamble {
		if s, ok := p.(event.ToolServerStatus); ok && s.Server == event.ServerUploads {
			ready = append(ready, s.Status+": "+s.Detail)
		}
	}
	if len(ready) != 1 || !strings.Contains(ready[0], "ready: reader: 1 file sent with the task (image pic.png") ||
		!strings.Contains(ready[0], "1 document in vector store "+store) {
		t.Errorf("preamble %q", ready)
	}

	if r := providertest.Collect(t.Context(), team.Agents[0].Provider, providertest.Request()); r.Err != nil {
		t.Fatal(r.Err)
	}
	if len(api.tools) != 1 {
		t.Fatalf("%d Responses requests", len(api.tools))
	}
	tools, _ := json.Marshal(api.tools[0])
	input, _ := json.Marshal(api.inputs[0])
	if !strings.Contains(string(tools), `"vector_store_ids":["`+store+`"]`) || !strings.Contains(string(input), `"type":"input_image"`) {
		t.Errorf("the call lacks the files: tools %s\ninput %.300s", tools, input)
	}

	if err := team.Close(); err != nil {
		t.Fatal(err)
	}
	if len(api.files.Stores()) != 0 || len(api.files.Files()) != 0 {
		t.Errorf("left on OpenAI: stores %v, files %v", api.files.Stores(), api.files.Files())
	}
	var deleted []string
	for _, p := range team.Reports() {
		if s, ok := p.(event.ToolServerStatus); ok && s.Server == event.ServerUploads {
			deleted = append(deleted, s.Status+": "+s.Detail)
		}
	}
	if len(deleted) != 1 || deleted[0] != "deleted: reader: vector store "+store+" and 1 uploaded file" {
		t.Errorf("reports after Close %q", deleted)
	}
	if len(team.Reports()) != 0 {
		t.Error("Reports gave the same reports twice")
	}
}

// A named file is read wherever it is, but never one that commonly holds secrets; a file
// gone since the session started is refused by name. Nothing reaches OpenAI.
func TestBuildTeam_UploadsRefused(t *testing.T) {
	api := newOpenAIWithFiles(t, "x", false)
	dir := t.TempDir()
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("OPENAI_API_KEY=sk-x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{env, "commonly hold secrets"},
		{filepath.Join(dir, "gone.pdf"), "gone.pdf does not exist"},
	} {
		_, err := BuildTeam(t.Context(), receivedTeam(t, api.URL, tc.file), TeamOptions{Getenv: func(k string) string { return keys[k] },
			WorkspaceRoot: t.TempDir(), RunID: "r"})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "agent reader") {
			t.Errorf("%s: err = %v, want it to say %q", tc.file, err, tc.want)
		}
	}
	if api.requests.Load() != 0 {
		t.Errorf("%d requests reached OpenAI", api.requests.Load())
	}
}
