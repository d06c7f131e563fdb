package computer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"massgen/internal/browser"
	"massgen/internal/provider"
	"massgen/internal/tool"
	"massgen/internal/usage"
)

// api is a local fake of Anthropic's Messages API whose every answer the test writes: answer
// gets the request's number (from 1) and its decoded body.
type api struct {
	mu     sync.Mutex
	n      int
	bodies []map[string]any
	answer func(w http.ResponseWriter, r *http.Request, n int)
}

func (a *api) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	a.mu.Lock()
	a.n++
	n := a.n
	a.bodies = append(a.bodies, body)
	a.mu.Unlock()
	a.answer(w, r, n)
}

func (a *api) requests() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// message is a whole Messages API response.
func message(n int, content string, in, out int) string {
	return fmt.Sprintf(`{"id":"msg_%d","type":"message","role":"assistant","model":"claude-sonnet-4-5",%s,"stop_sequence":null,"usage":{"input_tokens":%d,"output_tokens":%d}}`,
		n, content, in, out)
}

func reply(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

// price is what the price table says in and out tokens of the tool's model cost.
func price(in, out int64) float64 {
	return usage.Cost("claude", ClaudeModel, provider.Usage{InputTokens: in, OutputTokens: out})
}

func desktops(t *testing.T, url string) *Desktops {
	t.Helper()
	ds := NewDesktops(Options{Backends: map[string]Backend{Claude: {APIKey: "sk-ant-test-SECRET", BaseURL: url}},
		Browser: browser.Options{Dir: t.TempDir()}})
	t.Cleanup(func() { _ = ds.Close() })
	return ds
}

func runTask(ctx context.Context, ds *Desktops, iterations int) tool.Result {
	args, _ := json.Marshal(map[string]any{"query": "look", "display_width": 800, "display_height": 600, "max_iterations": iterations})
	return ClaudeTool("c", ds).Run(ctx, string(args))
}

const cursorTurn = `"content":[{"type":"tool_use","id":"tu_1","name":"computer","input":{"action":"cursor_position"}}],"stop_reason":"tool_use"`

// TestClaude_CutOffCallsAreCounted: a model call that is paid for counts in the tool's cost
// however it ends. A call cut off (the run cancelled while Claude works, an answer cut in the
// middle) is estimated and marked so; a max_tokens stop is counted as reported; a call the API
// refused (a 400) costs nothing.
func TestClaude_CutOffCallsAreCounted(t *testing.T) {
	needDesktop(t)
	one := price(1000, 50)
	cases := []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request, n int, cancel func())
		check  func(t *testing.T, res tool.Result)
	}{
		{"cancelled while Claude works", func(w http.ResponseWriter, r *http.Request, n int, cancel func()) {
			if n == 1 {
				reply(w, message(n, cursorTurn, 1000, 50))
				return
			}
			cancel()
			<-r.Context().Done() // Claude is still working when massgen hangs up
		}, func(t *testing.T, res tool.Result) {
			if !res.Spent.Estimated || res.Spent.CostUSD <= one {
				t.Errorf("cost %+v: want the first call (%g) and an estimate of the cut one, marked estimated", res.Spent, one)
			}
		}},
		{"answer cut in the middle", func(w http.ResponseWriter, r *http.Request, n int, cancel func()) {
			if n == 1 {
				reply(w, message(n, cursorTurn, 1000, 50))
				return
			}
			full := message(n, `"content":[{"type":"text","text":"`+strings.Repeat("words ", 2000)+`"}],"stop_reason":"end_turn"`, 1000, 3000)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(full)))
			_, _ = io.WriteString(w, full[:len(full)/2])
			w.(http.Flusher).Flush()
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
		}, func(t *testing.T, res tool.Result) {
			if !res.IsError || !res.Spent.Estimated || res.Spent.CostUSD <= one {
				t.Errorf("%+v: want an error, the first call (%g) and an estimate of the cut one, marked estimated", res, one)
			}
		}},
		{"max_tokens", func(w http.ResponseWriter, r *http.Request, n int, cancel func()) {
			reply(w, message(n, `"content":[{"type":"text","text":"a long thought"}],"stop_reason":"max_tokens"`, 1000, 4096))
		}, func(t *testing.T, res tool.Result) {
			if !res.IsError || !strings.Contains(res.Content, "max_tokens") {
				t.Errorf("result %+v: want an error saying max_tokens", res)
			}
			if want := price(1000, 4096); res.Spent.Estimated || math.Abs(res.Spent.CostUSD-want) > 1e-12 {
				t.Errorf("cost %+v, want %g as reported", res.Spent, want)
			}
		}},
		{"refused by the API", func(w http.ResponseWriter, r *http.Request, n int, cancel func()) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}`)
		}, func(t *testing.T, res tool.Result) {
			if !res.IsError || res.Spent != (provider.Usage{}) {
				t.Errorf("%+v: a refused call costs nothing", res)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			a := &api{}
			a.answer = func(w http.ResponseWriter, r *http.Request, n int) { c.answer(w, r, n, cancel) }
			srv := httptest.NewServer(a)
			defer srv.Close()
			res := runTask(ctx, desktops(t, srv.URL), 5)
			c.check(t, res)
		})
	}
}

// TestClaude_LoopIsBounded: a model that never stops asking for actions, forty at a time, gets
// max_iterations calls and no more, each paid call counted, and only the first actions of each
// turn carried out.
func TestClaude_LoopIsBounded(t *testing.T) {
	needDesktop(t)
	var blocks []string
	for i := range 40 {
		blocks = append(blocks, fmt.Sprintf(`{"type":"tool_use","id":"tu_%d","name":"computer","input":{"action":"cursor_position"}}`, i))
	}
	a := &api{}
	a.answer = func(w http.ResponseWriter, r *http.Request, n int) {
		reply(w, message(n, `"content":[`+strings.Join(blocks, ",")+`],"stop_reason":"tool_use"`, 1000, 50))
	}
	srv := httptest.NewServer(a)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := runTask(ctx, desktops(t, srv.URL), 3)
	if !res.IsError || !strings.Contains(res.Content, "max_iterations (3)") {
		t.Fatalf("result %+v: want max_iterations reached", res)
	}
	if n := a.requests(); n != 3 {
		t.Fatalf("%d model calls, want 3", n)
	}
	if want := 3 * price(1000, 50); math.Abs(res.Spent.CostUSD-want) > 1e-12 || res.Spent.Estimated {
		t.Errorf("cost %+v, want %g for the three calls", res.Spent, want)
	}
	a.mu.Lock()
	last := a.bodies[2]
	a.mu.Unlock()
	msgs, _ := last["messages"].([]any)
	results, _ := msgs[len(msgs)-1].(map[string]any)["content"].([]any)
	done, refused := 0, 0
	for _, r := range results {
		if r.(map[string]any)["is_error"] == true {
			refused++
		} else {
			done++
		}
	}
	if len(results) != 40 || done != maxActions || refused != 40-maxActions {
		t.Errorf("%d results, %d carried out, %d refused: want 40, %d, %d", len(results), done, refused, maxActions, 40-maxActions)
	}
}
