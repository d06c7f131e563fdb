package app

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"massgen/internal/browser"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/view"
)

// TestE2E_BrowserAutomation: a scripted agent drives MassGen's browser_automation, named as
// MassGen's configs name it, against a local site: it reads the list the page's script builds,
// fills and submits the form (the server gets the value), and a blocked domain is refused by
// the browser; the screenshots are in the winner's workspace and are events with thumbnails.
func TestE2E_BrowserAutomation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts chromium")
	}
	if _, err := os.Stat(browser.DefaultChromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var mu sync.Mutex
	var posted []string
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mu.Lock()
			posted = append(posted, r.FormValue("q"))
			mu.Unlock()
			fmt.Fprint(w, "<title>Sent</title><p id=ok>sent</p>")
			return
		}
		fmt.Fprint(w, `<title>Shop</title><div id=list></div><form method=post><input name=q id=q><button id=go>Go</button></form>
<script>setTimeout(() => { document.getElementById('list').innerHTML = '<b class=price>42 EUR</b>'; }, 200)</script>`)
	}))
	defer site.Close()
	blocked := strings.Replace(site.URL, "127.0.0.1", "localhost", 1)
	cfg, rep := config.Parse("browser.yaml", []byte(fmt.Sprintf(`
agents:
  - id: shopper
    backend:
      type: scripted
      cwd: ws
      custom_tools:
        - name: ["browser_automation"]
          category: "automation"
          path: "massgen/tool/_browser_automation/browser_automation_tool.py"
          function: ["browser_automation"]
          preset_args: {blocked_domains: [localhost]}
          default_params: {headless: false, screenshot: true}
      tool_calls:
        - {name: custom_tool__browser_automation, args: {task: read, action: extract, url: %q, selector: .price}}
        - {name: custom_tool__browser_automation, args: {task: fill, action: type, selector: "#q", text: "two shirts"}}
        - {name: custom_tool__browser_automation, args: {task: send, action: click, selector: "#go", output_filename: sent.png}}
        - {name: custom_tool__browser_automation, args: {task: sneak, action: navigate, url: %q}}
      answers: ["Ordered."]
      vote: agent1
orchestrator: {final_presentation: verbatim}
`, site.URL+"/", blocked+"/")))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	root := t.TempDir()
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "Buy two shirts.", Logging: true, LogRoot: filepath.Join(root, "logs"),
		WorkspaceRoot: filepath.Join(root, "ws"), Sinks: []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var results []event.ToolResult
	var images []event.ToolImage
	for _, e := range evs {
		switch p := e.Payload.(type) {
		case event.ToolResult:
			if p.Tool == "custom_tool__browser_automation" {
				results = append(results, p)
			}
		case event.ToolImage:
			images = append(images, p)
		}
	}
	if len(results) != 4 {
		t.Fatalf("%d browser results, want 4\n%s", len(results), out.String())
	}
	if r := results[0]; r.IsError || !strings.Contains(r.Content, "42 EUR") {
		t.Errorf("extract: %+v", r)
	}
	if r := results[2]; r.IsError || !strings.Contains(r.Content, `"current_title": "Sent"`) {
		t.Errorf("click: %+v", r)
	}
	if r := results[3]; !r.IsError || !strings.Contains(r.Content, "blocked_domains") {
		t.Errorf("a blocked domain was not refused: %+v", r)
	}
	mu.Lock()
	got := fmt.Sprint(posted)
	mu.Unlock()
	if got != "[two shirts]" {
		t.Errorf("the site received %s, want the typed text once", got)
	}
	if len(images) != 3 || !strings.HasPrefix(images[0].Thumb, "data:image/jpeg;base64,") || images[2].Path != filepath.Join("screenshots", "sent.png") {
		t.Errorf("screenshot events: %+v", images)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "final", "shopper", "workspace", "screenshots", "sent.png")); err != nil {
		t.Errorf("the screenshot is not in the winner's workspace: %v", err)
	}
}
