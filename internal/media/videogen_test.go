package media

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/config"
	"massgen/internal/tool"
)

// fast makes video jobs poll every millisecond.
func fast(s setup) setup {
	s.ts.o.PollEvery = time.Millisecond
	return s
}

// runOut runs tl and collects what it streams.
func runOut(t *testing.T, tl tool.Tool, args any) (tool.Result, map[string]any, string) {
	t.Helper()
	var mu sync.Mutex
	var out strings.Builder
	b, _ := json.Marshal(args)
	ctx := tool.WithOutput(t.Context(), func(s string) { mu.Lock(); out.WriteString(s); mu.Unlock() })
	res := tl.Run(ctx, string(b))
	var m map[string]any
	if err := json.Unmarshal([]byte(res.Content), &m); err != nil {
		t.Fatalf("the result is not JSON: %v\n%s", err, res.Content)
	}
	for _, k := range []string{openaiKey, geminiKey} {
		if strings.Contains(res.Content, k) || strings.Contains(out.String(), k) {
			t.Fatalf("a key reached the result: %s", res.Content)
		}
	}
	return res, m, out.String()
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestGenerateVideo: generate_media's mode video goes to OpenAI's videos API or Gemini's Veo
// as MassGen chooses, through the official SDKs in their wire formats: the job is created,
// checked until done (its progress streamed), downloaded and saved as MP4 in the workspace,
// and its cost (list price per second) is in the result and in Spent.
func TestGenerateVideo(t *testing.T) {
	for _, tc := range []struct {
		name      string
		own       string
		providers []string
		media     config.Media
		args      map[string]any
		wantCalls []string // method and path of each request, in order
		wantBody  []string // in the create request
		wantCost  float64
		inline    bool
	}{
		{name: "sora, the agent's own provider", own: "openai", providers: []string{"openai", "gemini"},
			args:      map[string]any{"prompt": "Neon alley at night, light rain!", "mode": "video", "duration": 8, "aspect_ratio": "16:9"},
			wantCalls: []string{"POST /v1/videos", "GET /v1/videos/video_123", "GET /v1/videos/video_123", "GET /v1/videos/video_123/content"},
			wantBody:  []string{`name="prompt"`, "Neon alley at night, light rain!", `name="model"`, "sora-2", `name="seconds"`, "8", "1280x720"},
			wantCost:  0.8},
		{name: "veo, by the config's backend", own: "openai", providers: []string{"openai", "gemini"},
			media: config.Media{VideoGeneration: true, Generate: map[string]config.MediaChoice{"video": {Backend: "gemini"}}},
			args:  map[string]any{"prompt": "Cherry blossoms falling", "duration": 6, "aspect_ratio": "9:16"},
			wantCalls: []string{"POST /v1beta/models/veo-3.1-fast-generate-preview:predictLongRunning",
				"GET /v1beta/models/veo-3.1-fast-generate-preview/operations/op123", "GET /v1beta/models/veo-3.1-fast-generate-preview/operations/op123",
				"GET /v1beta/files/abc123:download"},
			wantBody: []string{`"instances":[{"prompt":"Cherry blossoms falling"}]`, `"durationSeconds":6`, `"aspectRatio":"9:16"`, `"sampleCount":1`},
			wantCost: 6 * 0.15},
		{name: "veo inline, chosen first when nothing decides", own: "claude", providers: []string{"openai", "gemini"}, inline: true,
			args: map[string]any{"prompt": "A fox", "mode": "video", "model": "veo-3.1-generate-preview", "size": "1920x1080"},
			wantCalls: []string{"POST /v1beta/models/veo-3.1-generate-preview:predictLongRunning",
				"GET /v1beta/models/veo-3.1-generate-preview/operations/op123", "GET /v1beta/models/veo-3.1-generate-preview/operations/op123"},
			wantBody: []string{`"aspectRatio":"16:9"`, `"resolution":"1080p"`},
			wantCost: 8 * 0.40}, // Veo's default length
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.media
			if !m.Enabled() {
				m = allOn
			}
			s := fast(newSetup(t, tc.own, "", m, tc.providers...))
			s.f.gen.pending, s.f.gen.inline = 1, tc.inline
			gm, ok := Tools(s.ts.o).Find("custom_tool__generate_media")
			if !ok {
				t.Fatal("no generate_media")
			}
			res, out, streamed := runOut(t, gm, tc.args)
			if res.IsError {
				t.Fatalf("%s", res.Content)
			}
			s.f.mu.Lock()
			calls := s.f.calls
			s.f.mu.Unlock()
			var got []string
			for _, c := range calls {
				got = append(got, c.Method+" "+c.Path)
			}
			if strings.Join(got, "\n") != strings.Join(tc.wantCalls, "\n") {
				t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantCalls, "\n"))
			}
			for _, w := range tc.wantBody {
				if !strings.Contains(string(calls[0].Body), w) {
					t.Errorf("the create request lacks %s: %.600s", w, calls[0].Body)
				}
			}
			if a := calls[0].Auth + calls[0].GoogKey; !strings.Contains(a, openaiKey) && !strings.Contains(a, geminiKey) {
				t.Error("no key was sent")
			}
			p, _ := out["file_path"].(string)
			if b, err := os.ReadFile(p); err != nil || string(b) != string(mp4Bytes) || !strings.HasSuffix(p, ".mp4") ||
				filepath.Dir(p) != s.ts.o.Workspace.Dir() {
				t.Errorf("the saved video %q: %v", p, err)
			}
			meta, _ := out["metadata"].(map[string]any)
			if c, _ := meta["cost_usd"].(float64); !near(c, tc.wantCost) || !near(res.Spent.CostUSD, tc.wantCost) || res.Spent.Unknown || res.Spent.Estimated {
				t.Errorf("cost %v, spent %+v; want %v\n%s", meta["cost_usd"], res.Spent, tc.wantCost, res.Content)
			}
			if !strings.Contains(streamed, "in_progress, 10%") && !strings.Contains(streamed, ": running") {
				t.Errorf("no progress was streamed: %q", streamed)
			}
		})
	}
}

