package media

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/config"
	"massgen/internal/tool"
)

// Importing genai links go.opencensus.io, whose init starts a process-wide worker.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

type setup struct {
	f    *fakeProviders
	ts   *toolset
	root string // holds ws/, shared/granted.png (a context path) and outside/secret.png
}

func newSetup(t *testing.T, own, ownModel string, m config.Media, providers ...string) setup {
	t.Helper()
	f := newFakeProviders(t)
	ws, root := newAgent(t, map[string][]byte{"shot.png": pngBytes, "talk.wav": wavBytes, "clip.mp4": mp4Bytes, "report.pdf": pdfBytes,
		"notes.md": []byte("# Plan\nShip on Friday.\n"), "fake.png": []byte("just some text, not an image at all\n"),
		"report.docx": []byte("PK\x03\x04"), "notes.xyz": []byte("?"), "dir/inner.png": pngBytes})
	ts := newToolset(Options{Workspace: ws, Media: m, Own: own, OwnModel: ownModel, Backends: f.backends(providers...),
		HTTPClient: f.Client(), Now: func() time.Time { return time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC) }})
	return setup{f: f, ts: ts, root: root}
}

func run(t *testing.T, tl tool.Tool, args any) (tool.Result, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(args)
	res := tl.Run(t.Context(), string(b))
	for _, k := range []string{openaiKey, geminiKey, claudeKey} {
		if strings.Contains(res.Content, k) || strings.Contains(res.Content, k[10:30]) {
			t.Fatalf("a key reached the result: %s", res.Content)
		}
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil {
		t.Fatalf("the result is not JSON: %v\n%s", err, res.Content)
	}
	return res, out
}

// TestReadMedia_ProviderWire: each kind of file reaches the provider chosen as MassGen
// chooses (the call's, the config's, the agent's own, then Gemini first), in that
// provider's multimodal wire format, through its official SDK, with its key.
func TestReadMedia_ProviderWire(t *testing.T) {
	for _, tc := range []struct {
		name, own, ownModel, file string
		media                     config.Media
		providers                 []string
		wantPath, wantBackend     string
		wantModel, wantText       string
		wantBody                  []string
		wantAuth                  func(c call) string
	}{
		{name: "image to the agent's own OpenAI model", own: "openai", ownModel: "gpt-5-mini", file: "shot.png", providers: []string{"openai", "gemini"},
			wantPath: "/v1/responses", wantBackend: "openai", wantModel: "gpt-5-mini", wantText: "OpenAI sees a red square.",
			wantBody: []string{`"type":"input_image"`, `"image_url":"data:image/png;base64,`, `"type":"input_text"`, `"model":"gpt-5-mini"`},
			wantAuth: func(c call) string { return c.Auth }},
		{name: "image without an own provider goes to Gemini first", own: "scripted", file: "shot.png", providers: []string{"openai", "gemini", "claude"},
			wantPath: "/v1beta/models/gemini-3-flash-preview:generateContent", wantBackend: "gemini", wantModel: "gemini-3-flash-preview",
			wantText: "Gemini sees it.", wantBody: []string{`"inlineData":{"data":"`, `"mimeType":"image/png"`},
			wantAuth: func(c call) string { return c.GoogKey }},
		{name: "image to the agent's own Claude model", own: "claude", ownModel: "claude-opus-4-1", file: "shot.png", providers: []string{"claude", "gemini"},
			wantPath: "/v1/messages", wantBackend: "claude", wantModel: "claude-opus-4-1", wantText: "Claude sees it.",
			wantBody: []string{`"type":"image"`, `"media_type":"image/png"`, `"type":"base64"`},
			wantAuth: func(c call) string { return c.Auth }},
		{name: "multimodal_config picks the provider and model", own: "openai", file: "shot.png", providers: []string{"openai", "claude"},
			media:    config.Media{Multimodal: on(), Understand: map[string]config.MediaChoice{"image": {Backend: "claude", Model: "claude-haiku-4-5"}}},
			wantPath: "/v1/messages", wantBackend: "claude", wantModel: "claude-haiku-4-5", wantText: "Claude sees it.",
			wantBody: []string{`"model":"claude-haiku-4-5"`}, wantAuth: func(c call) string { return c.Auth }},
		{name: "an image from a granted context path", own: "openai", ownModel: "gpt-5-mini", file: "CONTEXT/granted.png", providers: []string{"openai"},
			wantPath: "/v1/responses", wantBackend: "openai", wantModel: "gpt-5-mini", wantText: "OpenAI sees",
			wantAuth: func(c call) string { return c.Auth }},
		{name: "audio to OpenAI's transcription endpoint", own: "openai", ownModel: "gpt-5", file: "talk.wav", providers: []string{"openai"},
			wantPath: "/v1/audio/transcriptions", wantBackend: "openai", wantModel: "gpt-4o-transcribe", wantText: "hello from the recording",
			wantBody: []string{`name="model"`, "gpt-4o-transcribe", `filename="talk.wav"`}, wantAuth: func(c call) string { return c.Auth }},
		{name: "audio to Gemini inline", own: "scripted", file: "talk.wav", providers: []string{"openai", "gemini"},
			wantPath: "/v1beta/models/gemini-3-flash-preview:generateContent", wantBackend: "gemini", wantText: "Gemini sees it.",
			wantModel: "gemini-3-flash-preview", wantBody: []string{`"mimeType":"audio/wav"`}, wantAuth: func(c call) string { return c.GoogKey }},
		{name: "video to Gemini whole", own: "scripted", file: "clip.mp4", providers: []string{"openai", "gemini", "claude"},
			wantPath: "/v1beta/models/gemini-3-flash-preview:generateContent", wantBackend: "gemini", wantText: "Gemini sees it.",
			wantModel: "gemini-3-flash-preview", wantBody: []string{`"mimeType":"video/mp4"`}, wantAuth: func(c call) string { return c.GoogKey }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.media
			if m.Multimodal == nil {
				m = allOn
			}
			s := newSetup(t, tc.own, tc.ownModel, m, tc.providers...)
			file := tc.file
			if rest, ok := strings.CutPrefix(file, "CONTEXT/"); ok {
				file = filepath.Join(s.root, "shared", rest)
			}
			res, out := run(t, s.ts.readMediaTool(), map[string]any{"file_path": file, "prompt": "What is wrong here?"})
			if res.IsError {
				t.Fatalf("error: %s", res.Content)
			}
			c := s.f.last()
			if c.Path != tc.wantPath {
				t.Fatalf("request to %s, want %s", c.Path, tc.wantPath)
			}
			if got := tc.wantAuth(c); !strings.Contains(got, s.f.backends(tc.wantBackend)[tc.wantBackend].APIKey) {
				t.Errorf("the %s key was not sent (got %q)", tc.wantBackend, got)
			}
			for _, w := range tc.wantBody {
				if !strings.Contains(string(c.Body), w) {
					t.Errorf("the request body lacks %s:\n%.600s", w, c.Body)
				}
			}
			text, _ := out["response"].(string)
			if _, ok := out["transcriptions"]; ok {
				tr, _ := out["transcriptions"].([]any)
				if len(tr) == 1 {
					text, _ = tr[0].(map[string]any)["transcription"].(string)
				}
			}
			if out["success"] != true || out["backend"] != tc.wantBackend || out["model"] != tc.wantModel || !strings.Contains(text, tc.wantText) {
				t.Errorf("result %s", res.Content)
			}
		})
	}
}

