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

const openaiKey = "sk-openai-test-SECRET"

// cuaResponse is a whole Responses API response holding output; usage 1000 in, 50 out unless
// noUsage.
func cuaResponse(n int, output string, noUsage bool) string {
	u := `,"usage":{"input_tokens":1000,"input_tokens_details":{"cached_tokens":0},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1050}`
	if noUsage {
		u = ""
	}
	return fmt.Sprintf(`{"id":"resp_%d","object":"response","created_at":1,"status":"completed","model":"computer-use-preview","output":[%s]%s}`, n, output, u)
}

// computerCall is a computer_call item; checks are pending safety checks as JSON objects.
func computerCall(id, action string, checks ...string) string {
	return fmt.Sprintf(`{"type":"computer_call","id":"cu_%s","call_id":"call_%s","action":%s,"pending_safety_checks":[%s],"status":"completed"}`,
		id, id, action, strings.Join(checks, ","))
}

func outputText(text string) string {
	return fmt.Sprintf(`{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":%q,"annotations":[]}]}`, text)
}

// checkCUA is what every computer-use request must be: the key, the model, the
// computer_use_preview tool on the 800x600 browser, truncation auto, and after the first the
// previous response's id.
func checkCUA(r *http.Request, req map[string]any, n int) []string {
	var bad []string
	if r.URL.Path != "/v1/responses" || r.Header.Get("Authorization") != "Bearer "+openaiKey {
		bad = append(bad, fmt.Sprintf("path %s, key sent %v", r.URL.Path, r.Header.Get("Authorization") == "Bearer "+openaiKey))
	}
	if req["model"] != "computer-use-preview" || req["truncation"] != "auto" {
		bad = append(bad, fmt.Sprintf("model %v, truncation %v", req["model"], req["truncation"]))
	}
	tools, _ := req["tools"].([]any)
	if len(tools) != 1 {
		bad = append(bad, fmt.Sprintf("tools %v", tools))
	} else if tl := tools[0].(map[string]any); tl["type"] != "computer_use_preview" || tl["display_width"] != float64(800) ||
		tl["display_height"] != float64(600) || tl["environment"] != "browser" {
		bad = append(bad, fmt.Sprintf("computer tool %v", tl))
	}
	if want := fmt.Sprintf("resp_%d", n-1); n > 1 && req["previous_response_id"] != want {
		bad = append(bad, fmt.Sprintf("previous_response_id %v, want %s", req["previous_response_id"], want))
	}
	return bad
}

// inputItems are the request's input items of type typ.
func inputItems(req map[string]any, typ string) []map[string]any {
	var out []map[string]any
	items, _ := req["input"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		if m["type"] == typ || typ == "message" && m["role"] != nil && m["type"] == nil {
			out = append(out, m)
		}
	}
	return out
}

// notes is the text of the request's input messages (what massgen says beside screenshots).
func notes(req map[string]any) string {
	var b strings.Builder
	for _, m := range inputItems(req, "message") {
		switch c := m["content"].(type) {
		case string:
			b.WriteString(c)
		case []any:
			for _, p := range c {
				if t, _ := p.(map[string]any)["text"].(string); t != "" {
					b.WriteString(t)
				}
			}
		}
	}
	return b.String()
}

// screenshotOf is the base64 PNG of a computer_call_output, or "".
func screenshotOf(out map[string]any) string {
	o, _ := out["output"].(map[string]any)
	u, _ := o["image_url"].(string)
	if o["type"] != "computer_screenshot" || !strings.HasPrefix(u, "data:image/png;base64,") {
		return ""
	}
	return strings.TrimPrefix(u, "data:image/png;base64,")
}

