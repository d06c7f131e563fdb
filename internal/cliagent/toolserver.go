package cliagent

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/provider"
)

// ServerName is the name the CLIs know massgen's MCP server by: its tools reach the model
// as mcp__massgen__new_answer (Claude Code, Codex) or new_answer (Gemini CLI).
const ServerName = "massgen"

// secretHeader carries the per-agent secret every request to the tool server must present:
// any local process can reach a loopback port, only the agent's CLI knows the secret.
const secretHeader = "X-Massgen-Secret"

// maxArgsBytes caps the arguments of one tool call the CLI sends: an answer is bounded by
// the engine's caps far below this, and a bigger request is refused before it is read.
const maxArgsBytes = 8 << 20

// toolCall is one call the CLI made to a tool massgen serves, waiting for the engine's verdict.
type toolCall struct {
	id, name, args string
	reply          chan toolReply // buffered: the verdict never blocks its sender
}

type toolReply struct {
	content string
	isError bool
}

// toolServer serves the engine's tools (the workflow tools, and any MCP or custom tool the
// engine offers) to one agent's CLI over loopback streamable HTTP. Each call is handed to the
// agent's current Stream through calls; the handler waits for the verdict, which the next
// Stream delivers, so the CLI's own session continues with it.
type toolServer struct {
	srv    *mcp.Server
	http   *http.Server
	ln     net.Listener
	url    string
	secret string
	calls  chan *toolCall

	mu    sync.Mutex
	specs map[string]provider.ToolSpec
	seq   int
	done  chan struct{} // closed by close: waiting handlers give up
	once  sync.Once
}

func newToolServer() (*toolServer, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("tool server secret: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("tool server: %w", err)
	}
	ts := &toolServer{
		ln: ln, secret: hex.EncodeToString(b), calls: make(chan *toolCall),
		specs: map[string]provider.ToolSpec{}, done: make(chan struct{}),
		url: "http://" + ln.Addr().String() + "/mcp",
	}
	ts.srv = mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "MassGen workflow tools", Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return ts.srv }, nil)
	ts.http = &http.Server{Handler: ts.guard(h), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ts.http.Serve(ln) }() // ends with close
	return ts, nil
}

// guard refuses requests without the secret, and bodies past maxArgsBytes.
func (ts *toolServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get(secretHeader)), []byte(ts.secret)) != 1 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxArgsBytes)
		next.ServeHTTP(w, r)
	})
}

// setTools makes the server offer specs, replacing tools whose definition changed (the vote
// enum grows as answers arrive) and removing tools no longer offered.
func (ts *toolServer) setTools(specs []provider.ToolSpec) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	keep := map[string]bool{}
	for _, s := range specs {
		keep[s.Name] = true
		if old, ok := ts.specs[s.Name]; ok && reflect.DeepEqual(old, s) {
			continue
		}
		ts.specs[s.Name] = s
		schema := s.Parameters
		if schema == nil {
			schema = map[string]any{"type": "object"}
		}
		ts.srv.AddTool(&mcp.Tool{Name: s.Name, Description: s.Description, InputSchema: schema}, ts.handler(s.Name))
	}
	var gone []string
	for name := range ts.specs {
		if !keep[name] {
			gone = append(gone, name)
			delete(ts.specs, name)
		}
	}
	if len(gone) > 0 {
		ts.srv.RemoveTools(gone...)
	}
}

// handler hands a call to the agent's Stream and waits for its verdict.
func (ts *toolServer) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := "{}"
		if req.Params != nil && len(req.Params.Arguments) > 0 {
			args = string(req.Params.Arguments)
		}
		if !json.Valid([]byte(args)) {
			return errorResult("the arguments are not valid JSON"), nil
		}
		ts.mu.Lock()
		ts.seq++
		id := fmt.Sprintf("cli_call_%d", ts.seq)
		ts.mu.Unlock()
		c := &toolCall{id: id, name: name, args: args, reply: make(chan toolReply, 1)}
		select {
		case ts.calls <- c:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ts.done:
			return errorResult("massgen has ended this session"), nil
		}
		select {
		case r := <-c.reply:
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: r.content}}, IsError: r.isError}
			return res, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ts.done:
			return errorResult("massgen has ended this session"), nil
		}
	}
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Error: " + msg}}, IsError: true}
}

// close stops the server; calls still waiting get an error. The MCP sessions the CLIs
// opened are closed too: the HTTP server's shutdown leaves them, each with a goroutine that
// would outlive the agent (on a worker, one per CLI session it ever held).
func (ts *toolServer) close() error {
	ts.once.Do(func() { close(ts.done) })
	for ss := range ts.srv.Sessions() {
		_ = ss.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := ts.http.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = ts.http.Close()
	}
	return err
}
