package computer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"massgen/internal/browser"
	"massgen/internal/desktop"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func needDesktop(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the computer-use tests start Xvfb and chromium")
	}
	miss := desktop.Missing()
	if _, err := os.Stat(browser.DefaultChromium); err != nil {
		miss += " " + browser.DefaultChromium
	}
	if miss != "" {
		if os.Getenv("CI") != "" {
			t.Fatalf("missing %s", miss)
		}
		t.Skipf("missing %s", miss)
	}
}

// fakeClaude speaks Anthropic's Messages API for computer use: each request is checked and
// answered with the next step of script.
type fakeClaude struct {
	t      *testing.T
	mu     sync.Mutex
	step   int
	script []func(req map[string]any) string // returns the response's content and stop_reason as JSON fields
	errs   []string
}

func (f *fakeClaude) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	fail := func(format string, args ...any) {
		f.errs = append(f.errs, fmt.Sprintf("request %d: ", f.step+1)+fmt.Sprintf(format, args...))
	}
	if r.URL.Path != "/v1/messages" {
		fail("path %s", r.URL.Path)
	}
	// The SDK's v2 sends the key as a bearer token, v1 as x-api-key.
	if r.Header.Get("X-Api-Key") != "sk-ant-test-SECRET" && r.Header.Get("Authorization") != "Bearer sk-ant-test-SECRET" {
		fail("no key")
	}
	if !strings.Contains(r.Header.Get("Anthropic-Beta"), "computer-use-2025-01-24") {
		fail("anthropic-beta %q", r.Header.Get("Anthropic-Beta"))
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		fail("body: %v", err)
	}
	tools, _ := req["tools"].([]any)
	if len(tools) != 1 {
		fail("tools %v", tools)
	} else if tl := tools[0].(map[string]any); tl["type"] != "computer_20250124" || tl["name"] != "computer" ||
		tl["display_width_px"] != float64(800) || tl["display_height_px"] != float64(600) {
		fail("computer tool %v", tl)
	}
	if f.step >= len(f.script) {
		fail("one request too many")
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"too many"}}`, 400)
		return
	}
	content := f.script[f.step](req)
	f.step++
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5",%s,"stop_sequence":null,"usage":{"input_tokens":1000,"output_tokens":50}}`, f.step, content)
}

// lastResult is the tool_result block of the request's last (user) message.
func lastResult(req map[string]any) map[string]any {
	msgs, _ := req["messages"].([]any)
	if len(msgs) == 0 {
		return nil
	}
	last, _ := msgs[len(msgs)-1].(map[string]any)
	blocks, _ := last["content"].([]any)
	if len(blocks) == 0 {
		return nil
	}
	b, _ := blocks[0].(map[string]any)
	return b
}

func toolUse(id, input string) string {
	return fmt.Sprintf(`"content":[{"type":"text","text":"Next."},{"type":"tool_use","id":%q,"name":"computer","input":%s}],"stop_reason":"tool_use"`, id, input)
}

