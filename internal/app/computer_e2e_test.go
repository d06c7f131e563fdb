package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"massgen/internal/browser"
	"massgen/internal/computer"
	"massgen/internal/config"
	"massgen/internal/desktop"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/usage"
	"massgen/internal/view"
)

// MassGen's three example configs for OpenAI's and Gemini's computer use
// (massgen/configs/tools/custom_tools/computer_use_example.yaml,
// computer_use_browser_example.yaml, gemini_computer_use_example.yaml), in their shape: the
// same backends, tool entries and parameters; the system messages shortened.
const (
	cuaExample = `
agents:
  - id: "automation_agent"
    backend:
      type: "openai"
      model: "computer-use-preview"
      custom_tools:
        - name: ["computer_use"]
          category: "automation"
          path: "massgen/tool/_computer_use/computer_use_tool.py"
          function: ["computer_use"]
          default_params:
            environment: "browser"
            display_width: 1920
            display_height: 1080
            max_iterations: 30
            include_reasoning: true
            model: "computer-use-preview"
        - name: ["understand_image"]
          category: "multimodal"
          path: "massgen/tool/_multimodal_tools/understand_image.py"
          function: ["understand_image"]
    system_message: "Use the computer_use tool for tasks in a browser."
ui:
  display_type: "simple"
  logging_enabled: true
`
	cuaBrowserExample = `
agents:
  - id: "browser_automation_agent"
    backend:
      type: "openai"
      model: "computer-use-preview"
      custom_tools:
        - name: ["computer_use"]
          category: "automation"
          path: "massgen/tool/_computer_use/computer_use_tool.py"
          function: ["computer_use"]
          default_params:
            environment: "browser"
            display_width: 1920
            display_height: 1080
            max_iterations: 30
            include_reasoning: true
            model: "computer-use-preview"
            environment_config:
              browser_type: "chromium"
              headless: false
        - name: ["understand_image"]
          category: "multimodal"
          path: "massgen/tool/_multimodal_tools/understand_image.py"
          function: ["understand_image"]
    system_message: "You automate a browser with computer_use."
ui:
  display_type: "rich_terminal"
  logging_enabled: true
`
	geminiCUAExample = `
agents:
  - id: "gemini_automation_agent"
    backend:
      type: "openai"
      model: "gpt-4.1"
      custom_tools:
        - name: ["gemini_computer_use"]
          category: "automation"
          path: "massgen/tool/_gemini_computer_use/gemini_computer_use_tool.py"
          function: ["gemini_computer_use"]
          description: >
            Automate browser tasks with Gemini's computer use model.
          preset_args:
            environment: "browser"
            display_width: 1440
            display_height: 900
            max_iterations: 25
            include_thoughts: true
            environment_config:
              headless: false
              browser_type: "chromium"
        - name: ["understand_image"]
          category: "multimodal"
          path: "massgen/tool/_multimodal_tools/understand_image.py"
          function: ["understand_image"]
    system_message: "Use gemini_computer_use for browser tasks."
display:
  type: "rich_terminal"
`
)