// TestUnderstandFile_Wire: a PDF goes as a document (OpenAI input_file, Claude document
// block); a text file goes as text, cut at max_chars.
func TestUnderstandFile_Wire(t *testing.T) {
	s := newSetup(t, "openai", "gpt-5-mini", allOn, "openai", "claude")
	tl := s.ts.understandFileTool()
	res, out := run(t, tl, map[string]any{"file_path": "report.pdf"})
	if res.IsError || out["file_type"] != "pdf" || out["backend"] != "openai" {
		t.Fatalf("pdf: %s", res.Content)
	}
	if b := string(s.f.last().Body); !strings.Contains(b, `"type":"input_file"`) || !strings.Contains(b, `"file_data":"data:application/pdf;base64,`) ||
		!strings.Contains(b, `"filename":"report.pdf"`) {
		t.Errorf("openai body: %.500s", b)
	}
	res, out = run(t, tl, map[string]any{"file_path": "notes.md", "max_chars": 10, "prompt": "When do we ship?"})
	if res.IsError || out["file_type"] != "text" || out["truncated"] != true || out["chars_read"] != float64(10) {
		t.Fatalf("text: %s", res.Content)
	}
	if b := string(s.f.last().Body); !strings.Contains(b, `# Plan\nShi`) || strings.Contains(b, "Friday") || !strings.Contains(b, "When do we ship?") {
		t.Errorf("the text was not sent cut at max_chars: %.500s", b)
	}

	c := newSetup(t, "claude", "claude-sonnet-4-5", allOn, "claude")
	res, _ = run(t, c.ts.understandFileTool(), map[string]any{"file_path": "report.pdf"})
	if b := string(c.f.last().Body); res.IsError || !strings.Contains(b, `"type":"document"`) || !strings.Contains(b, `"media_type":"application/pdf"`) {
		t.Errorf("claude: %s\n%.500s", res.Content, b)
	}
}

