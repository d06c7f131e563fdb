// Package codetool gives an agent its tools as code (MassGen's enable_code_based_tools, the
// CodeAct mode): Write generates a Python package of wrappers in the agent's workspace
// (servers/<server>/<tool>.py, as MassGen lays it out), and Serve answers the wrappers' calls
// from the agent's commands on a unix socket, with a per-run token, by running the very tools
// massgen would run for the model, under the same permission gate. The commands never get the
// MCP servers' commands, URLs or credentials: only the socket's address and the token.
package codetool

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"massgen/internal/tool"
)

// Caps on one call from code.
const (
	maxRequest  = 1 << 20 // bytes of one request line
	maxResult   = 4 << 20 // bytes of one result kept
	maxInFlight = 8       // calls of one agent's code at once
	requestWait = 10 * time.Second
)

// Options configure Serve.
type Options struct {
	// CallTimeout bounds one call (0: 5 minutes). The command that made it is bounded too.
	CallTimeout time.Duration
	// OnCall, when set, is told of every call a command made with the token, after it ran or
	// was refused.
	OnCall func(name string, res tool.Result, d time.Duration)
	// Token is what every call must carry; "" makes one (NewToken). massgen makes it before
	// the session's redactor, which must know it: the commands hold it, and what they print
	// is logged.
	Token string
}

// NewToken returns a fresh random token.
func NewToken() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("code-based tools: token: %w", err)
	}
	return hex.EncodeToString(raw), nil
}

// Server serves one agent's tools to its commands. Its methods are safe for concurrent use.
type Server struct {
	tools  tool.Set
	o      Options
	token  string
	dir    string
	socket string
	ln     net.Listener
	permit atomic.Pointer[func(ctx context.Context, name, args string) string]

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	slots  chan struct{}
}

// Serve listens on a fresh unix socket in a private temporary folder and runs the tools of
// set for the commands that present Token. Close stops it.
func Serve(set tool.Set, o Options) (*Server, error) {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 5 * time.Minute
	}
	if o.Token == "" {
		var err error
		if o.Token, err = NewToken(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "massgen-tools-")
	if err != nil {
		return nil, fmt.Errorf("code-based tools: %w", err)
	}
	s := &Server{tools: set, o: o, token: o.Token, dir: dir, socket: filepath.Join(dir, "tools.sock"),
		slots: make(chan struct{}, maxInFlight)}
	if s.ln, err = net.Listen("unix", s.socket); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("code-based tools: %w", err)
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Add(1)
	go s.serve() // ends when Close closes the listener
	return s, nil
}

// Socket is the unix socket the server listens on.
func (s *Server) Socket() string { return s.socket }

// Token is what every call must carry.
func (s *Server) Token() string { return s.token }

// SetPermit makes every call ask permit first (the permission gate), as the engine does
// before the model's calls; its refusal is the call's error.
func (s *Server) SetPermit(permit func(ctx context.Context, name, args string) string) {
	s.permit.Store(&permit)
}

// Close stops the server, cancels the calls running and waits for them.
func (s *Server) Close() error {
	s.cancel()
	err := s.ln.Close()
	s.wg.Wait()
	return errors.Join(err, os.RemoveAll(s.dir))
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.handle(c)
		}()
	}
}

// request is one call: a JSON line.
type request struct {
	Token     string          `json:"token"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// reply is the answer to one request: a JSON line.
type reply struct {
	OK     bool   `json:"ok"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

func (s *Server) handle(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(requestWait))
	line, err := bufio.NewReaderSize(&limitedReader{r: c, n: maxRequest + 1}, 64<<10).ReadBytes('\n')
	if err != nil && len(line) == 0 || len(line) > maxRequest {
		s.answer(c, reply{Error: fmt.Sprintf("send one JSON request of at most %d bytes, ended by a newline", maxRequest)})
		return
	}
	var req request
	if err := json.Unmarshal(line, &req); err != nil {
		s.answer(c, reply{Error: "the request is not valid JSON: " + err.Error()})
		return
	}
	if subtle.ConstantTimeCompare([]byte(req.Token), []byte(s.token)) != 1 {
		s.answer(c, reply{Error: "unauthorized: this call does not carry the token of this agent's commands (MASSGEN_TOOLS_TOKEN)"})
		return
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		s.answer(c, reply{Error: fmt.Sprintf("more than %d tool calls at once from your code: wait for some to finish", maxInFlight)})
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithTimeout(s.ctx, s.o.CallTimeout)
	defer cancel()
	s.wg.Add(1)
	go func() { // a client that goes away (its command killed) cancels its call; ends when c closes
		defer s.wg.Done()
		var b [1]byte
		_, _ = c.Read(b[:])
		cancel()
	}()
	res := s.call(ctx, req.Tool, req.Arguments)
	if res.IsError {
		s.answer(c, reply{Error: res.Content})
		return
	}
	s.answer(c, reply{OK: true, Result: res.Content})
}

// call runs the tool name as the engine would: found in the set, past the gate, bounded, and
// tells OnCall of it.
func (s *Server) call(ctx context.Context, name string, raw json.RawMessage) tool.Result {
	args := string(raw)
	if len(raw) == 0 || string(raw) == "null" {
		args = "{}"
	}
	start := time.Now()
	res := s.run(ctx, name, args)
	if s.o.OnCall != nil {
		s.o.OnCall(name, res, time.Since(start))
	}
	return res
}

func (s *Server) run(ctx context.Context, name, args string) tool.Result {
	t, ok := s.tools.Find(name)
	if !ok {
		return tool.Errorf(fmt.Sprintf("no tool %s is offered to your code", tool.Quote(name)))
	}
	if p := s.permit.Load(); p != nil && *p != nil {
		if refusal := (*p)(ctx, name, args); refusal != "" {
			return tool.Errorf(refusal)
		}
	}
	done := make(chan tool.Result, 1)
	go func() { done <- t.Run(ctx, args) }() // a tool that ignores ctx cannot hold the reply
	var res tool.Result
	select {
	case res = <-done:
	case <-ctx.Done():
		res = tool.Errorf(fmt.Sprintf("the call did not finish within %s, or its command went away", s.o.CallTimeout))
	}
	if len(res.Content) > maxResult {
		res.Content = res.Content[:maxResult] + fmt.Sprintf("\n[result truncated: %d bytes, the first %d kept]", len(res.Content), maxResult)
	}
	return res
}

func (s *Server) answer(c net.Conn, r reply) {
	_ = c.SetWriteDeadline(time.Now().Add(requestWait))
	b, _ := json.Marshal(r)
	_, _ = c.Write(append(b, '\n'))
}

// limitedReader reads at most n bytes of r.
type limitedReader struct {
	r net.Conn
	n int
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errors.New("request too long")
	}
	if len(p) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= k
	return k, err
}