// cuaSite is the page the tools act on: a red button over the window's top half, a text field
// below; its server records the page's reports.
func cuaSite(t *testing.T) (*httptest.Server, func() string) {
	var mu sync.Mutex
	var seen []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><body style="margin:0"><button style="position:absolute;left:0;top:0;width:100%;height:50%;background:#c00;border:0"
				onclick="fetch('/clicked')">go</button><input autofocus style="position:absolute;top:60%;width:100%;height:20%"
				onkeyup="if (event.key === 'Enter') fetch('/typed?v=' + encodeURIComponent(this.value))"></body>`)
		case "/favicon.ico":
		default:
			mu.Lock()
			seen = append(seen, r.URL.RequestURI())
			mu.Unlock()
		}
	}))
	t.Cleanup(s.Close)
	return s, func() string { mu.Lock(); defer mu.Unlock(); return fmt.Sprint(seen) }
}

// TestE2E_ComputerUseConfigs: MassGen's computer_use and gemini_computer_use example configs
// run to a final answer, their agent on a local fake of OpenAI's Responses API that calls the
// tool, the tool's model on a local fake of the Responses API (computer_call items) or of
// Gemini's generateContent (function calls), acting on a real Chromium on a virtual desktop:
// the page gets the click and the text, the tool's answer is its result, its screenshots are
// events, its calls are in the run's cost, and no key reaches the logs.
func TestE2E_ComputerUseConfigs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Xvfb and chromium")
	}
	miss := desktop.Missing()
	if _, err := os.Stat(browser.DefaultChromium); err != nil {
		miss += " " + browser.DefaultChromium
	}
	if miss != "" {
		if os.Getenv("CI") != "" {
			t.Fatal("missing " + miss)
		}
		t.Skip("missing " + miss)
	}
	const answer = "Pressed the button and typed hi."
	for _, c := range []struct {
		name, yaml, tool, agentModel string
		gemini                       bool
	}{
		{"computer_use_example", cuaExample, "custom_tool__computer_use", "computer-use-preview", false},
		{"computer_use_browser_example", cuaBrowserExample, "custom_tool__computer_use", "computer-use-preview", false},
		{"gemini_computer_use_example", geminiCUAExample, "custom_tool__gemini_computer_use", "gpt-4.1", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, rep := config.Parse(c.name+".yaml", []byte(c.yaml))
			if !rep.OK() {
				t.Fatal(rep.Text())
			}
			site, seen := cuaSite(t)
			var agentCalls, toolCalls atomic.Int32
			var bad []string
			var bmu sync.Mutex
			fail := func(format string, args ...any) {
				bmu.Lock()
				bad = append(bad, fmt.Sprintf(format, args...))
				bmu.Unlock()
			}
			// The agent calls the tool once, then answers and votes as the other e2e agents do.
			player := func(ans string, offered []string, enum []any, answered bool, body map[string]any) move {
				called := false
				for _, it := range list(body["input"]) {
					called = called || obj(it)["type"] == "function_call" && obj(it)["name"] == c.tool
				}
				if !called && strings.Contains(fmt.Sprint(offered), c.tool) {
					args, _ := json.Marshal(map[string]any{"task": "Press the red button, then type hi in the field and press Enter.", "url": site.URL + "/"})
					return move{tool: c.tool, args: string(args)}
				}
				return decide(ans, offered, enum, answered, body)
			}
			agent := openaiResponsesAs("The task is done.", player)
			openaiFake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body map[string]any
				if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
					http.Error(w, "bad json", 400)
					return
				}
				if r.Header.Get("Authorization") != "Bearer "+keys["OPENAI_API_KEY"] {
					fail("openai request without the key")
				}
				if body["stream"] == true {
					agentCalls.Add(1)
					w.Header().Set("Content-Type", "text/event-stream")
					agent(w, body)
					return
				}
				n := toolCalls.Add(1)
				if tl := obj(list(body["tools"])[0]); tl["type"] != "computer_use_preview" || tl["display_width"] != float64(1920) {
					fail("tool request %d: tools %v", n, body["tools"])
				}
				call := func(action string) string {
					return fmt.Sprintf(`{"type":"computer_call","id":"cu_%d","call_id":"call_%d","action":%s,"pending_safety_checks":[],"status":"completed"}`, n, n, action)
				}
				var item string
				switch n {
				case 1:
					item = call(`{"type":"click","button":"left","x":960,"y":300}`)
				case 2:
					item = call(`{"type":"click","button":"left","x":960,"y":780}`)
				case 3:
					item = call(`{"type":"type","text":"hi"}`)
				case 4:
					item = call(`{"type":"keypress","keys":["ENTER"]}`)
				default:
					item = fmt.Sprintf(`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}`, answer)
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"resp_%d","object":"response","created_at":1,"status":"completed","model":"computer-use-preview","output":[%s],`+
					`"usage":{"input_tokens":1000,"input_tokens_details":{"cached_tokens":0},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1050}}`, n, item)
			}))
			defer openaiFake.Close()
			geminiFake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				if r.Header.Get("X-Goog-Api-Key") != keys["GEMINI_API_KEY"] || !strings.HasSuffix(r.URL.Path, ":generateContent") ||
					!bytes.Contains(b, []byte(`"ENVIRONMENT_BROWSER"`)) {
					fail("gemini request %s: %.200s", r.URL.Path, b)
				}
				var part string
				switch toolCalls.Add(1) {
				case 1:
					part = `{"functionCall":{"name":"click_at","args":{"x":500,"y":333}}}`
				case 2:
					part = `{"functionCall":{"name":"type_text_at","args":{"x":500,"y":722,"text":"hi"}}}`
				default:
					part = fmt.Sprintf(`{"text":%q}`, answer)
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"candidates":[{"content":{"role":"model","parts":[%s]},"finishReason":"STOP","index":0}],`+
					`"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":50,"totalTokenCount":1050}}`, part)
			}))
			defer geminiFake.Close()

			root := t.TempDir()
			var out bytes.Buffer
			res, err := Run(t.Context(), cfg, Options{Question: "Press the button and type hi.", Logging: true, LogRoot: filepath.Join(root, "logs"),
				WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)},
				Getenv: env(map[string]string{"OPENAI_API_KEY": keys["OPENAI_API_KEY"], "OPENAI_BASE_URL": openaiFake.URL + "/v1",
					"GEMINI_API_KEY": keys["GEMINI_API_KEY"], "GOOGLE_GEMINI_BASE_URL": geminiFake.URL})})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || !strings.Contains(res.FinalAnswer, "The task is done.") {
				t.Fatalf("result %+v\n%s", res.Result, out.String())
			}
			bmu.Lock()
			if len(bad) > 0 {
				t.Errorf("wrong requests:\n%s", strings.Join(bad, "\n"))
			}
			bmu.Unlock()
			if r := toolResults(t, res.Dir)[c.tool]; r.IsError || r.Content != answer {
				t.Fatalf("the tool's result: %+v\n%s", r, out.String())
			}
			for deadline := time.Now().Add(10 * time.Second); !strings.Contains(seen(), "/clicked") || !strings.Contains(seen(), "/typed?v=hi"); time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the page saw %s, want the click and the text", seen())
				}
			}
			evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			images := 0
			for _, e := range evs {
				if im, ok := e.Payload.(event.ToolImage); ok && im.Tool == c.tool && strings.HasPrefix(im.Thumb, "data:image/jpeg;base64,") {
					images++
				}
			}
			// One screenshot to start from, one after each action done.
			if want := int(toolCalls.Load()); images != want {
				t.Errorf("%d screenshot events of the tool, want %d", images, want)
			}
			// The run's cost is the agent's calls and the tool's.
			toolBackend, toolModel := "openai", computer.OpenAIModel
			if c.gemini {
				toolBackend, toolModel = "gemini", computer.GeminiModel
			}
			want := float64(agentCalls.Load())*usage.Cost("openai", c.agentModel, provider.Usage{InputTokens: usageIn, OutputTokens: usageOut}) +
				float64(toolCalls.Load())*usage.Cost(toolBackend, toolModel, provider.Usage{InputTokens: 1000, OutputTokens: 50})
			var status struct {
				Usage struct {
					Cost float64 `json:"cost_usd"`
				} `json:"usage"`
			}
			readJSON(t, filepath.Join(res.Dir, "status.json"), &status)
			if !near(status.Usage.Cost, want) {
				t.Errorf("the run cost %v, want %v (%d agent calls, %d tool calls)", status.Usage.Cost, want, agentCalls.Load(), toolCalls.Load())
			}
			// The logs and the run's folder (not the Chromium profile beside the workspaces,
			// whose lock files are links to nowhere).
			assertNoKeys(t, filepath.Join(root, "logs"))
			assertNoKeys(t, res.Dir)
		})
	}
}