// TestTextToVideoGeneration: MassGen v0.1.12's text_to_video_generation, named by a
// custom_tools entry of its example configs, runs natively: sora-2 and 4 seconds by default,
// MassGen's result fields, and the cost.
func TestTextToVideoGeneration(t *testing.T) {
	s := fast(newSetup(t, "openai", "gpt-4o", config.Media{}, "openai"))
	tl, err := Custom(s.ts.o, config.CustomTool{Name: "text_to_video_generation", Function: "text_to_video_generation",
		Path: "massgen/tool/_multimodal_tools/text_to_video_generation.py"})
	if err != nil || tl.Spec.Name != "custom_tool__text_to_video_generation" {
		t.Fatalf("%v %v", tl.Spec.Name, err)
	}
	res, out, _ := runOut(t, tl, map[string]any{"prompt": "a cat on a motorcycle", "storage_path": "videos", "seconds": "4"})
	if res.IsError || out["operation"] != "generate_and_store_video_no_input_images" || out["model"] != "sora-2" || out["backend"] != "openai" {
		t.Fatalf("%s", res.Content)
	}
	if !strings.Contains(string(s.f.calls[0].Body), "4\r\n") || !near(res.Spent.CostUSD, 0.8) {
		// Asked for 4 s; the fake says it made 8, which is what is billed.
		t.Errorf("body %.400s, spent %+v", s.f.calls[0].Body, res.Spent)
	}
	p, _ := out["video_path"].(string)
	if size, _ := out["size"].(float64); filepath.Base(filepath.Dir(p)) != "videos" || int(size) != len(mp4Bytes) {
		t.Errorf("video_path %s, size %v", p, out["size"])
	}
	// A model without a list price: made, and its cost unknown rather than free.
	res, out, _ = runOut(t, tl, map[string]any{"prompt": "x", "model": "sora-3"})
	if res.IsError || out["cost"] != "unknown: no list price for sora-3" || !res.Spent.Unknown || res.Spent.CostUSD != 0 {
		t.Errorf("spent %+v\n%s", res.Spent, res.Content)
	}
	// A Veo model goes to Gemini, which needs its own key.
	res, out, _ = runOut(t, tl, map[string]any{"prompt": "x", "model": "veo-3.0-generate-001"})
	if msg, _ := out["error"].(string); !res.IsError || !strings.Contains(msg, "set GEMINI_API_KEY") {
		t.Errorf("%s", res.Content)
	}
}

