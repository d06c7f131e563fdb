package app

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// mp4 sniffs as an MP4 video.
var mp4 = append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), make([]byte, 64)...)

// fakeOpenAIMedia is OpenAI's videos API (a job that is queued, then completed) and Chat
// Completions, recording the paths it was asked.
type fakeOpenAIMedia struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
	auth  []string
}

func newFakeOpenAIMedia(t *testing.T) *fakeOpenAIMedia {
	t.Helper()
	f := &fakeOpenAIMedia{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		f.mu.Lock()
		f.paths = append(f.paths, r.Method+" "+r.URL.Path)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch p := r.URL.Path; {
		case p == "/v1/videos":
			_, _ = io.WriteString(w, `{"id":"video_e2e","object":"video","model":"sora-2","status":"queued","progress":0,"created_at":1,"seconds":"4","size":"720x1280"}`)
		case p == "/v1/videos/video_e2e":
			_, _ = io.WriteString(w, `{"id":"video_e2e","object":"video","model":"sora-2","status":"completed","progress":100,"created_at":1,"completed_at":2,"seconds":"4","size":"720x1280"}`)
		case p == "/v1/videos/video_e2e/content":
			w.Header().Set("Content-Type", "video/mp4")
			_, _ = w.Write(mp4)
		case p == "/v1/chat/completions":
			_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"finish_reason":"stop",`+
				`"message":{"role":"assistant","content":"# Neon Alley\n\n- rain\n- light"}}],"usage":{"prompt_tokens":100,"completion_tokens":1000,"total_tokens":1100}}`)
		default:
			http.Error(w, `{"error":{"message":"unexpected path"}}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// massgenMediaGen is MassGen v0.1.12's text_to_video_generation and text_to_file_generation
// example configs, their agents scripted: the same switches and custom_tools entries (MassGen's
// tool files, run natively here), one video and one PDF.
const massgenMediaGen = `
agents:
  - id: director
    backend:
      type: scripted
      cwd: workspace1
      enable_video_generation: true
      custom_tools:
        - name: ["understand_video"]
          category: "multimodal"
          path: "massgen/tool/_multimodal_tools/understand_video.py"
          function: ["understand_video"]
        - name: ["text_to_video_generation"]
          category: "multimodal"
          path: "massgen/tool/_multimodal_tools/text_to_video_generation.py"
          function: ["text_to_video_generation"]
      tool_calls:
        - {name: custom_tool__text_to_video_generation, args: {prompt: "Neon-lit alley at night, light rain, slow push-in", seconds: 4}}
      answers: ["The video is in my workspace."]
      vote: agent1
  - id: writer
    backend:
      type: scripted
      cwd: workspace2
      enable_file_generation: true
      custom_tools:
        - name: ["text_to_file_generation"]
          category: "multimodal"
          path: "massgen/tool/_multimodal_tools/text_to_file_generation.py"
          function: ["text_to_file_generation"]
      tool_calls:
        - {name: custom_tool__text_to_file_generation, args: {prompt: "A one-page shot list for the alley scene", file_format: pdf, filename: shots}}
      answers: ["shots.pdf is in my workspace."]
      vote: agent1
orchestrator:
  final_presentation: verbatim
`

// TestE2E_MediaGeneration: the sessions of MassGen's video and file generation examples finish
// with a final answer, offline but for a local fake of OpenAI: the video is polled, downloaded
// and saved in the director's workspace (the winner's, copied to the log), the PDF in the
// writer's, and what they cost (0.40 for 4 s of sora-2, gpt-4o's tokens for the text) is the
// session's cost. No key reaches the log.
func TestE2E_MediaGeneration(t *testing.T) {
	cfg, rep := config.Parse("massgen_media.yaml", []byte(massgenMediaGen))
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	const key = "sk-e2e-mediagen-SECRET-0123456789abcdef"
	fake := newFakeOpenAIMedia(t)
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Generate a 4 seconds video of a neon-lit alley at night.", Logging: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)},
		Getenv: env(map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": fake.URL + "/v1"})})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "director" || res.FinalAnswer == "" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	got := toolResults(t, res.Dir)
	var video, file map[string]any
	if r := got["custom_tool__text_to_video_generation"]; r.IsError || json.Unmarshal([]byte(r.Content), &video) != nil || video["model"] != "sora-2" {
		t.Fatalf("text_to_video_generation: %+v", r)
	}
	if r := got["custom_tool__text_to_file_generation"]; r.IsError || json.Unmarshal([]byte(r.Content), &file) != nil || file["filename"] != "shots.pdf" {
		t.Fatalf("text_to_file_generation: %+v", r)
	}
	name, _ := video["filename"].(string)
	if b, err := os.ReadFile(filepath.Join(res.Dir, "final", "director", "workspace", name)); err != nil || !bytes.Equal(b, mp4) {
		t.Errorf("the video in the final workspace: %v", err)
	}
	wantCost := 0.40 + 100*2.5/1e6 + 1000*10.0/1e6
	if c := res.Cost(); !c.Known || c.USD < wantCost-1e-9 || c.USD > wantCost+1e-9 {
		t.Errorf("session cost %+v, want %v", c, wantCost)
	}
	fake.mu.Lock()
	var videoPaths []string
	other := 0
	for _, p := range fake.paths {
		if strings.Contains(p, "/videos") {
			videoPaths = append(videoPaths, p)
		} else if p == "POST /v1/chat/completions" {
			other++
		}
	}
	auth := fake.auth
	fake.mu.Unlock()
	// The agents run at once: the video's requests are in order among the text's.
	if strings.Join(videoPaths, ", ") != "POST /v1/videos, GET /v1/videos/video_e2e, GET /v1/videos/video_e2e/content" || other != 1 ||
		auth[0] != "Bearer "+key {
		t.Errorf("the fake was asked: %v and %d chat completions", videoPaths, other)
	}
	logs, _ := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if bytes.Contains(logs, []byte(key)) || strings.Contains(out.String(), key) {
		t.Error("the key reached the log or the output")
	}
}