func openaiDesktops(t *testing.T, url string, allowed ...string) *Desktops {
	t.Helper()
	policy, err := browser.NewPolicy(allowed, nil)
	if err != nil {
		t.Fatal(err)
	}
	ds := NewDesktops(Options{Backends: map[string]Backend{OpenAI: {APIKey: openaiKey, BaseURL: url + "/v1"}},
		Browser: browser.Options{Dir: t.TempDir(), Policy: policy}})
	t.Cleanup(func() { _ = ds.Close() })
	return ds
}

func runOpenAI(ctx context.Context, ds *Desktops, args map[string]any) tool.Result {
	base := map[string]any{"task": "press the button", "display_width": 800, "display_height": 600, "environment": "browser"}
	for k, v := range args {
		base[k] = v
	}
	raw, _ := json.Marshal(base)
	return OpenAITool("custom_tool__computer_use", ds).Run(ctx, string(raw))
}

// TestOpenAI_DesktopLoop: OpenAI's computer-use model (a local fake of the Responses API,
// driven through openai-go) sees the page in the first screenshot, clicks the button (with an
// irrelevant_domain check massgen acknowledges, allowed_domains confining the browser), clicks
// the field, types and presses Enter; an off-screen click and an unknown action are said back
// beside the screenshot, and its answer is the tool's result, each call priced.
func TestOpenAI_DesktopLoop(t *testing.T) {
	needDesktop(t)
	page := newSite(t)
	a := &api{}
	var errs []string
	check := func(cond bool, format string, args ...any) {
		if !cond {
			errs = append(errs, fmt.Sprintf(format, args...))
		}
	}
	a.answer = func(w http.ResponseWriter, r *http.Request, n int) {
		a.mu.Lock()
		req := a.bodies[n-1]
		errs = append(errs, checkCUA(r, req, n)...)
		a.mu.Unlock()
		outs := inputItems(req, "computer_call_output")
		if n > 1 {
			check(len(outs) == 1 && outs[0]["call_id"] == fmt.Sprintf("call_%d", n-1) && screenshotOf(outs[0]) != "",
				"request %d: outputs %.300v", n, outs)
		}
		var item string
		switch n {
		case 1:
			msgs := inputItems(req, "message")
			content, _ := msgs[0]["content"].([]any)
			check(len(content) == 2, "first input %v", msgs)
			if len(content) == 2 {
				img, _ := content[1].(map[string]any)["image_url"].(string)
				check(content[0].(map[string]any)["text"] == "press the button" && strings.HasPrefix(img, "data:image/png;base64,iVBOR"),
					"the first request has not the task and a screenshot")
			}
			item = computerCall("1", `{"type":"click","button":"left","x":400,"y":200}`,
				`{"id":"sc_1","code":"irrelevant_domain","message":"This page is not on the task's domain."}`)
		case 2:
			if len(outs) == 1 {
				acks, _ := outs[0]["acknowledged_safety_checks"].([]any)
				check(len(acks) == 1 && obj(acks[0])["id"] == "sc_1", "the safety check was not acknowledged: %v", outs[0])
				check(redAt(screenshotOf(outs[0]), 400, 200), "the screenshot after the click does not show the page's button")
			}
			item = computerCall("2", `{"type":"click","button":"left","x":400,"y":440}`)
		case 3:
			item = computerCall("3", `{"type":"type","text":"hi openai"}`)
		case 4:
			item = computerCall("4", `{"type":"keypress","keys":["ENTER"]}`)
		case 5:
			item = computerCall("5", `{"type":"click","button":"left","x":5000,"y":10}`)
		case 6:
			check(strings.Contains(notes(req), "(5000, 10) is off the 800x600 screen"), "the off-screen click was not said: %q", notes(req))
			item = computerCall("6", `{"type":"teleport"}`)
		default:
			check(strings.Contains(notes(req), `unknown action "teleport"`), "the unknown action was not said: %q", notes(req))
			item = outputText("Clicked the button and sent the text.")
		}
		reply(w, cuaResponse(n, item, false))
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	ds := openaiDesktops(t, srv.URL, "127.0.0.1")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res := runOpenAI(ctx, ds, map[string]any{"url": page.URL + "/"})
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(errs) > 0 {
		t.Fatalf("the requests were wrong:\n%s", strings.Join(errs, "\n"))
	}
	if res.IsError || res.Content != "Clicked the button and sent the text." || a.n != 7 {
		t.Fatalf("result %+v after %d calls", res, a.n)
	}
	page.waitFor(t, "/clicked", "/typed?v=hi%20openai")
	want := 7 * usage.Cost("openai", OpenAIModel, provider.Usage{InputTokens: 1000, OutputTokens: 50})
	if want == 0 || math.Abs(res.Spent.CostUSD-want) > 1e-12 || res.Spent.Estimated || res.Spent.Unknown {
		t.Errorf("cost %+v, want %g for seven calls", res.Spent, want)
	}
	if shots, _ := os.ReadDir(ds.o.Browser.Dir + "/" + browser.ScreenshotDir); len(shots) != 7 {
		t.Errorf("%d screenshots in the workspace, want 7 (the first and one a call)", len(shots))
	}
}

// TestOpenAI_SafetyChecks: a check massgen does not acknowledge stops the task before the
// action, saying which check and why: malicious_instructions always, a domain check when no
// allowed_domains confines the browser.
func TestOpenAI_SafetyChecks(t *testing.T) {
	needDesktop(t)
	page := newSite(t)
	for _, c := range []struct {
		name, code string
		allowed    []string
		want       string
	}{
		{"injection", "malicious_instructions", []string{"127.0.0.1"}, "malicious_instructions (The page tells you to click.)"},
		{"domain, unconfined", "irrelevant_domain", nil, "allowed_domains confines the browser"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &api{}
			a.answer = func(w http.ResponseWriter, r *http.Request, n int) {
				reply(w, cuaResponse(n, computerCall("1", `{"type":"click","button":"left","x":400,"y":200}`,
					fmt.Sprintf(`{"id":"sc_1","code":%q,"message":"The page tells you to click."}`, c.code)), false))
			}
			srv := httptest.NewServer(a)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res := runOpenAI(ctx, openaiDesktops(t, srv.URL, c.allowed...), map[string]any{"url": page.URL + "/"})
			if !res.IsError || !strings.Contains(res.Content, c.want) || !strings.Contains(res.Content, "not acknowledged") || a.requests() != 1 {
				t.Fatalf("result %+v after %d calls: want the task stopped saying %q", res, a.requests(), c.want)
			}
			time.Sleep(300 * time.Millisecond)
			if strings.Contains(page.requests(), "/clicked") {
				t.Error("the click was carried out")
			}
		})
	}
}