// TestGenerateVideo_Hostile: a provider that never finishes, fails, sends too much or sends
// something else gives a tool error that says so, promptly, and what was spent is counted:
// a job given up on while it ran at its requested length, marked estimated.
func TestGenerateVideo_Hostile(t *testing.T) {
	jsonContent := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
	for _, tc := range []struct {
		name      string
		backend   string
		prepare   func(s setup)
		ctx       func(t *testing.T) context.Context
		want      string
		wantSpent float64
		estimated bool
	}{
		{name: "sora never completes", backend: "openai", prepare: func(s setup) { s.f.gen.pending = -1; s.ts.o.VideoWait = 30 * time.Millisecond },
			want: "openai video video_123 was still in_progress", wantSpent: 0.4, estimated: true},
		{name: "veo never completes", backend: "gemini", prepare: func(s setup) { s.f.gen.pending = -1; s.ts.o.VideoWait = 30 * time.Millisecond },
			want: "was still running after 30ms", wantSpent: 8 * 0.15, estimated: true},
		{name: "cancelled while it runs", backend: "openai", prepare: func(s setup) { s.f.gen.pending = -1 },
			ctx: func(t *testing.T) context.Context {
				ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			}, want: "the call was cut off while openai video video_123 was in_progress", wantSpent: 0.4, estimated: true},
		{name: "sora fails", backend: "openai", prepare: func(s setup) { s.f.gen.failure = "blocked by moderation for " + openaiKey },
			want: "could not make the video: blocked by moderation for [redacted]"},
		{name: "veo fails", backend: "gemini", prepare: func(s setup) { s.f.gen.failure = "prompt rejected" }, want: "could not make the video: prompt rejected"},
		{name: "create refused", backend: "openai", prepare: func(s setup) {
			s.f.fail("/v1/videos", 400, `{"error":{"message":"Invalid seconds for key `+openaiKey+`","type":"invalid_request_error"}}`)
		}, want: "openai API error: 400 Bad Request: Invalid seconds for key [redacted]"},
		{name: "check fails", backend: "openai", prepare: func(s setup) {
			s.f.fail("/v1/videos/video_123", 404, `{"error":{"message":"Video not found"}}`)
		}, want: "404 Not Found: Video not found", wantSpent: 0.4, estimated: true},
		// The caps are lowered to 1 MiB (from 60 and 64), so that the test reads little.
		{name: "sora content endless", backend: "openai", prepare: func(s setup) { s.f.gen.content = endless; s.ts.videoCap = 1 << 20 },
			want: "the video is larger than 1 MiB", wantSpent: 0.8},
		{name: "veo download endless", backend: "gemini", prepare: func(s setup) {
			s.f.gen.content = endless
			s.ts.hc.Transport = limitTransport{base: s.f.Client().Transport, max: 1 << 20}
		}, want: "the response is larger than", wantSpent: 8 * 0.15},
		{name: "content is not a video", backend: "openai", prepare: func(s setup) { s.f.gen.content = jsonContent },
			want: "sent application/json, not a video", wantSpent: 0.8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fast(newSetup(t, tc.backend, "", allOn, "openai", "gemini"))
			if tc.prepare != nil {
				tc.prepare(s)
			}
			ctx := t.Context()
			if tc.ctx != nil {
				ctx = tc.ctx(t)
			}
			start := time.Now()
			b, _ := json.Marshal(map[string]any{"prompt": "a storm", "mode": "video"})
			res := s.ts.generateMediaTool([]string{"image", "audio", "video"}).Run(ctx, string(b))
			var out map[string]any
			_ = json.Unmarshal([]byte(res.Content), &out)
			if msg, _ := out["error"].(string); !res.IsError || !strings.Contains(msg, tc.want) {
				t.Errorf("got %s\nwant an error containing %q", res.Content, tc.want)
			}
			if strings.Contains(res.Content, openaiKey) || strings.Contains(res.Content, geminiKey) {
				t.Error("a key reached the error")
			}
			if !near(res.Spent.CostUSD, tc.wantSpent) || res.Spent.Estimated != tc.estimated {
				t.Errorf("spent %+v, want %v (estimated %v)", res.Spent, tc.wantSpent, tc.estimated)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
			if n, _ := os.ReadDir(s.ts.o.Workspace.Dir()); len(n) != 9 { // newSetup's files, nothing saved
				t.Errorf("the workspace holds %d entries", len(n))
			}
		})
	}
}