// TestUnderstandImage_Several: images by name go in one request, named in the prompt.
func TestUnderstandImage_Several(t *testing.T) {
	s := newSetup(t, "openai", "gpt-5-mini", allOn, "openai")
	res, out := run(t, s.ts.understandImageTool(), map[string]any{"images": map[string]string{"before": "shot.png", "after": "dir/inner.png"},
		"prompt": "What changed?"})
	if res.IsError || len(out["images"].(map[string]any)) != 2 {
		t.Fatalf("%s", res.Content)
	}
	b := string(s.f.last().Body)
	if strings.Count(b, `"type":"input_image"`) != 2 || !strings.Contains(b, `- after: inner.png`) || !strings.Contains(b, `- before: shot.png`) {
		t.Errorf("body: %.800s", b)
	}
}

// TestReadMedia_Batch: inputs are analyzed in parallel, each result in its place, a failing
// one reported without failing the others.
func TestReadMedia_Batch(t *testing.T) {
	s := newSetup(t, "openai", "gpt-5-mini", allOn, "openai")
	res, out := run(t, s.ts.readMediaTool(), map[string]any{"inputs": []any{
		map[string]any{"files": map[string]string{"a": "shot.png"}},
		map[string]any{"files": map[string]string{"a": "missing.png"}},
		map[string]any{"files": map[string]string{"x": "talk.wav"}, "prompt": "Transcribe."},
	}, "max_concurrent": 2})
	if res.IsError || out["total"] != float64(3) || out["succeeded"] != float64(2) || out["failed"] != float64(1) {
		t.Fatalf("%s", res.Content)
	}
	results := out["results"].([]any)
	for i, want := range []bool{true, false, true} {
		r := results[i].(map[string]any)
		if r["success"] != want || r["input_index"] != float64(i) {
			t.Errorf("results[%d] = %v", i, r)
		}
	}
	if n := s.f.count(); n != 2 {
		t.Errorf("%d provider calls, want 2", n)
	}
}

// TestGenerateMedia: images through the Images API or a Responses model's image_generation
// tool and speech through the speech endpoint land in the workspace, named after the prompt.
func TestGenerateMedia(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     map[string]any
		media    config.Media
		wantPath string
		wantBody []string
		wantFile string
		wantData []byte
	}{
		{name: "image via the Images API", args: map[string]any{"prompt": "A red square!", "mode": "image", "size": "1024x1024"},
			wantPath: "/v1/images/generations", wantBody: []string{`"model":"gpt-image-1"`, `"prompt":"A red square!"`, `"size":"1024x1024"`},
			wantFile: "20261201_100000_A_red_square.png", wantData: pngBytes},
		{name: "image via a Responses model from the config", args: map[string]any{"prompt": "lighthouse", "storage_path": "art"},
			media:    config.Media{Multimodal: on(), Generate: map[string]config.MediaChoice{"image": {Model: "gpt-5"}}},
			wantPath: "/v1/responses", wantBody: []string{`"type":"image_generation"`, `"model":"gpt-5"`},
			wantFile: "art/20261201_100000_lighthouse.png", wantData: pngBytes},
		{name: "speech", args: map[string]any{"prompt": "Hello there.", "mode": "audio", "voice": "nova", "instructions": "cheerful"},
			wantPath: "/v1/audio/speech", wantBody: []string{`"voice":"nova"`, `"input":"Hello there."`, `"model":"gpt-4o-mini-tts"`, `"instructions":"cheerful"`, `"response_format":"mp3"`},
			wantFile: "20261201_100000_Hello_there.mp3", wantData: mp3Speech},
		{name: "image via enable_image_generation alone", args: map[string]any{"prompt": "cat"}, media: config.Media{ImageGeneration: true},
			wantPath: "/v1/images/generations", wantFile: "20261201_100000_cat.png", wantData: pngBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.media
			if !m.Enabled() {
				m = allOn
			}
			s := newSetup(t, "scripted", "", m, "openai")
			set := Tools(s.ts.o)
			gm, ok := set.Find("custom_tool__generate_media")
			if !ok {
				t.Fatalf("no generate_media in %v", set.Specs())
			}
			res, out := run(t, gm, tc.args)
			if res.IsError {
				t.Fatalf("%s", res.Content)
			}
			c := s.f.last()
			if c.Path != tc.wantPath || !strings.Contains(c.Auth, openaiKey) {
				t.Errorf("request %s (auth sent: %v), want %s", c.Path, c.Auth != "", tc.wantPath)
			}
			for _, w := range tc.wantBody {
				if !strings.Contains(string(c.Body), w) {
					t.Errorf("body lacks %s: %.500s", w, c.Body)
				}
			}
			want := filepath.Join(s.ts.o.Workspace.Dir(), tc.wantFile)
			if out["file_path"] != want {
				t.Errorf("file_path %v, want %s\n%s", out["file_path"], want, res.Content)
			}
			if b, err := os.ReadFile(want); err != nil || string(b) != string(tc.wantData) {
				t.Errorf("the saved file: %v (%d bytes)", err, len(b))
			}
			// The same prompt again gets a new name, not the old file overwritten.
			res, out = run(t, gm, tc.args)
			if res.IsError || out["file_path"] == want || !strings.HasSuffix(out["file_path"].(string), "_2"+filepath.Ext(want)) {
				t.Errorf("second call: %s", res.Content)
			}
		})
	}
}

