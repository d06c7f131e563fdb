package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/tool"
	"massgen/internal/view"
)

const leakedKey = "sk-test-abcdefghijklmnopqrstuvwxyz0123" // 38 characters

// holdsKey reports whether s holds leakedKey or any 10-byte run of it.
func holdsKey(s string) bool {
	for i := 0; i+redact.MinSubstring <= len(leakedKey); i++ {
		if strings.Contains(s, leakedKey[i:i+redact.MinSubstring]) {
			return true
		}
	}
	return false
}

// fakeStream is a provider that streams fixed chunks, then err (nil: none).
type fakeStream struct {
	chunks []provider.Chunk
	err    error
}

func (f fakeStream) Stream(context.Context, provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		for _, c := range f.chunks {
			if !yield(c, nil) {
				return
			}
		}
		if f.err != nil {
			yield(nil, f.err)
		}
	}
}

func collectChunks(p provider.Provider) ([]provider.Chunk, error) {
	var out []provider.Chunk
	for c, err := range p.Stream(context.Background(), provider.Request{}) {
		if err != nil {
			return out, err
		}
		out = append(out, c)
	}
	return out, nil
}

// TestRedactingProvider_KeySplitAcrossDeltas: a model that streams the key in three pieces,
// in its reasoning, in a tool call's arguments and in a hosted tool's result gets none of it
// to the engine, and the text keeps its order around the calls.
func TestRedactingProvider_KeySplitAcrossDeltas(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"command": "curl -H 'Authorization: Bearer " + leakedKey + "' x", "note": "a < b"})
	p := redactingProvider{red: redact.New(leakedKey), p: fakeStream{chunks: []provider.Chunk{
		provider.ReasoningDelta{Text: "I found " + leakedKey[:5]},
		provider.ReasoningDelta{Text: leakedKey[5:] + " in env"},
		provider.TextDelta{Text: "The key is " + leakedKey[:12]},
		provider.TextDelta{Text: leakedKey[12:25]},
		provider.TextDelta{Text: leakedKey[25:] + ", enjoy."},
		provider.UsageChunk{Usage: provider.Usage{OutputTokens: 5}},
		provider.ToolCallChunk{Call: provider.ToolCall{ID: "c1", Name: "run", Arguments: string(args)}},
		provider.HostedToolChunk{Call: provider.ToolCall{Name: provider.HostedCodeExecution, Arguments: `{"code":"print('` + leakedKey[3:] + `')"}`}, Result: leakedKey[3:]},
		provider.TextDelta{Text: "tail " + leakedKey[:20]},
		provider.Done{StopReason: "stop"},
	}}}
	chunks, err := collectChunks(p)
	if err != nil {
		t.Fatal(err)
	}
	var text, reasoning strings.Builder
	var kinds []string
	for _, c := range chunks {
		switch v := c.(type) {
		case provider.TextDelta:
			text.WriteString(v.Text)
			kinds = append(kinds, "text")
		case provider.ReasoningDelta:
			reasoning.WriteString(v.Text)
			kinds = append(kinds, "reasoning")
		case provider.ToolCallChunk:
			var got map[string]string
			if err := json.Unmarshal([]byte(v.Call.Arguments), &got); err != nil || holdsKey(v.Call.Arguments) || got["note"] != "a < b" {
				t.Errorf("tool call arguments %q (%v)", v.Call.Arguments, err)
			}
			kinds = append(kinds, "call")
		case provider.HostedToolChunk:
			if holdsKey(v.Call.Arguments) || holdsKey(v.Result) {
				t.Errorf("hosted call %+v", v)
			}
			kinds = append(kinds, "hosted")
		case provider.Done:
			kinds = append(kinds, "done")
		}
		if fmt.Sprint(c) != "" && holdsKey(fmt.Sprintf("%+v", c)) {
			t.Errorf("chunk %+v holds the key", c)
		}
	}
	if got, want := text.String(), "The key is [redacted], enjoy.tail [redacted]"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if got, want := reasoning.String(), "I found [redacted] in env"; got != want {
		t.Errorf("reasoning = %q, want %q", got, want)
	}
	// The text before the calls comes before them; Done comes last.
	order := strings.Join(kinds, ",")
	if !strings.HasPrefix(order, "reasoning") || !strings.Contains(order, "text,call,hosted,text") || !strings.HasSuffix(order, "done") {
		t.Errorf("chunk order %s", order)
	}
}

