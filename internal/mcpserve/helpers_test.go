package mcpserve

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"massgen/internal/config"
)

// The genai SDK (through the app's providers) starts opencensus's worker at init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}

// demo returns examples/demo.yaml, without its pauses when fast (they only pace it for people
// watching).
func demo(t *testing.T, fast bool) *config.Config {
	t.Helper()
	data, err := os.ReadFile("../../examples/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if fast {
		data = regexp.MustCompile(`(?m)^\s+(latency|chunk_delay): .*\n`).ReplaceAll(data, nil)
	}
	return parse(t, "demo.yaml", data)
}

func parse(t *testing.T, name string, data []byte) *config.Config {
	t.Helper()
	cfg, rep := config.Parse(name, data)
	if !rep.OK() {
		t.Fatalf("config: %s", rep.Text())
	}
	return cfg
}

// slow is a one-agent team whose answer takes a minute: long enough to cancel mid-session.
const slow = `agents:
  - id: sleeper
    backend:
      type: scripted
      latency: 60s
      answers: ["a slow answer"]
`

// newServer returns a server over the given teams, with its log root and folder in a
// temporary directory; Close runs at the end of the test.
func newServer(t *testing.T, o Options) *Server {
	t.Helper()
	dir := t.TempDir()
	if o.LogRoot == "" {
		o.LogRoot = dir + "/logs"
	}
	if o.Dir == "" {
		o.Dir = dir
	}
	srv, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu   sync.Mutex
	msgs []string
	vals []float64
	ch   chan string
}

func newProgressLog() *progressLog { return &progressLog{ch: make(chan string, 1000)} }

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.msgs = append(p.msgs, req.Params.Message)
	p.vals = append(p.vals, req.Params.Progress)
	p.mu.Unlock()
	p.ch <- req.Params.Message
}

func (p *progressLog) snapshot() ([]string, []float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...), append([]float64(nil), p.vals...)
}

// waitFor waits until a progress message contains want.
func (p *progressLog) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-p.ch:
			if strings.Contains(m, want) {
				return m
			}
		case <-deadline:
			msgs, _ := p.snapshot()
			t.Fatalf("no progress message with %q; got %q", want, msgs)
		}
	}
}

// connect connects a client to srv over in-memory transports.
func connect(t *testing.T, srv *Server, progress *progressLog) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	opts := &mcp.ClientOptions{}
	if progress != nil {
		opts.ProgressNotificationHandler = progress.handler
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, opts).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// call calls tool with args, and a progress token when withProgress.
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any, withProgress bool) (*mcp.CallToolResult, error) {
	t.Helper()
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if withProgress {
		p.Meta = mcp.Meta{"progressToken": "tok-1"}
	}
	return cs.CallTool(ctx, p)
}

// structured decodes a result's structured content into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

// text joins a result's text contents.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