// TestTools_Offered: which tools the config turns on, under MassGen's names.
func TestTools_Offered(t *testing.T) {
	s := newSetup(t, "", "", config.Media{}, "openai")
	for _, tc := range []struct {
		m    config.Media
		want []string
		enum []string
	}{
		{config.Media{}, nil, nil},
		{allOn, []string{"custom_tool__read_media", "custom_tool__generate_media"}, []string{"image", "audio", "video"}},
		{config.Media{AudioGeneration: true}, []string{"custom_tool__generate_media"}, []string{"audio"}},
		{config.Media{VideoGeneration: true, FileGeneration: true}, []string{"custom_tool__generate_media", "custom_tool__text_to_file_generation"}, []string{"video"}},
		{config.Media{FileGeneration: true}, []string{"custom_tool__text_to_file_generation"}, nil},
	} {
		o := s.ts.o
		o.Media = tc.m
		set := Tools(o)
		var names []string
		for _, sp := range set.Specs() {
			names = append(names, sp.Name)
		}
		if strings.Join(names, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%+v: tools %v, want %v", tc.m, names, tc.want)
		}
		if gm, ok := set.Find("custom_tool__generate_media"); ok {
			enum := gm.Spec.Parameters["properties"].(map[string]any)["mode"].(map[string]any)["enum"].([]string)
			if strings.Join(enum, ",") != strings.Join(tc.enum, ",") {
				t.Errorf("modes %v, want %v", enum, tc.enum)
			}
		}
	}
	c, err := Custom(s.ts.o, config.CustomTool{Name: "look", Function: "understand_image", Path: "massgen/tool/_multimodal_tools/understand_image.py",
		PresetArgs: map[string]any{"model": "gpt-4.1-mini"}})
	if err != nil || c.Spec.Name != "custom_tool__look" {
		t.Fatalf("custom: %v %v", c.Spec.Name, err)
	}
	if _, shown := c.Spec.Parameters["properties"].(map[string]any)["model"]; shown {
		t.Error("a preset argument is still in the schema")
	}
	res, _ := run(t, c, map[string]any{"image_path": "shot.png", "model": "ignored"})
	if res.IsError || !strings.Contains(string(s.f.last().Body), `"model":"gpt-4.1-mini"`) {
		t.Errorf("preset model not used: %s\n%.300s", res.Content, s.f.last().Body)
	}
	// A default, unlike a preset, stays in the schema and gives way to the model's value.
	d, err := Custom(s.ts.o, config.CustomTool{Name: "look2", Function: "understand_image", Path: "massgen/tool/_multimodal_tools/understand_image.py",
		DefaultParams: map[string]any{"model": "gpt-4.1-mini"}})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := d.Spec.Parameters["properties"].(map[string]any)["model"].(map[string]any); p["default"] != "gpt-4.1-mini" {
		t.Errorf("schema of model = %v, want its default shown", p)
	}
	for model, want := range map[string]string{"": "gpt-4.1-mini", "gpt-4.1-nano": "gpt-4.1-nano"} {
		args := map[string]any{"image_path": "shot.png"}
		if model != "" {
			args["model"] = model
		}
		res, _ := run(t, d, args)
		if res.IsError || !strings.Contains(string(s.f.last().Body), `"model":"`+want+`"`) {
			t.Errorf("model %q: want %s sent: %s\n%.300s", model, want, res.Content, s.f.last().Body)
		}
	}
}

