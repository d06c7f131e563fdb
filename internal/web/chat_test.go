package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/app"
	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
)

type completionResp struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int64 `json:"prompt_tokens"`
		CompletionTokens    int64 `json:"completion_tokens"`
		TotalTokens         int64 `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	MassGen *massgenInfo `json:"massgen"`
}

func chatBody(model string, stream bool, msgs ...string) map[string]any {
	var m []map[string]string
	for i := 0; i+1 < len(msgs); i += 2 {
		m = append(m, map[string]string{"role": msgs[i], "content": msgs[i+1]})
	}
	b := map[string]any{"model": model, "messages": m}
	if stream {
		b["stream"] = true
	}
	return b
}

func TestModels_ListsTheTeams(t *testing.T) {
	e := newEnv(t, nil)
	r := e.get("/v1/models")
	list := decode[struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}](t, r)
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
		if m.Object != "model" || m.OwnedBy != "massgen" || m.Created == 0 {
			t.Errorf("model %+v", m)
		}
	}
	if want := []string{"demo", "fail", "hang", "secret", "slowfail", "verbatim"}; list.Object != "list" || !slices.Equal(ids, want) {
		t.Errorf("models %q %v, want list %v", list.Object, ids, want)
	}
	if m := decode[model](t, e.get("/v1/models/demo")); m.ID != "demo" {
		t.Errorf("GET /v1/models/demo: %+v", m)
	}
	wantError(t, e.get("/v1/models/nope"), http.StatusNotFound, "model_not_found")
}

func TestChat_CompletionIsTheFinalAnswerWithTheTeamsUsage(t *testing.T) {
	e := newEnv(t, nil)
	r := e.post("/v1/chat/completions", chatBody("demo", false,
		"system", "ignored: the agents keep their own system messages",
		"user", "What is the capital of France?"))
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	c := decode[completionResp](t, r)
	if !strings.HasPrefix(c.ID, "chatcmpl-") || c.Object != "chat.completion" || c.Model != "demo" || c.Created == 0 || len(c.Choices) != 1 {
		t.Fatalf("completion %s", r.body)
	}
	m := c.MassGen
	if m == nil || m.Winner == "" || m.Status != event.StatusCompleted || !strings.HasPrefix(m.LogDir, m.SessionID+"/turn_1") {
		t.Fatalf("massgen object %+v", m)
	}
	ch := c.Choices[0]
	if ch.Message.Role != "assistant" || ch.FinishReason == nil || *ch.FinishReason != "stop" {
		t.Errorf("choice %+v", ch)
	}
	if want := e.answerFile(m.LogDir, m.Winner); ch.Message.Content != want || want == "" {
		t.Errorf("content %q, answer file %q", ch.Message.Content, want)
	}
	evs := e.turnEvents(m.LogDir)
	u := usageOf(evs)
	got := c.Usage
	if got == nil || u.InputTokens == 0 || got.PromptTokens != u.InputTokens || got.CompletionTokens != u.OutputTokens ||
		got.TotalTokens != u.InputTokens+u.OutputTokens || got.PromptTokensDetails.CachedTokens != u.CachedInputTokens ||
		got.CompletionTokensDetails.ReasoningTokens != u.ReasoningTokens {
		t.Errorf("usage %+v, events sum %+v", got, u)
	}
	start := evs[0].Payload.(event.SessionStarted)
	if start.Question != "What is the capital of France?" || len(start.History) != 0 {
		t.Errorf("session started with %q, history %v", start.Question, start.History)
	}
}

func TestChat_EarlierMessagesBecomeTheHistory(t *testing.T) {
	e := newEnv(t, nil)
	body := map[string]any{"model": "demo", "messages": []any{
		map[string]any{"role": "developer", "content": "ignored"},
		map[string]any{"role": "user", "content": []any{map[string]string{"type": "text", "text": "What is the capital of France?"}}},
		map[string]any{"role": "assistant", "content": "Paris."},
		map[string]any{"role": "user", "content": "And its population?"},
		map[string]any{"role": "system", "content": "a trailing system message is ignored too"},
	}}
	r := e.post("/v1/chat/completions", body)
	c := decode[completionResp](t, r)
	if r.status != http.StatusOK || c.MassGen == nil {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	start := e.turnEvents(c.MassGen.LogDir)[0].Payload.(event.SessionStarted)
	want := []provider.Message{{Role: provider.RoleUser, Content: "What is the capital of France?"}, {Role: provider.RoleAssistant, Content: "Paris."}}
	if start.Question != "And its population?" || !cmp.Equal(start.History, want) {
		t.Errorf("question %q, history (-want +got):\n%s", start.Question, cmp.Diff(want, start.History))
	}
}

// streamChat posts a streaming request and returns the chunks' JSON, the raw data lines and
// the response.
func streamChat(t *testing.T, e *env, body map[string]any) ([]completionResp, []string, response) {
	t.Helper()
	r := e.post("/v1/chat/completions", body)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d %s: %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	data := sseData(t, r.body)
	var chunks []completionResp
	for _, d := range data {
		if d == "[DONE]" {
			continue
		}
		var c completionResp
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %q: %v", d, err)
		}
		chunks = append(chunks, c)
	}
	return chunks, data, r
}

func TestChat_StreamingSendsThePresentationAsChunks(t *testing.T) {
	e := newEnv(t, nil)
	body := chatBody("demo", true, "user", "What is the capital of France?")
	body["stream_options"] = map[string]bool{"include_usage": true}
	chunks, data, _ := streamChat(t, e, body)
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("last data %q, want [DONE]", data[len(data)-1])
	}
	if len(chunks) < 5 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	first, fin, use := chunks[0], chunks[len(chunks)-2], chunks[len(chunks)-1]
	if first.Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk %+v has no role", first)
	}
	var content strings.Builder
	deltas := 0
	for _, c := range chunks {
		if c.ID != first.ID || c.Object != "chat.completion.chunk" || c.Model != "demo" || !strings.HasPrefix(c.ID, "chatcmpl-") {
			t.Fatalf("chunk %+v", c)
		}
		if len(c.Choices) == 1 && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
			content.WriteString(*c.Choices[0].Delta.Content)
			deltas++
		}
	}
	if fin.Choices[0].FinishReason == nil || *fin.Choices[0].FinishReason != "stop" {
		t.Errorf("finish chunk %+v", fin)
	}
	if len(use.Choices) != 0 || use.Usage == nil || use.Usage.TotalTokens == 0 {
		t.Fatalf("usage chunk %+v", use)
	}
	if deltas < 3 {
		t.Errorf("the answer came in %d deltas; want it streamed", deltas)
	}
	// The session's own record says what the answer and usage are.
	e.waitIdle()
	list := decode[struct{ Sessions []summary }](t, e.get("/api/sessions"))
	if len(list.Sessions) != 1 {
		t.Fatalf("sessions %+v", list.Sessions)
	}
	s := list.Sessions[0]
	if want := e.answerFile(s.ID, s.Winner); content.String() != want {
		t.Errorf("streamed %q, answer file %q", content.String(), want)
	}
	if u := usageOf(e.turnEvents(s.ID)); use.Usage.PromptTokens != u.InputTokens || use.Usage.CompletionTokens != u.OutputTokens {
		t.Errorf("usage %+v, events %+v", use.Usage, u)
	}
}

func TestChat_StreamingAVerbatimAnswerSendsItWhole(t *testing.T) {
	e := newEnv(t, nil)
	chunks, _, _ := streamChat(t, e, chatBody("verbatim", true, "user", "What is the capital of France?"))
	var contents []string
	for _, c := range chunks {
		if len(c.Choices) == 1 && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
			contents = append(contents, *c.Choices[0].Delta.Content)
		}
		if c.Usage != nil {
			t.Errorf("usage chunk without stream_options.include_usage: %+v", c)
		}
	}
	e.waitIdle()
	s := decode[struct{ Sessions []summary }](t, e.get("/api/sessions")).Sessions[0]
	if want := e.answerFile(s.ID, s.Winner); len(contents) != 1 || contents[0] != want {
		t.Errorf("deltas %q, want the answer %q once", contents, want)
	}
}

func TestRemainder(t *testing.T) {
	for _, c := range []struct{ streamed, content, want string }{
		{"", "all", "all"},
		{"all", "all", ""},
		{"al", "all", "l"},
		{"round one. final", "final", ""},
		{"  \n", "stored", "stored"},
		{"partial pres", "stored answer", "\n\nstored answer"},
	} {
		if got := remainder(c.streamed, c.content); got != c.want {
			t.Errorf("remainder(%q, %q) = %q, want %q", c.streamed, c.content, got, c.want)
		}
	}
}

func TestChat_BadRequestsGetOpenAIErrors(t *testing.T) {
	e := newEnv(t, nil)
	msg := func(role string, content any) map[string]any { return map[string]any{"role": role, "content": content} }
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"not JSON", "{model: demo", 400, "invalid_json"},
		{"no model", map[string]any{"messages": []any{msg("user", "q")}}, 400, "missing_model"},
		{"unknown team", chatBody("gpt-4o", false, "user", "q"), 404, "model_not_found"},
		{"no messages", map[string]any{"model": "demo"}, 400, "invalid_messages"},
		{"no user message", chatBody("demo", false, "system", "s"), 400, "invalid_messages"},
		{"ends with the assistant", chatBody("demo", false, "user", "q", "assistant", "a"), 400, "invalid_messages"},
		{"tool role", chatBody("demo", false, "user", "q", "tool", "r"), 400, "invalid_messages"},
		{"empty question", chatBody("demo", false, "user", "  "), 400, "invalid_messages"},
		{"image part", map[string]any{"model": "demo", "messages": []any{msg("user", []any{map[string]any{"type": "image_url", "image_url": map[string]string{"url": "x"}}})}}, 400, "invalid_messages"},
		{"content of the wrong type", map[string]any{"model": "demo", "messages": []any{msg("user", 42)}}, 400, "invalid_messages"},
		{"too big", `{"model":"demo","messages":[{"role":"user","content":"` + strings.Repeat("x", maxChatBody) + `"}]}`, 413, "request_too_large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantError(t, e.post("/v1/chat/completions", c.body), c.status, c.code)
		})
	}
	wantError(t, e.get("/v1/chat/completions"), http.StatusMethodNotAllowed, "method_not_allowed")
	wantError(t, e.get("/v1/embeddings"), http.StatusNotFound, "unknown_url")
	if n := len(e.srv.runningSessions()); n != 0 {
		t.Errorf("%d sessions started by bad requests", n)
	}
}

func TestChat_FailedSessionsMapToServerErrors(t *testing.T) {
	e := newEnv(t, nil)
	r := e.post("/v1/chat/completions", chatBody("fail", false, "user", "q"))
	wantError(t, r, http.StatusInternalServerError, "session_failed")
	if !strings.Contains(string(r.body), "the session failed: ") {
		t.Errorf("no reason in %s", r.body)
	}
	// A session timeout with no answer at all.
	wantError(t, e.post("/v1/chat/completions", chatBody("slowfail", false, "user", "q")), http.StatusGatewayTimeout, "session_timeout")
	// Streaming: the error comes as a data event after the role chunk, and no [DONE].
	r = e.post("/v1/chat/completions", chatBody("fail", true, "user", "q"))
	data := sseData(t, r.body)
	if len(data) != 2 || !strings.Contains(data[1], `"code":"session_failed"`) {
		t.Errorf("streamed failure %q", data)
	}
}

func TestChat_ASessionThatCannotStartIs500(t *testing.T) {
	e := newEnv(t, func(o *Options) {
		o.Run = func(context.Context, *config.Config, app.Options) (app.Result, error) {
			return app.Result{}, &app.Error{Code: app.ExitConfig, Err: errors.New("agent a: no API key for backend openai: set OPENAI_API_KEY")}
		}
	})
	r := e.post("/v1/chat/completions", chatBody("demo", true, "user", "q"))
	wantError(t, r, http.StatusInternalServerError, "team_config_error")
	if !strings.Contains(string(r.body), "OPENAI_API_KEY") {
		t.Errorf("the reason is missing: %s", r.body)
	}
}

func TestChat_ClientDisconnectCancelsTheSession(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(map[bool]string{true: "streaming", false: "blocking"}[stream], func(t *testing.T) {
			e := newEnv(t, nil)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			data, _ := json.Marshal(chatBody("hang", stream, "user", "q"))
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.ts.URL+"/v1/chat/completions", strings.NewReader(string(data)))
			got := make(chan error, 1) // the role chunk was read (streaming), or the request failed
			go func() {
				resp, err := e.ts.Client().Do(req)
				if err != nil {
					got <- err
					return
				}
				defer resp.Body.Close()
				_, err = bufio.NewReader(resp.Body).ReadString('\n')
				got <- err
				<-ctx.Done()
			}()
			if stream {
				if err := <-got; err != nil {
					t.Fatal(err)
				}
			}
			id := e.waitRunning(1)[0].ID()
			cancel() // the client goes away
			if !stream {
				if err := <-got; !errors.Is(err, context.Canceled) {
					t.Fatalf("request ended with %v", err)
				}
			}
			e.waitIdle()
			if end := lastEnd(t, e.turnEvents(id)); end.Status != event.StatusInterrupted {
				t.Errorf("session ended %+v, want interrupted", end)
			}
		})
	}
}

func TestChat_SessionsRunAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	// One session that stays running...
	res := e.post("/api/runs", map[string]string{"team": "hang", "question": "q"})
	if res.status != http.StatusAccepted {
		t.Fatalf("start: %d %s", res.status, res.body)
	}
	hung := decode[map[string]string](t, res)["id"]
	// ...while two more run side by side to the end.
	var wg sync.WaitGroup
	dirs := make([]string, 2)
	for i := range dirs {
		wg.Go(func() {
			r := e.post("/v1/chat/completions", chatBody("demo", i == 1, "user", "What is the capital of France?"))
			if r.status != http.StatusOK {
				t.Errorf("session %d: %d %s", i, r.status, r.body)
				return
			}
			if i == 0 {
				dirs[i] = decode[completionResp](t, r).MassGen.LogDir
			}
		})
	}
	wg.Wait()
	if e.srv.lookup(hung) == nil {
		t.Fatal("the first session stopped")
	}
	list := decode[struct{ Sessions []summary }](t, e.get("/api/sessions")).Sessions
	if len(list) != 3 {
		t.Fatalf("%d sessions listed, want 3", len(list))
	}
	for _, s := range list {
		if (s.ID == hung) != s.Running || (s.ID == hung) != (s.Status == "running") {
			t.Errorf("session %s: running %v status %s", s.ID, s.Running, s.Status)
		}
	}
	if r := e.post("/api/sessions/"+hung+"/cancel", nil); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	e.waitIdle()
	if end := lastEnd(t, e.turnEvents(hung)); end.Status != event.StatusInterrupted {
		t.Errorf("cancelled session ended %+v", end)
	}
}

func TestChat_MaxSessionsAnswers429UntilOneEnds(t *testing.T) {
	e := newEnv(t, func(o *Options) { o.MaxSessions = 1 })
	res := e.post("/api/runs", map[string]string{"team": "hang", "question": "q"})
	if res.status != http.StatusAccepted {
		t.Fatalf("start: %d %s", res.status, res.body)
	}
	hung := decode[map[string]string](t, res)["id"]
	for _, r := range []response{
		e.post("/v1/chat/completions", chatBody("demo", false, "user", "q")),
		e.post("/v1/chat/completions", chatBody("demo", true, "user", "q")),
		e.post("/api/runs", map[string]string{"team": "demo", "question": "q"}),
	} {
		wantError(t, r, http.StatusTooManyRequests, "rate_limit_exceeded")
		if r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "1 session is running, the most this server runs at once (massgen serve --max-sessions)") {
			t.Errorf("429 without Retry-After or the flag to change: %v %s", r.header, r.body)
		}
	}
	if r := e.post("/api/sessions/"+hung+"/cancel", nil); r.status != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	e.waitIdle()
	// The slot is free again, also right after a session that ends.
	for range 2 {
		if r := e.post("/v1/chat/completions", chatBody("demo", false, "user", "q")); r.status != http.StatusOK {
			t.Fatalf("after the cap freed: %d %s", r.status, r.body)
		}
	}
}

func TestNewServer_RefusesANegativeCap(t *testing.T) {
	_, err := NewServer(Options{Teams: map[string]*config.Config{"demo": {}}, MaxSessions: -1})
	if err == nil || !strings.Contains(err.Error(), "max sessions") {
		t.Fatalf("err = %v", err)
	}
}