// TestOpenAI_Limits: what a model or a provider that misbehaves gets. One desktop serves
// every case (the same size), as it serves an agent's calls.
func TestOpenAI_Limits(t *testing.T) {
	needDesktop(t)
	one := usage.Cost("openai", OpenAIModel, provider.Usage{InputTokens: 1000, OutputTokens: 50})
	move := `{"type":"move","x":10,"y":10}`
	var many, batch []string
	for i := range maxActions + 1 {
		many = append(many, computerCall(fmt.Sprint(i), move))
	}
	for range 20 {
		batch = append(batch, move)
	}
	cases := []struct {
		name       string
		iterations int
		answer     func(w http.ResponseWriter, r *http.Request, n int, req map[string]any)
		check      func(t *testing.T, res tool.Result, calls int, last map[string]any)
	}{
		{"a model that never stops", 3, func(w http.ResponseWriter, r *http.Request, n int, req map[string]any) {
			reply(w, cuaResponse(n, computerCall(fmt.Sprint(n), move), false))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if !res.IsError || !strings.Contains(res.Content, "max_iterations (3)") || calls != 3 {
				t.Fatalf("result %+v after %d calls: want max_iterations reached at 3", res, calls)
			}
			if math.Abs(res.Spent.CostUSD-3*one) > 1e-12 || res.Spent.Estimated {
				t.Errorf("cost %+v, want %g", res.Spent, 3*one)
			}
		}},
		{"too many calls in a turn", 5, func(w http.ResponseWriter, r *http.Request, n int, req map[string]any) {
			reply(w, cuaResponse(n, strings.Join(many, ","), false))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if !res.IsError || !strings.Contains(res.Content, "at most 16") || calls != 1 {
				t.Fatalf("result %+v after %d calls", res, calls)
			}
		}},
		{"too many batched actions", 5, func(w http.ResponseWriter, r *http.Request, n int, req map[string]any) {
			if n == 1 {
				reply(w, cuaResponse(n, `{"type":"computer_call","id":"cu_1","call_id":"call_1","actions":[`+strings.Join(batch, ",")+`],"pending_safety_checks":[],"status":"completed"}`, false))
				return
			}
			reply(w, cuaResponse(n, outputText("moved"), false))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if res.IsError || calls != 2 || strings.Count(notes(last), "not carried out: at most 16 actions a turn") != 4 {
				t.Fatalf("result %+v after %d calls; last notes %q: want 4 of 20 actions refused", res, calls, notes(last))
			}
		}},
		{"a provider that answers 500", 5, func(w http.ResponseWriter, r *http.Request, n int, req map[string]any) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"error":{"message":"overloaded; your key %s","type":"server_error"}}`, r.Header.Get("Authorization"))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if !res.IsError || !strings.Contains(res.Content, "500") || strings.Contains(res.Content, openaiKey) || calls != 3 {
				t.Fatalf("result %+v after %d calls: want the 500 (retried twice), without the key", res, calls)
			}
			if res.Spent != (provider.Usage{}) {
				t.Errorf("refused calls cost %+v", res.Spent)
			}
		}},
		{"no usage reported", 5, func(w http.ResponseWriter, r *http.Request, n int, req map[string]any) {
			reply(w, cuaResponse(n, outputText("nothing to do"), true))
		}, func(t *testing.T, res tool.Result, calls int, last map[string]any) {
			if res.IsError || res.Content != "nothing to do" || !res.Spent.Estimated || res.Spent.CostUSD <= 0 {
				t.Fatalf("result %+v: want the answer, its call estimated", res)
			}
		}},
	}
	a := &api{}
	srv := httptest.NewServer(a)
	defer srv.Close()
	ds := openaiDesktops(t, srv.URL)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a.mu.Lock()
			a.n, a.bodies = 0, nil
			a.answer = func(w http.ResponseWriter, r *http.Request, n int) {
				a.mu.Lock()
				req := a.bodies[n-1]
				a.mu.Unlock()
				c.answer(w, r, n, req)
			}
			a.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res := runOpenAI(ctx, ds, map[string]any{"max_iterations": c.iterations})
			a.mu.Lock()
			calls, last := a.n, a.bodies[len(a.bodies)-1]
			a.mu.Unlock()
			c.check(t, res, calls, last)
		})
	}
}

// TestKeyCombo: the key names OpenAI's and Gemini's models use become xdotool combinations;
// anything else is refused with what to use.
func TestKeyCombo(t *testing.T) {
	for keys, want := range map[string]string{
		"ENTER": "Return", "CTRL+A": "ctrl+a", "Control+Shift+T": "ctrl+shift+t", "ArrowDown": "Down",
		"cmd+/": "super+slash", "F5": "F5", "esc": "Escape", "PageDown": "Page_Down",
		"ctrl+$(reboot)": "", "": "", "a+b+c+d+e+f+g+h+i": "",
	} {
		got, err := keyCombo(strings.Split(keys, "+"))
		if keys == "" {
			got, err = keyCombo(nil)
		}
		if want == "" {
			if err == nil {
				t.Errorf("%q: %q, want an error", keys, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", keys, got, err, want)
		}
	}
}
