package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"massgen/internal/childproc"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// fakeOpenAIVision is OpenAI's Responses endpoint answering one non-streamed multimodal
// request, recording what it was sent.
type fakeOpenAIVision struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	auth   []string
}

func newFakeOpenAIVision(t *testing.T, answer string) *fakeOpenAIVision {
	t.Helper()
	f := &fakeOpenAIVision{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.bodies = append(f.bodies, r.URL.Path+" "+string(b))
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if r.URL.Path != "/v1/responses" {
			http.Error(w, `{"error":{"message":"unexpected path"}}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		out, _ := json.Marshal(answer)
		fmt.Fprintf(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4.1","output":[`+
			`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}]}`, out)
	}))
	t.Cleanup(f.Close)
	return f
}

// TestE2E_MediaCustomToolAndSandbox is issue 13's done-when: the MassGen-style example
// examples/media_tools_srt.yaml (a custom Python tool written for MassGen, the read_media
// media tool and command_line_execution_mode: srt) completes a session offline with scripted
// agents, the media call going to a local fake of OpenAI's Responses API: the chart drawn in
// the sandbox reaches the fake as an input_image, the description comes back through
// read_media, the Python tool counts its words, and the count lands in the winner's
// workspace. No key reaches the log.
func TestE2E_MediaCustomToolAndSandbox(t *testing.T) {
	requirePython3(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bwrap is missing: .ci/run installs bubblewrap")
		}
		t.Skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
	}
	if ok, why := childproc.Confinement(); !ok {
		t.Skip("no sandbox without user namespaces: " + why)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo) // the example is run from the repository root
	cfg, rep := config.Load(filepath.Join("examples", "media_tools_srt.yaml"))
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	// The Python worker gets the tag, so the test can see it is gone afterwards.
	tag := fmt.Sprintf("MASSGEN_TEST_TAG_%d_MEDIA", os.Getpid())
	t.Setenv(tag, "1")
	for i := range cfg.Agents[0].Backend.Tools.CustomTools {
		cfg.Agents[0].Backend.Tools.CustomTools[i].PassEnv = []string{tag}
	}

	const key = "sk-e2e-media-SECRET-0123456789abcdef"
	fake := newFakeOpenAIVision(t, "Four blue bars rise from left to right, the last one tallest, the second one taller than the third.")
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "What does the chart show?", Logging: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)},
		Getenv: env(map[string]string{"OPENAI_API_KEY": key, "OPENAI_BASE_URL": fake.URL + "/v1"})})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "analyst" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}

	got := toolResults(t, res.Dir)
	if r := got["execute_command"]; r.IsError || !strings.Contains(r.Content, "97 chart.png") {
		t.Errorf("the sandboxed command: %+v", r)
	}
	var media map[string]any
	if r := got["custom_tool__read_media"]; r.IsError || json.Unmarshal([]byte(r.Content), &media) != nil ||
		media["operation"] != "understand_image" || media["backend"] != "openai" || !strings.Contains(fmt.Sprint(media["response"]), "Four blue bars") {
		t.Errorf("read_media: %+v", r)
	}
	// The Python tool counted the words of read_media's whole result (its JSON).
	wc := got["custom_tool__word_count"]
	if wc.IsError || !strings.Contains(wc.Content, " words; most frequent: ") || !strings.Contains(wc.Content, "the (3)") {
		t.Errorf("word_count: %+v", wc)
	}
	b, err := os.ReadFile(filepath.Join(res.Dir, "final", "analyst", "workspace", "word_count.txt"))
	if err != nil || string(b) != wc.Content {
		t.Errorf("word_count.txt = %q, %v\n%s", b, err, out.String())
	}
	fake.mu.Lock()
	bodies, auth := fake.bodies, fake.auth
	fake.mu.Unlock()
	if len(bodies) != 1 || !strings.Contains(bodies[0], `"type":"input_image"`) ||
		!strings.Contains(bodies[0], `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAABgAAAAQ`) || auth[0] != "Bearer "+key {
		t.Errorf("the fake got %d requests: %.300v (auth %v)", len(bodies), bodies, len(auth) > 0 && auth[0] == "Bearer "+key)
	}
	logs, _ := os.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if bytes.Contains(logs, []byte(key)) || strings.Contains(out.String(), key) {
		t.Error("the key reached the log or the output")
	}
	waitNoneTagged(t, tag)
}