// TestGenerateVideo_BadInput: arguments that cannot work are refused before anything is sent.
func TestGenerateVideo_BadInput(t *testing.T) {
	for _, tc := range []struct {
		name      string
		providers []string
		args      map[string]any
		want      string
	}{
		{"too long", []string{"openai"}, map[string]any{"prompt": "x", "mode": "video", "duration": 90}, "duration 90 is out of range"},
		{"not seconds", []string{"openai"}, map[string]any{"prompt": "x", "mode": "video", "duration": "4.5"}, "4.5\" is not a whole number of seconds"},
		{"claude makes no videos", []string{"openai"}, map[string]any{"prompt": "x", "mode": "video", "backend_type": "claude"},
			"video generation is built for openai and gemini only"},
		{"a veo model on openai", []string{"openai", "gemini"}, map[string]any{"prompt": "x", "mode": "video", "backend_type": "openai", "model": "veo-3"},
			"veo-3 is a gemini model; openai makes videos with sora-2 or sora-2-pro"},
		{"an aspect sora lacks", []string{"openai"}, map[string]any{"prompt": "x", "mode": "video", "aspect_ratio": "4:3"}, `aspect_ratio "4:3"`},
		{"a size veo cannot read", []string{"gemini"}, map[string]any{"prompt": "x", "mode": "video", "size": "big"}, `size "big"`},
		{"too many videos", []string{"openai"}, map[string]any{"prompts": []string{"a", "b", "c", "d", "e"}, "mode": "video"}, "at most 4 videos"},
		{"no key", []string{"claude"}, map[string]any{"prompt": "x", "mode": "video"},
			"no provider for videos: set GEMINI_API_KEY (or GOOGLE_API_KEY) (Veo) or OPENAI_API_KEY (Sora)"},
		{"no key for the one asked", []string{"openai"}, map[string]any{"prompt": "x", "mode": "video", "backend_type": "google"},
			"videos through gemini need a key: set GEMINI_API_KEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fast(newSetup(t, "openai", "", allOn, tc.providers...))
			res, out := run(t, s.ts.generateMediaTool([]string{"image", "audio", "video"}), tc.args)
			if msg, _ := out["error"].(string); !res.IsError || !strings.Contains(msg, tc.want) {
				t.Errorf("got %s\nwant an error containing %q", res.Content, tc.want)
			}
			if n := s.f.count(); n != 0 {
				t.Errorf("%d requests were sent", n)
			}
		})
	}
}

// TestGenerateVideo_Batch: several prompts make several videos, their costs summed.
func TestGenerateVideo_Batch(t *testing.T) {
	s := fast(newSetup(t, "openai", "", allOn, "openai"))
	res, out := run(t, s.ts.generateMediaTool([]string{"video"}), map[string]any{"prompts": []string{"dawn", "dusk"}})
	if res.IsError || out["succeeded"] != 2.0 || !near(res.Spent.CostUSD, 1.6) {
		t.Fatalf("spent %+v\n%s", res.Spent, res.Content)
	}
}