// TestRedactingProvider_Errors: an error that quotes the key loses it and keeps its kind, and
// the text held back before it still comes out first.
func TestRedactingProvider_Errors(t *testing.T) {
	perr := &provider.Error{Provider: "openai", Status: 401, Fatal: true, Err: fmt.Errorf("rejected %s: %w", leakedKey[3:], context.Canceled)}
	p := redactingProvider{red: redact.New(leakedKey), p: fakeStream{chunks: []provider.Chunk{provider.TextDelta{Text: "partial " + leakedKey[:6]}}, err: perr}}
	chunks, err := collectChunks(p)
	if len(chunks) != 1 || chunks[0].(provider.TextDelta).Text != "partial sk-tes" {
		t.Errorf("chunks before the error: %+v", chunks)
	}
	var pe *provider.Error
	if !errors.As(err, &pe) || !pe.Fatal || pe.Status != 401 || holdsKey(err.Error()) || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v (%#v)", err, err)
	}
	if perr.Err.Error() != "rejected "+leakedKey[3:]+": context canceled" {
		t.Error("the provider's own error was changed")
	}
}

// TestRedactTools: a tool that prints the key while it runs and returns it gets neither to the
// engine; output split mid-key is still caught.
func TestRedactTools(t *testing.T) {
	leaky := tool.Tool{Spec: provider.ToolSpec{Name: "leak"}, Run: func(ctx context.Context, args string) tool.Result {
		out := tool.Output(ctx)
		out("env: OPENAI_API_KEY=" + leakedKey[:9])
		out(leakedKey[9:30])
		out(leakedKey[30:] + "\ndone\n")
		return tool.Result{Content: "OPENAI_API_KEY=" + leakedKey + "\nsuffix " + leakedKey[3:]}
	}}
	set := redactTools(tool.Set{leaky}, redact.New(leakedKey))
	var mu sync.Mutex
	var streamed strings.Builder
	ctx := tool.WithOutput(context.Background(), func(s string) {
		mu.Lock()
		defer mu.Unlock()
		streamed.WriteString(s)
	})
	res := set[0].Run(ctx, "{}")
	if got, want := streamed.String(), "env: OPENAI_API_KEY=[redacted]\ndone\n"; got != want {
		t.Errorf("streamed %q, want %q", got, want)
	}
	if got, want := res.Content, "OPENAI_API_KEY=[redacted]\nsuffix [redacted]"; got != want {
		t.Errorf("result %q, want %q", got, want)
	}
	if set[0].Spec.Name != "leak" || len(redactTools(nil, redact.New(leakedKey))) != 0 {
		t.Error("the wrapped set changed shape")
	}
}

