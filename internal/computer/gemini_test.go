package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"massgen/internal/browser"
	"massgen/internal/provider"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

const geminiKey = "AIza-gemini-test-SECRET"

// geminiResponse is a whole generateContent response holding parts; usage 1000 in, 50 out
// unless noUsage.
func geminiResponse(parts string, noUsage bool) string {
	u := `,"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":50,"totalTokenCount":1050}`
	if noUsage {
		u = ""
	}
	return fmt.Sprintf(`{"candidates":[{"content":{"role":"model","parts":[%s]},"finishReason":"STOP","index":0}]%s,"modelVersion":%q}`, parts, u, GeminiModel)
}

func fcall(name, args string) string {
	return fmt.Sprintf(`{"functionCall":{"id":"fc_%s","name":%q,"args":%s}}`, name, name, args)
}

// checkGemini is what every request must be: the key, the model's path, Gemini's computer
// use tool for a browser.
func checkGemini(r *http.Request, req map[string]any) []string {
	var bad []string
	if r.URL.Path != "/v1beta/models/"+GeminiModel+":generateContent" || r.Header.Get("X-Goog-Api-Key") != geminiKey {
		bad = append(bad, fmt.Sprintf("path %s, key sent %v", r.URL.Path, r.Header.Get("X-Goog-Api-Key") == geminiKey))
	}
	tools, _ := req["tools"].([]any)
	if len(tools) != 1 {
		bad = append(bad, fmt.Sprintf("tools %v", tools))
	} else if cu, _ := tools[0].(map[string]any)["computerUse"].(map[string]any); cu["environment"] != "ENVIRONMENT_BROWSER" {
		bad = append(bad, fmt.Sprintf("tool %v", tools[0]))
	}
	return bad
}

// funcResponses are the function responses of the request's last content.
func funcResponses(req map[string]any) []map[string]any {
	contents, _ := req["contents"].([]any)
	if len(contents) == 0 {
		return nil
	}
	last, _ := contents[len(contents)-1].(map[string]any)
	parts, _ := last["parts"].([]any)
	var out []map[string]any
	for _, p := range parts {
		if fr, ok := p.(map[string]any)["functionResponse"].(map[string]any); ok && last["role"] == "user" {
			out = append(out, fr)
		}
	}
	return out
}

// shotOf is the base64 PNG a function response carries, or "".
func shotOf(fr map[string]any) string {
	parts, _ := fr["parts"].([]any)
	if len(parts) != 1 {
		return ""
	}
	in, _ := parts[0].(map[string]any)["inlineData"].(map[string]any)
	if in["mimeType"] != "image/png" {
		return ""
	}
	s, _ := in["data"].(string)
	return s
}

// shotsIn counts the screenshots of function responses in the whole request.
func shotsIn(req map[string]any) int {
	n := 0
	contents, _ := req["contents"].([]any)
	for _, c := range contents {
		parts, _ := c.(map[string]any)["parts"].([]any)
		for _, p := range parts {
			if fr, ok := p.(map[string]any)["functionResponse"].(map[string]any); ok && shotOf(fr) != "" {
				n++
			}
		}
	}
	return n
}

func geminiDesktops(t *testing.T, url string) *Desktops {
	t.Helper()
	ds := NewDesktops(Options{Backends: map[string]Backend{Gemini: {APIKey: geminiKey, BaseURL: url}},
		Browser: browser.Options{Dir: t.TempDir()}})
	t.Cleanup(func() { _ = ds.Close() })
	return ds
}

func runGemini(ctx context.Context, ds *Desktops, args map[string]any) tool.Result {
	base := map[string]any{"task": "press the button", "display_width": 800, "display_height": 600, "environment": "browser"}
	for k, v := range args {
		base[k] = v
	}
	raw, _ := json.Marshal(base)
	return GeminiTool("custom_tool__gemini_computer_use", ds).Run(ctx, string(raw))
}

