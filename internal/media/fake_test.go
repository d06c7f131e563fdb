package media

import (
	"encoding/base64"
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
	"massgen/internal/workspace"
)

// Small files whose first bytes sniff as what their names say.
var (
	pngBytes  = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 64)...)
	wavBytes  = append([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), make([]byte, 64)...)
	mp4Bytes  = append([]byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"), make([]byte, 64)...)
	pdfBytes  = []byte("%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n")
	mp3Speech = append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), make([]byte, 256)...)
)

// call is one request the fake received.
type call struct {
	Method, Path, Auth, GoogKey, ContentType string
	Body                                     []byte
}

// fakeProviders speaks the wire formats the media tools use: OpenAI's Responses (text or an
// image_generation_call), transcriptions, images and speech; Gemini's generateContent;
// Claude's Messages. override maps a path suffix to a status and body served instead.
type fakeProviders struct {
	*httptest.Server
	mu       sync.Mutex
	calls    []call
	override map[string]struct {
		status int
		body   string
	}
	imageB64 string // what image endpoints return
	gen      genFake
}

func newFakeProviders(t *testing.T) *fakeProviders {
	t.Helper()
	f := &fakeProviders{imageB64: base64.StdEncoding.EncodeToString(pngBytes)}
	f.override = map[string]struct {
		status int
		body   string
	}{}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeProviders) fail(suffix string, status int, body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.override[suffix] = struct {
		status int
		body   string
	}{status, body}
}

func (f *fakeProviders) last() call {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		return call{}
	}
	return f.calls[len(f.calls)-1]
}

func (f *fakeProviders) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fakeProviders) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, call{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"),
		GoogKey: r.Header.Get("X-Goog-Api-Key"), ContentType: r.Header.Get("Content-Type"), Body: body})
	for suffix, o := range f.override {
		if strings.HasSuffix(r.URL.Path, suffix) {
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(o.status)
			_, _ = io.WriteString(w, o.body)
			return
		}
	}
	f.mu.Unlock()
	if f.serveGeneration(w, r, body) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	p := r.URL.Path
	switch {
	case strings.HasSuffix(p, "/responses"):
		var req struct {
			Tools []map[string]any `json:"tools"`
		}
		_ = json.Unmarshal(body, &req)
		if len(req.Tools) > 0 {
			_, _ = io.WriteString(w, `{"id":"resp_2","object":"response","created_at":1,"status":"completed","model":"gpt-5","output":[`+
				`{"type":"image_generation_call","id":"ig_1","status":"completed","result":"`+f.imageB64+`"}]}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"resp_1","object":"response","created_at":1,"status":"completed","model":"gpt-4.1","output":[`+
			`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":"OpenAI sees a red square.","annotations":[]}]}]}`)
	case strings.HasSuffix(p, "/audio/transcriptions"):
		_, _ = io.WriteString(w, `{"text":"hello from the recording"}`)
	case strings.HasSuffix(p, "/images/generations"):
		_, _ = io.WriteString(w, `{"created":1,"data":[{"b64_json":"`+f.imageB64+`"}]}`)
	case strings.HasSuffix(p, "/audio/speech"):
		w.Header().Set("Content-Type", "audio/mpeg")
		_, _ = w.Write(mp3Speech)
	case strings.Contains(p, ":generateContent"):
		_, _ = io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Gemini sees it."}]},"finishReason":"STOP"}],`+
			`"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":3}}`)
	case strings.HasSuffix(p, "/v1/messages"):
		_, _ = io.WriteString(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Claude sees it."}],`+
			`"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":3}}`)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"message":"no route `+p+`"}}`)
	}
}

// Keys the fakes get; no result, error or file may contain them.
const (
	openaiKey = "sk-media-test-OPENAI-SECRET-1234567890"
	geminiKey = "AIza-media-test-GEMINI-SECRET-123456789"
	claudeKey = "sk-ant-media-test-CLAUDE-SECRET-1234567"
)

// backends points the named providers at f.
func (f *fakeProviders) backends(names ...string) map[string]Backend {
	out := map[string]Backend{}
	for _, n := range names {
		switch n {
		case "openai":
			out[n] = Backend{Name: n, APIKey: openaiKey, KeyEnv: "OPENAI_API_KEY", BaseURL: f.URL + "/v1"}
		case "gemini":
			out[n] = Backend{Name: n, APIKey: geminiKey, KeyEnv: "GEMINI_API_KEY", BaseURL: f.URL}
		case "claude":
			out[n] = Backend{Name: n, APIKey: claudeKey, KeyEnv: "ANTHROPIC_API_KEY", BaseURL: f.URL}
		}
	}
	return out
}

// newAgent is a workspace with files, and a context path outside it holding outside.png.
func newAgent(t *testing.T, files map[string][]byte) (*workspace.Agent, string) {
	t.Helper()
	root := t.TempDir()
	run, err := workspace.NewRun(filepath.Join(root, "ws"), "run1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	ws, err := run.Agent("a", "agent1")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(ws.Dir(), name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	shared := filepath.Join(root, "shared")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "granted.png"), pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ws.SetContextPaths([]workspace.ContextPath{{Path: shared}}); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.png"), pngBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	return ws, root
}

func on() *bool { b := true; return &b }

// allOn is a media config with every tool on.
var allOn = config.Media{Multimodal: on()}