// TestMedia_BadInput: every bad argument, file and provider answer is a tool error that says
// what is wrong, and nothing bad is sent.
func TestMedia_BadInput(t *testing.T) {
	big := func(t *testing.T, s setup) {
		t.Helper()
		if err := os.Truncate(filepath.Join(s.ts.o.Workspace.Dir(), "shot.png"), 19<<20); err != nil {
			t.Fatal(err)
		}
	}
	outside := func(s setup) string {
		return filepath.Join(s.root, "outside", "secret.png")
	}
	read := func(s setup) tool.Tool { return s.ts.readMediaTool() }
	gen := func(s setup) tool.Tool { return s.ts.generateMediaTool([]string{"image", "audio"}) }
	for _, tc := range []struct {
		name      string
		providers []string
		tool      func(setup) tool.Tool
		args      func(setup) any
		prepare   func(*testing.T, setup)
		want      string
		calls     int
	}{
		{name: "not JSON", tool: read, args: func(setup) any { return "{" }, want: "invalid arguments for read_media"},
		{name: "neither file_path nor inputs", tool: read, args: func(setup) any { return map[string]any{} }, want: "give file_path"},
		{name: "both", tool: read, args: func(setup) any {
			return map[string]any{"file_path": "shot.png", "inputs": []any{map[string]any{"files": map[string]string{"a": "shot.png"}}}}
		}, want: "not both"},
		{name: "outside the workspace", tool: read, args: func(s setup) any { return map[string]any{"file_path": outside(s)} }, want: "is outside what you can access"},
		{name: "escaping with ..", tool: read, args: func(setup) any { return map[string]any{"file_path": "../../../outside/secret.png"} }, want: "outside what you can access"},
		{name: "missing", tool: read, args: func(setup) any { return map[string]any{"file_path": "nope.png"} }, want: "does not exist"},
		{name: "too big", tool: read, prepare: big, args: func(setup) any { return map[string]any{"file_path": "shot.png"} }, want: "the limit is 18.0 MiB"},
		{name: "unknown type", tool: read, args: func(setup) any { return map[string]any{"file_path": "notes.xyz"} }, want: `unsupported file type ".xyz"`},
		{name: "office document", tool: read, args: func(setup) any { return map[string]any{"file_path": "report.docx"} }, want: "convert it to PDF or text"},
		{name: "a document to read_media", tool: read, args: func(setup) any { return map[string]any{"file_path": "report.pdf"} }, want: "understand_file reads documents"},
		{name: "text named .png", tool: read, args: func(setup) any { return map[string]any{"file_path": "fake.png"} }, want: "holds text"},
		{name: "no key for any provider", providers: []string{}, tool: read, args: func(setup) any { return map[string]any{"file_path": "shot.png"} },
			want: "no provider for image: set GEMINI_API_KEY (or GOOGLE_API_KEY) or OPENAI_API_KEY or ANTHROPIC_API_KEY"},
		{name: "video without a key", providers: []string{}, tool: read, args: func(setup) any { return map[string]any{"file_path": "clip.mp4"} },
			want: "no provider for video: set GEMINI_API_KEY (or GOOGLE_API_KEY) or OPENAI_API_KEY or ANTHROPIC_API_KEY"},
		{name: "provider error, its message redacted", tool: read, prepare: func(_ *testing.T, s setup) {
			s.f.fail("/responses", 400, `{"error":{"message":"bad image for key `+openaiKey+`","type":"invalid_request_error"}}`)
		}, args: func(setup) any { return map[string]any{"file_path": "shot.png"} }, want: "openai API error: 400 Bad Request: bad image for key [redacted]", calls: 1},
		{name: "malformed response: no text", tool: read, prepare: func(_ *testing.T, s setup) {
			s.f.fail("/responses", 200, `{"id":"r","object":"response","status":"completed","output":[]}`)
		}, args: func(setup) any { return map[string]any{"file_path": "shot.png"} }, want: "answered without any text", calls: 1},
		{name: "malformed response: not JSON", tool: read, prepare: func(_ *testing.T, s setup) { s.f.fail("/responses", 200, `{"output": [`) },
			args: func(setup) any { return map[string]any{"file_path": "shot.png"} }, want: "openai API error", calls: 1},
		{name: "response too large", tool: read, prepare: func(_ *testing.T, s setup) {
			s.ts.hc.Transport = limitTransport{base: s.f.Client().Transport, max: 64}
		}, args: func(setup) any { return map[string]any{"file_path": "shot.png"} }, want: "the response is larger than", calls: 1},
		{name: "generate: video where it is not offered", tool: gen, args: func(setup) any { return map[string]any{"prompt": "x", "mode": "video"} },
			want: `mode "video" is not offered here: use image or audio`},
		{name: "generate: bad voice", tool: gen, args: func(setup) any { return map[string]any{"prompt": "x", "mode": "audio", "voice": "robot"} },
			want: `voice "robot" is not one of OpenAI's`},
		{name: "generate: speech too long", tool: gen, args: func(setup) any { return map[string]any{"prompt": strings.Repeat("a", 4097), "mode": "audio"} },
			want: "the limit is 4096"},
		{name: "generate: backend not built", tool: gen, args: func(setup) any { return map[string]any{"prompt": "x", "backend_type": "google"} },
			want: "built for openai only"},
		{name: "generate: no OpenAI key", providers: []string{"gemini"}, tool: gen, args: func(setup) any { return map[string]any{"prompt": "x"} },
			want: "set OPENAI_API_KEY"},
		{name: "generate: storage outside", tool: gen, args: func(s setup) any {
			return map[string]any{"prompt": "x", "storage_path": filepath.Dir(outside(s))}
		}, want: "outside what you can access", calls: 1},
		{name: "generate: not an image back", tool: gen, prepare: func(_ *testing.T, s setup) { s.f.imageB64 = "aGVsbG8gd29ybGQ=" },
			args: func(setup) any { return map[string]any{"prompt": "x"} }, want: "not an image", calls: 1},
		{name: "generate: not base64 back", tool: gen, prepare: func(_ *testing.T, s setup) { s.f.imageB64 = "***" },
			args: func(setup) any { return map[string]any{"prompt": "x"} }, want: "not base64", calls: 1},
		{name: "generate: too many prompts", tool: gen, args: func(setup) any { return map[string]any{"prompts": make([]string, 9)} }, want: "at most 8"},
		{name: "generate: input images with an Images API model", tool: gen,
			args: func(setup) any {
				return map[string]any{"prompt": "x", "input_images": []string{"shot.png"}, "model": "gpt-image-1"}
			},
			want: "give a Responses model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			providers := tc.providers
			if providers == nil {
				providers = []string{"openai", "gemini"}
			}
			s := newSetup(t, "openai", "gpt-5-mini", allOn, providers...)
			if tc.prepare != nil {
				tc.prepare(t, s)
			}
			var res tool.Result
			var out map[string]any
			if raw, ok := tc.args(s).(string); ok {
				res = tc.tool(s).Run(t.Context(), raw)
				_ = json.Unmarshal([]byte(res.Content), &out)
			} else {
				res, out = run(t, tc.tool(s), tc.args(s))
			}
			if msg, _ := out["error"].(string); !res.IsError || !strings.Contains(msg, tc.want) || out["success"] != false {
				t.Errorf("got %s\nwant an error containing %q", res.Content, tc.want)
			}
			if strings.Contains(res.Content, openaiKey) {
				t.Errorf("the key reached the error: %s", res.Content)
			}
			if n := s.f.count(); n != tc.calls {
				t.Errorf("%d provider calls, want %d", n, tc.calls)
			}
		})
	}
}

// TestReadMedia_Cancelled: a cancelled call ends with an error and leaves no goroutine.
func TestReadMedia_Cancelled(t *testing.T) {
	s := newSetup(t, "openai", "gpt-5-mini", allOn, "openai")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res := s.ts.readMediaTool().Run(ctx, `{"inputs": [{"files": {"a": "shot.png"}}, {"files": {"b": "shot.png"}}]}`)
	if !res.IsError || !strings.Contains(res.Content, "canceled") {
		t.Errorf("%s", res.Content)
	}
}