// TestGemini_DesktopLoop: Gemini's computer-use model (a local fake of generateContent, driven
// through google.golang.org/genai) clicks the button and types into the field on its
// 1000x1000 grid, opens a page and goes back; a point off the grid and an unknown function
// come back as errors in their function responses; old screenshots are dropped from the
// conversation; its answer, without its thoughts, is the tool's result.
func TestGemini_DesktopLoop(t *testing.T) {
	needDesktop(t)
	page := newSite(t)
	a := &api{}
	var errs []string
	check := func(cond bool, format string, args ...any) {
		if !cond {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	url := func(fr map[string]any) string { u, _ := obj(fr["response"])["url"].(string); return u }
	a.answer = func(w http.ResponseWriter, r *http.Request, n int) {
		a.mu.Lock()
		req := a.bodies[n-1]
		errs = append(errs, checkGemini(r, req)...)
		a.mu.Unlock()
		frs := funcResponses(req)
		check(shotsIn(req) <= keptShots, "request %d carries %d screenshots, want at most %d", n, shotsIn(req), keptShots)
		var parts string
		switch n {
		case 1:
			contents, _ := req["contents"].([]any)
			first, _ := obj(contents[0])["parts"].([]any)
			check(len(first) == 2 && obj(first[0])["text"] == "press the button" && obj(obj(first[1])["inlineData"])["mimeType"] == "image/png",
				"the first request has not the task and a screenshot: %.200v", first)
			check(obj(obj(req["generationConfig"])["thinkingConfig"])["includeThoughts"] == true, "thoughts not asked for: %v", req["generationConfig"])
			parts = `{"text":"The red button is at the top.","thought":true},` + fcall("click_at", `{"x":500,"y":333}`)
		case 2:
			check(len(frs) == 1 && frs[0]["name"] == "click_at" && strings.HasSuffix(url(frs[0]), "/") && redAt(shotOf(frs[0]), 400, 200),
				"the click's response %.300v", frs)
			parts = fcall("type_text_at", `{"x":500,"y":733,"text":"hi gemini"}`)
		case 3:
			parts = fcall("navigate", fmt.Sprintf(`{"url":%q}`, page.URL+"/second"))
		case 4:
			check(len(frs) == 1 && strings.HasSuffix(url(frs[0]), "/second"), "navigate's response %.300v", frs)
			parts = fcall("go_back", `{}`)
		case 5:
			check(len(frs) == 1 && strings.HasSuffix(url(frs[0]), "/") && shotOf(frs[0]) != "", "go_back's response %.300v", frs)
			parts = fcall("scroll_document", `{"direction":"down"}`) + "," + fcall("click_at", `{"x":1500,"y":10}`)
		case 6:
			check(len(frs) == 2 && shotOf(frs[0]) != "" && obj(frs[0]["response"])["error"] == nil, "the scroll's response %.300v", frs)
			if len(frs) == 2 {
				e, _ := obj(frs[1]["response"])["error"].(string)
				check(strings.Contains(e, "off the grid") && shotOf(frs[1]) == "", "the off-grid click's response %.300v", frs[1])
			}
			parts = fcall("teleport", `{}`)
		default:
			e := ""
			if len(frs) == 1 {
				e, _ = obj(frs[0]["response"])["error"].(string)
			}
			check(strings.Contains(e, `unknown function "teleport"`), "the unknown function's response %.300v", frs)
			parts = `{"text":"I should say I am done.","thought":true},{"text":"Typed and went back."}`
		}
		reply(w, geminiResponse(parts, false))
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	ds := geminiDesktops(t, srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res := runGemini(ctx, ds, map[string]any{"initial_url": page.URL + "/"})
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("the requests were wrong:\n%s", strings.Join(errs, "\n"))
	}
	if res.IsError || res.Content != "Typed and went back." || a.n != 7 {
		t.Fatalf("result %+v after %d calls", res, a.n)
	}
	page.waitFor(t, "/clicked", "/typed?v=hi%20gemini", "/second")
	want := 7 * usage.Cost("gemini", GeminiModel, provider.Usage{InputTokens: 1000, OutputTokens: 50})
	if want == 0 || math.Abs(res.Spent.CostUSD-want) > 1e-12 || res.Spent.Estimated {
		t.Errorf("cost %+v, want %g for seven calls", res.Spent, want)
	}
	if shots, _ := os.ReadDir(ds.o.Browser.Dir + "/" + browser.ScreenshotDir); len(shots) != 6 {
		t.Errorf("%d screenshots in the workspace, want 6 (the first and one for each of the five actions done)", len(shots))
	}
}

// TestGemini_Limits: what a model or a provider that misbehaves gets, on one desktop.
func TestGemini_Limits(t *testing.T) {
	needDesktop(t)
	page := newSite(t)
	one := usage.Cost("gemini", GeminiModel, provider.Usage{InputTokens: 1000, OutputTokens: 50})
	var many []string
	for range 20 {
		many = append(many, fcall("hover_at", `{"x":10,"y":10}`))
	}
	cases := []struct {
		name       string
		iterations int
		answer     func(w http.ResponseWriter, r *http.Request, n int)
		check      func(t *testing.T, res tool.Result, calls int, last map[string]any)
	}{
		{"a confirmation asked for", 5, func(w http.ResponseWriter, r *http.Request, n int) {
			reply(w, geminiResponse(fcall("click_at", `{"x":500,"y":333,"safety_decision":{"decision":"require_confirmation","explanation":"It buys something."}}`), false))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if !res.IsError || !strings.Contains(res.Content, "It buys something.") || !strings.Contains(res.Content, "not done") || calls != 1 {
				t.Fatalf("result %+v after %d calls: want the task stopped before the click", res, calls)
			}
			time.Sleep(300 * time.Millisecond)
			if strings.Contains(page.requests(), "/clicked") {
				t.Error("the click was carried out")
			}
		}},
		{"a model that never stops", 3, func(w http.ResponseWriter, r *http.Request, n int) {
			reply(w, geminiResponse(fcall("hover_at", `{"x":10,"y":10}`), false))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if !res.IsError || !strings.Contains(res.Content, "max_iterations (3)") || calls != 3 {
				t.Fatalf("result %+v after %d calls: want max_iterations reached at 3", res, calls)
			}
			if math.Abs(res.Spent.CostUSD-3*one) > 1e-12 {
				t.Errorf("cost %+v, want %g", res.Spent, 3*one)
			}
		}},
		{"too many calls in a turn", 5, func(w http.ResponseWriter, r *http.Request, n int) {
			if n == 1 {
				reply(w, geminiResponse(strings.Join(many, ","), false))
				return
			}
			reply(w, geminiResponse(`{"text":"hovered"}`, false))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			frs := funcResponses(last)
			refused := 0
			for _, fr := range frs {
				if e, _ := obj(fr["response"])["error"].(string); strings.Contains(e, "at most 16 actions a turn") {
					refused++
				}
			}
			if res.IsError || calls != 2 || len(frs) != 20 || refused != 4 {
				t.Fatalf("result %+v after %d calls, %d responses, %d refused: want 20 responses, 4 refused", res, calls, len(frs), refused)
			}
		}},
		{"a provider that answers 500", 5, func(w http.ResponseWriter, r *http.Request, n int) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"error":{"code":500,"message":"overloaded; your key %s","status":"INTERNAL"}}`, r.Header.Get("X-Goog-Api-Key"))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if !res.IsError || !strings.Contains(res.Content, "500") || strings.Contains(res.Content, geminiKey) || calls != 3 {
				t.Fatalf("result %+v after %d calls: want the 500 (tried three times), without the key", res, calls)
			}
			if res.Spent != (provider.Usage{}) {
				t.Errorf("refused calls cost %+v", res.Spent)
			}
		}},
		{"no usage reported", 5, func(w http.ResponseWriter, r *http.Request, n int) {
			reply(w, geminiResponse(`{"text":"nothing to do"}`, true))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if res.IsError || res.Content != "nothing to do" || !res.Spent.Estimated || res.Spent.CostUSD <= 0 {
				t.Fatalf("result %+v: want the answer, its call estimated", res)
			}
		}},
	}
	a := &api{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	ds := geminiDesktops(t, srv.URL)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.mu.Lock()
			a.n, a.bodies, a.answer = 0, nil, c.answer
			a.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res := runGemini(ctx, ds, map[string]any{"max_iterations": c.iterations, "url": page.URL + "/"})
			a.mu.Lock()
			calls, last := a.n, a.bodies[len(a.bodies)-1]
			a.mu.Unlock()
			c.check(t, res, calls, last)
		})
	}
}

// TestGeminiSteps: Gemini's functions on its 1000x1000 grid become steps on a 1440x900 screen.
func TestGeminiSteps(t *testing.T) {
	for _, c := range []struct {
		name, args string
		want       string // the steps as %+v, or the start of the error
	}{
		{"click_at", `{"x":500,"y":500}`, "[{kind:click at:0x"},
		{"click_at", `{"x":999,"y":0}`, ""},
		{"click_at", `{"x":1000,"y":0}`, "(1000, 0) is off the grid"},
		{"click_at", `{"x":-1,"y":0}`, "(-1, 0) is off the grid"},
		{"click_at", `{"y":0}`, "click_at needs x and y"},
		{"type_text_at", `{"x":1,"y":1,"text":"a","press_enter":false,"clear_before_typing":false}`, ""},
		{"key_combination", `{"keys":"Control+Shift+T"}`, "[{kind:key at:<nil> path:[] button: count:0 text:ctrl+shift+t"},
		{"key_combination", `{"keys":"Control+;rm"}`, `";rm" is not a key name`},
		{"scroll_at", `{"x":500,"y":500,"direction":"up","magnitude":800}`, ""},
		{"scroll_at", `{"x":500,"y":500,"magnitude":1e9}`, "magnitude 1e+09 is out of range"},
		{"navigate", `{}`, "navigate needs url"},
		{"navigate", `{"url":"example.com"}`, "[{kind:navigate at:<nil> path:[] button: count:0 text:https://example.com"},
		{"drag_and_drop", `{"x":0,"y":0,"destination_x":999,"destination_y":2000}`, "(999, 2000) is off the grid"},
		{"teleport", `{}`, `unknown function "teleport"`},
	} {
		var args map[string]any
		_ = json.Unmarshal([]byte(c.args), &args)
		steps, err := geminiSteps(c.name, args, 1440, 900)
		got := fmt.Sprintf("%+v", steps)
		if err != nil {
			got = err.Error()
		}
		wantErr := c.want != "" && !strings.HasPrefix(c.want, "[")
		if (err != nil) != wantErr || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s %s: %s, want %q", c.name, c.args, got, c.want)
		}
		for _, s := range steps {
			if err := s.check(1440, 900); err != nil {
				t.Errorf("%s %s: a step off the screen: %v", c.name, c.args, err)
			}
		}
	}
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