// TestRun_SecretsNeverReachEventsOrLogs: an agent whose tool reads a file holding the key and
// whose answer quotes it, whole and without its prefix, shows it nowhere: not in the events
// (events.jsonl feeds the web page's /events and /stream), massgen.log, status.json, the
// final answer or the terminal.
func TestRun_SecretsNeverReachEventsOrLogs(t *testing.T) {
	root := t.TempDir()
	ctxDir := filepath.Join(root, "ctx")
	if err := os.MkdirAll(ctxDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ctxDir, "secret.txt"), []byte("OPENAI_API_KEY="+leakedKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`
agents:
  - id: leaky
    backend:
      type: scripted
      context_paths: [{path: %q}]
      tool_calls:
        - {name: read_file, args: {path: %q}}
      answers: ["The key is %s and without its prefix %s ok"]
      vote: agent1
  - id: other
    backend: {type: scripted, answers: ["Short."], vote: agent1}
orchestrator: {final_presentation: verbatim}
`, ctxDir, filepath.Join(ctxDir, "secret.txt"), leakedKey, leakedKey[3:])
	cfg, rep := config.Parse("leak.yaml", []byte(yaml))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	var out bytes.Buffer
	res, err := Run(t.Context(), cfg, Options{Question: "What is the key?", Logging: true, Debug: true,
		LogRoot: filepath.Join(root, "logs"), WorkspaceRoot: filepath.Join(root, "ws"), Args: []string{"massgen", "--note", leakedKey},
		Getenv: func(k string) string { return map[string]string{"OPENAI_API_KEY": leakedKey}[k] },
		Sinks:  []event.Sink{view.NewPlain(&out)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || res.Winner != "leaky" {
		t.Fatalf("result %+v\n%s", res.Result, out.String())
	}
	if holdsKey(res.FinalAnswer) || holdsKey(out.String()) {
		t.Errorf("the answer or the terminal shows the key:\n%s\n%s", res.FinalAnswer, out.String())
	}
	if !strings.Contains(res.FinalAnswer, "The key is [redacted] and without its prefix [redacted] ok") {
		t.Errorf("final answer %q", res.FinalAnswer)
	}
	evs, err := event.ReadFile(filepath.Join(res.Dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sawTool := false
	for _, e := range evs {
		if r, ok := e.Payload.(event.ToolResult); ok && r.Tool == "read_file" {
			sawTool = strings.Contains(r.Content, "OPENAI_API_KEY=[redacted]")
		}
	}
	if !sawTool {
		t.Error("the read_file result is missing from the events, so the test did not test it")
	}
	assertNoKey(t, filepath.Join(root, "logs"))
}

// assertNoKey searches every file under root for leakedKey or a run of it.
func assertNoKey(t *testing.T, root string) {
	t.Helper()
	eachFile(t, root, func(path string, b []byte) {
		if holdsKey(string(b)) {
			t.Errorf("%s holds the key:\n%s", path, b)
		}
	})
}

// echoKeyWithoutPrefix rejects every request and quotes the key it got without its vendor
// prefix ("sk-", "sk-ant-", "AIza", "gsk_"), as some proxies do.
func echoKeyWithoutPrefix(w http.ResponseWriter, r *http.Request, n int) bool {
	key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + r.Header.Get("x-api-key") + r.Header.Get("x-goog-api-key")
	key = key[strings.LastIndexAny(key[:min(len(key), 8)], "-_")+1:]
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnauthorized)
	msg, _ := json.Marshal("Incorrect API key provided: " + key)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":"authentication_error","code":401,"status":"UNAUTHENTICATED"}}`, msg)
	return true
}

// TestE2E_KeyQuotedWithoutPrefix: a service that echoes the key without its prefix in its
// error gets it into no log file and no terminal line, for every protocol.
func TestE2E_KeyQuotedWithoutPrefix(t *testing.T) {
	for _, agent := range []string{"gpt", "claude", "gem", "fast"} {
		t.Run(agent, func(t *testing.T) {
			root := t.TempDir()
			tm := fourAgents(t, map[string]fault{agent: echoKeyWithoutPrefix})
			res, out := runTeam(t, tm, root)
			if res.ExitCode != 0 {
				t.Fatalf("result %+v\n%s", res.Result, out)
			}
			if !strings.Contains(out, "_API_KEY") {
				t.Errorf("the error does not name the key variable:\n%s", out)
			}
			for env, k := range keys {
				if strings.Contains(out, k[len(k)-8:]) {
					t.Errorf("the terminal shows %s's key:\n%s", env, out)
				}
			}
			assertNoKeys(t, root)
		})
	}
}

func TestRedacted_BaseURLCredentials(t *testing.T) {
	cfg, rep := config.Parse("t.yaml", []byte(`
agents:
  - id: a
    backend: {type: chatcompletion, model: m, base_url: "https://user:hunter2pass@proxy.example/v1?api-key=s3cr3tvalue&deployment=d1"}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	b, _ := json.Marshal(Redacted(cfg))
	if strings.Contains(string(b), "hunter2pass") || strings.Contains(string(b), "s3cr3tvalue") || !strings.Contains(string(b), "deployment=d1") {
		t.Errorf("metadata shows %s", b)
	}
}

// TestSessionSecrets: the redactor knows every key a tool could print, not only the agents'.
func TestSessionSecrets(t *testing.T) {
	cfg, rep := config.Parse("t.yaml", []byte(`
agents:
  - id: a
    backend:
      type: scripted
      answers: ["x"]
      mcp_servers:
        - {name: gh, type: streamable-http, url: "https://mcp.example/?token=urltoken123", headers: {Authorization: "Bearer ${GH_TOKEN}"}, env: {HOME: /home/u}}
  - id: b
    backend: {type: openai, model: gpt-5-mini, api_key: sk-config-key-000000}
`))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-ant-unused-but-set", "GH_TOKEN": "ghp_mcpheadertoken", "HOME": "/home/u"}
	r := redact.New(sessionSecrets(cfg, func(k string) string { return env[k] }, []string{"serve-token-42"})...)
	for _, s := range []string{"sk-config-key-000000", "sk-ant-unused-but-set", "ghp_mcpheadertoken", "urltoken123", "serve-token-42"} {
		if got := r.String("x " + s + " y"); got != "x [redacted] y" {
			t.Errorf("%s is not a secret: %q", s, got)
		}
	}
	if got := r.String("/home/u"); got != "/home/u" {
		t.Errorf("a value that is not a secret was redacted: %q", got)
	}
}
