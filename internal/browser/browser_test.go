package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"massgen/internal/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// needChromium skips where Debian's chromium is missing, except in CI (.ci/run installs it).
func needChromium(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("the browser tests start chromium")
	}
	if _, err := os.Stat(DefaultChromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is missing (apt-get install chromium)", DefaultChromium)
		}
		t.Skipf("%s is missing (apt-get install chromium)", DefaultChromium)
	}
}

// site is a test server: a page whose script builds its content and a form whose submission
// the server records, a page that never loads, and a download bomb.
type site struct {
	*httptest.Server
	mu        sync.Mutex
	submitted []string
	hits      map[string]int
	bombSent  chan int64
}

const formPage = `<!doctype html><html><head><title>Form</title></head><body>
<div id="out"></div>
<form method="post" action="/submit"><input name="who" id="who"><button type="submit" id="go">Send</button></form>
<script>
  setTimeout(() => {
    const ul = document.createElement('ul');
    for (const c of ['alpha', 'beta', 'gamma']) { const li = document.createElement('li'); li.className = 'item'; li.textContent = c.toUpperCase() + '-' + (c.length * 7); ul.appendChild(li); }
    document.getElementById('out').appendChild(ul);
  }, 300);
</script></body></html>`

func newSite(t *testing.T) *site {
	s := &site{hits: map[string]int{}, bombSent: make(chan int64, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.hit(r.URL.Path)
		fmt.Fprint(w, formPage)
	})
	mux.HandleFunc("POST /submit", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.submitted = append(s.submitted, r.FormValue("who"))
		s.mu.Unlock()
		fmt.Fprintf(w, "<title>Thanks</title><p id=thanks>Thanks, %s</p>", strings.ReplaceAll(r.FormValue("who"), "<", ""))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		s.hit("/hang")
		<-r.Context().Done() // never answers
	})
	mux.HandleFunc("/bomb", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="bomb.bin"`)
		chunk := make([]byte, 64<<10)
		var n int64
		defer func() { s.bombSent <- n }()
		for n < 1<<30 { // stops when the browser hangs up
			m, err := w.Write(chunk)
			n += int64(m)
			if err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Disposition", `attachment; filename="../../notes.txt"`)
		fmt.Fprint(w, "small file")
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func (s *site) hit(p string) {
	s.mu.Lock()
	s.hits[p]++
	s.mu.Unlock()
}

func (s *site) count(p string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[p]
}

func openLazy(t *testing.T, o Options) *Lazy {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	l := NewLazy(o)
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func call(t *testing.T, tl tool.Tool, args map[string]any) (map[string]any, tool.Result) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res := tl.Run(ctx, string(b))
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content), &out); err != nil && !res.IsError {
		t.Fatalf("result is not JSON: %v\n%s", err, res.Content)
	}
	return out, res
}

// TestAutomation_PageFormAndSession drives one browser over several calls: the page's
// script-built list is read, the form is filled and submitted (the server sees the value),
// and the page the submission opened is still there at the next call.
func TestAutomation_PageFormAndSession(t *testing.T) {
	needChromium(t)
	s := newSite(t)
	dir := t.TempDir()
	l := openLazy(t, Options{Dir: dir})
	tl := AutomationTool("custom_tool__browser_automation", l)

	out, res := call(t, tl, map[string]any{"task": "read", "action": "extract", "url": s.URL + "/", "selector": "li.item"})
	if res.IsError {
		t.Fatalf("extract: %s", res.Content)
	}
	got, _ := json.Marshal(out["extracted_text"])
	if string(got) != `["ALPHA-35","BETA-28","GAMMA-35"]` {
		t.Fatalf("extracted %s, want the list the script built", got)
	}
	if out["current_title"] != "Form" {
		t.Errorf("title %v", out["current_title"])
	}
	shot, _ := out["screenshot_filename"].(string)
	if b, err := os.ReadFile(filepath.Join(dir, shot)); err != nil || len(b) < 100 || string(b[1:4]) != "PNG" {
		t.Fatalf("screenshot %q not saved as a PNG in the workspace: %v", shot, err)
	}

	if _, res := call(t, tl, map[string]any{"task": "fill", "action": "type", "selector": "#who", "text": "Ada Lovelace"}); res.IsError {
		t.Fatalf("type: %s", res.Content)
	}
	out, res = call(t, tl, map[string]any{"task": "send", "action": "click", "selector": "#go", "screenshot": false})
	if res.IsError {
		t.Fatalf("click: %s", res.Content)
	}
	s.mu.Lock()
	submitted := append([]string(nil), s.submitted...)
	s.mu.Unlock()
	if len(submitted) != 1 || submitted[0] != "Ada Lovelace" {
		t.Fatalf("the server received %q, want one submission of the typed name", submitted)
	}
	if out["current_title"] != "Thanks" {
		t.Errorf("after the click the page is %v, want the submission's answer", out["current_title"])
	}
	out, res = call(t, tl, map[string]any{"task": "again", "action": "extract", "selector": "#thanks", "output_filename": "thanks.png"})
	if res.IsError || fmt.Sprint(out["extracted_text"]) != "[Thanks, Ada Lovelace]" {
		t.Fatalf("the next call does not see the same page: %s", res.Content)
	}
	if _, err := os.Stat(filepath.Join(dir, ScreenshotDir, "thanks.png")); err != nil {
		t.Errorf("output_filename: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ProfileDir)); err != nil {
		t.Errorf("the profile is not in the workspace: %v", err)
	}
}

// TestAutomation_Refusals: a blocked domain is refused by the browser itself, also when a
// page loads it by script; so is a host outside allowed_domains; file: URLs are never opened.
func TestAutomation_Refusals(t *testing.T) {
	needChromium(t)
	s := newSite(t)
	port := s.Listener.Addr().(*net.TCPAddr).Port
	p, err := NewPolicy(nil, []string{"127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	l := openLazy(t, Options{Policy: p})
	tl := AutomationTool("b", l)
	_, res := call(t, tl, map[string]any{"task": "go", "action": "navigate", "url": fmt.Sprintf("http://127.0.0.1:%d/", port)})
	if !res.IsError || !strings.Contains(res.Content, "blocked_domains") {
		t.Fatalf("a blocked host was not refused: %s", res.Content)
	}
	if n := s.count("/"); n != 0 {
		t.Fatalf("the blocked server got %d requests", n)
	}

	// localhost is allowed, 127.0.0.1 is not: the page at localhost loads, its script's
	// request to 127.0.0.1 never reaches the server.
	p, err = NewPolicy([]string{"localhost"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l2 := openLazy(t, Options{Policy: p})
	tl2 := AutomationTool("b", l2)
	if _, res := call(t, tl2, map[string]any{"task": "go", "action": "navigate", "url": fmt.Sprintf("http://localhost:%d/", port), "screenshot": false}); res.IsError {
		t.Fatalf("an allowed host was refused: %s", res.Content)
	}
	sess, _ := l2.Session(context.Background())
	before := s.count("/sneak")
	_, _, _ = sess.Extract(context.Background(), "body") // let the page settle
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := sess.call(ctx, 10*time.Second, func(tctx context.Context) error {
		return runJS(tctx, fmt.Sprintf(`fetch("http://127.0.0.1:%d/sneak").then(() => "through", e => "refused")`, port))
	}); err != nil {
		t.Fatal(err)
	}
	if n := s.count("/sneak"); n != before {
		t.Fatalf("a script reached a host outside allowed_domains (%d requests)", n-before)
	}
	_, res = call(t, tl2, map[string]any{"task": "go", "action": "navigate", "url": "http://127.0.0.1:1/"})
	if !res.IsError || !strings.Contains(res.Content, "not in allowed_domains") {
		t.Fatalf("a host outside allowed_domains was not refused: %s", res.Content)
	}
	_, res = call(t, tl2, map[string]any{"task": "go", "action": "navigate", "url": "file:///etc/passwd"})
	if !res.IsError || !strings.Contains(res.Content, "file: URLs are not opened") {
		t.Fatalf("a file: URL was not refused: %s", res.Content)
	}
}

// TestAutomation_Failures: a page that never loads is a tool error after the timeout, and the
// browser still works afterwards; an unreachable server is a clear tool error.
func TestAutomation_Failures(t *testing.T) {
	needChromium(t)
	s := newSite(t)
	l := openLazy(t, Options{NavTimeout: 2 * time.Second})
	tl := AutomationTool("b", l)
	if _, res := call(t, tl, map[string]any{"task": "warm up", "action": "navigate", "url": s.URL + "/", "screenshot": false}); res.IsError {
		t.Fatal(res.Content)
	}
	start := time.Now()
	_, res := call(t, tl, map[string]any{"task": "hang", "action": "navigate", "url": s.URL + "/hang"})
	if !res.IsError || !strings.Contains(res.Content, "did not load within 2s") {
		t.Fatalf("a page that never loads: %s", res.Content)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the timeout took %s", d)
	}
	if _, res := call(t, tl, map[string]any{"task": "ok", "action": "navigate", "url": s.URL + "/"}); res.IsError {
		t.Fatalf("the browser does not work after a timeout: %s", res.Content)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	_, res = call(t, tl, map[string]any{"task": "dead", "action": "navigate", "url": "http://" + dead + "/"})
	if !res.IsError || !strings.Contains(res.Content, "ERR_CONNECTION_REFUSED") {
		t.Fatalf("an unreachable server: %s", res.Content)
	}
}

// TestAutomation_Downloads: a download bomb is refused and its partial file removed; a small
// download lands in the workspace's downloads folder under a plain name.
func TestAutomation_Downloads(t *testing.T) {
	needChromium(t)
	s := newSite(t)
	dir := t.TempDir()
	l := openLazy(t, Options{Dir: dir, MaxDownload: 1 << 20})
	tl := AutomationTool("b", l)
	_, res := call(t, tl, map[string]any{"task": "bomb", "action": "navigate", "url": s.URL + "/bomb", "screenshot": false})
	if !res.IsError || !strings.Contains(res.Content, "larger than the cap") {
		t.Fatalf("a download bomb was not refused: %s", res.Content)
	}
	select {
	case n := <-s.bombSent:
		if n >= 1<<30 {
			t.Fatalf("the browser read the whole bomb (%d bytes)", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the browser did not hang up on the bomb")
	}
	time.Sleep(300 * time.Millisecond)
	var total int64
	_ = filepath.Walk(filepath.Join(dir, DownloadDir), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			total += fi.Size()
		}
		return nil
	})
	if total != 0 {
		t.Fatalf("%d bytes of the refused download are left in the workspace", total)
	}
	out, res := call(t, tl, map[string]any{"task": "small", "action": "navigate", "url": s.URL + "/small", "screenshot": false})
	if res.IsError {
		t.Fatalf("a small download: %s", res.Content)
	}
	// The page suggested "../../notes.txt": the file stays in the downloads folder.
	files, _ := filepath.Glob(filepath.Join(dir, DownloadDir, "*notes.txt"))
	if len(files) != 1 {
		t.Fatalf("the download is not in the downloads folder (%v): %v", out["download"], files)
	}
	if b, err := os.ReadFile(files[0]); err != nil || string(b) != "small file" {
		t.Fatalf("the download holds %q (%v)", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err == nil {
		t.Fatal("the download escaped the downloads folder")
	}
	if note, _ := out["download"].(string); !strings.Contains(note, filepath.Base(files[0])) {
		t.Errorf("the result does not say where the download went: %q", note)
	}
}

func runJS(ctx context.Context, js string) error {
	_, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	return err
}