// TestClaude_DesktopLoop: Claude (a local fake of the Messages API) takes a screenshot, sees
// the page's red button in it, clicks it, types into the field and presses Return; the page's
// server sees the click and the text, the screenshots are in the workspace, and Claude's
// answer is the tool's result, with its calls' cost.
func TestClaude_DesktopLoop(t *testing.T) {
	needDesktop(t)
	var pmu sync.Mutex
	var page []string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><body style="margin:0"><button style="position:absolute;left:0;top:0;width:100%;height:50%;background:#c00;border:0"
				onclick="fetch('/clicked')">go</button><input id=t autofocus style="position:absolute;top:60%;width:100%;height:20%"
				onkeyup="if (event.key === 'Enter') fetch('/typed?v=' + encodeURIComponent(this.value))"></body>`)
		case "/favicon.ico":
		default:
			pmu.Lock()
			page = append(page, r.URL.RequestURI())
			pmu.Unlock()
		}
	}))
	defer site.Close()

	var sawRed bool
	fake := &fakeClaude{t: t}
	fake.script = []func(map[string]any) string{
		func(req map[string]any) string { return toolUse("tu_1", `{"action":"screenshot"}`) },
		func(req map[string]any) string {
			r := lastResult(req)
			img, _ := r["content"].([]any)
			if r["tool_use_id"] != "tu_1" || len(img) != 1 {
				return `"content":[{"type":"text","text":"no screenshot came back"}],"stop_reason":"end_turn"`
			}
			src := img[0].(map[string]any)["source"].(map[string]any)
			data, _ := base64.StdEncoding.DecodeString(src["data"].(string))
			if pic, err := png.Decode(bytes.NewReader(data)); err == nil && src["media_type"] == "image/png" {
				r, g, b, _ := pic.At(400, 200).RGBA()
				sawRed = r>>8 > 0xb0 && g>>8 < 0x20 && b>>8 < 0x20
			}
			return toolUse("tu_2", `{"action":"left_click","coordinate":[400,200]}`)
		},
		func(req map[string]any) string {
			return toolUse("tu_3", `{"action":"left_click","coordinate":[400,440]}`)
		},
		func(req map[string]any) string { return toolUse("tu_4", `{"action":"type","text":"hi claude"}`) },
		func(req map[string]any) string { return toolUse("tu_5", `{"action":"key","text":"Return"}`) },
		func(req map[string]any) string {
			return toolUse("tu_6", `{"action":"left_click","coordinate":[5000,10]}`)
		},
		func(req map[string]any) string {
			if r := lastResult(req); r["is_error"] != true {
				return `"content":[{"type":"text","text":"an off-screen click was not an error"}],"stop_reason":"end_turn"`
			}
			return `"content":[{"type":"text","text":"Clicked the button and sent the text."}],"stop_reason":"end_turn"`
		},
	}
	api := httptest.NewServer(fake)
	defer api.Close()

	dir := t.TempDir()
	ds := NewDesktops(Options{Backends: map[string]Backend{Claude: {APIKey: "sk-ant-test-SECRET", BaseURL: api.URL}},
		Browser: browser.Options{Dir: dir}})
	defer ds.Close()
	tl := ClaudeTool("custom_tool__claude_computer_use", ds)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args, _ := json.Marshal(map[string]any{"query": "press the button", "display_width": 800, "display_height": 600,
		"url": site.URL + "/", "environment": "browser"})
	res := tl.Run(ctx, string(args))
	fake.mu.Lock()
	errs := fake.errs
	fake.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("the requests were wrong:\n%s", strings.Join(errs, "\n"))
	}
	if res.IsError || res.Content != "Clicked the button and sent the text." {
		t.Fatalf("result: %+v", res)
	}
	if !sawRed {
		t.Error("the screenshot Claude got does not show the page")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		pmu.Lock()
		got := fmt.Sprint(page)
		pmu.Unlock()
		if strings.Contains(got, "/clicked") && strings.Contains(got, "/typed?v=hi%20claude") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's server saw %s, want the click and the typed text", got)
		}
	}
	if res.Spent.CostUSD <= 0 && !res.Spent.Unknown {
		t.Errorf("the model calls were not counted: %+v", res.Spent)
	}
	if shots, _ := os.ReadDir(dir + "/" + browser.ScreenshotDir); len(shots) != 1 {
		t.Errorf("%d screenshots in the workspace, want 1", len(shots))
	}
}

// TestClaude_Refusals: no key, Docker and other environments and bad limits are tool errors
// that say what to fix, before any desktop starts.
func TestClaude_Refusals(t *testing.T) {
	ds := NewDesktops(Options{Browser: browser.Options{Dir: t.TempDir()}})
	defer ds.Close()
	tl := ClaudeTool("c", ds)
	for args, want := range map[string]string{
		`{"query":"x"}`: "set ANTHROPIC_API_KEY",
		`{"query":"x","environment_config":{"container_name":"cua-container"}}`: "Docker environments",
		`{"query":"x","environment":"windows"}`:                                 "not built",
		`{"query":""}`:                                                          "query is required",
		`{"query":"x","max_iterations":1000}`:                                   "max_iterations",
	} {
		if res := tl.Run(context.Background(), args); !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: %+v, want an error saying %q", args, res, want)
		}
	}
}
