package mcpserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/httpserve"
)

// Path is where the streamable HTTP transport is served.
const Path = "/mcp"

// HTTP timeouts: a request's headers must arrive promptly; responses are not bounded, since a
// tools/call streams progress for as long as its session runs. Idle MCP sessions (a client
// that went away without DELETE) are dropped after sessionIdle. At shutdown the sessions have
// ended and every request's context is cancelled before Shutdown, so what is left only writes
// its last bytes: a second is plenty, where Shutdown alone would wait 5 s for a connection a
// client opened and has not used yet.
const (
	headerTimeout = 10 * time.Second
	idleTimeout   = 2 * time.Minute
	sessionIdle   = time.Hour
	shutdownGrace = time.Second
)

// Handler returns the streamable HTTP handler, at Path, behind massgen serve's checks: without
// a token only loopback host names are answered, with one every request must send
// "Authorization: Bearer <token>".
func (s *Server) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		SessionTimeout: sessionIdle,
		// With clients on the 2026-07-28 protocol, a POST whose client hangs up cancels its
		// call (and so its session) as notifications/cancelled does.
		PropagateRequestCancellation: true,
		// The SDK refuses foreign Host names on loopback connections; httpserve.Guard does that
		// without a token, and with one any host may be served, as massgen serve does (a
		// reverse proxy on the same machine, for one).
		DisableLocalhostProtection: s.token != "",
	})
	mux := http.NewServeMux()
	mux.Handle(Path, h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("not found: this massgen MCP server's endpoint is %s (streamable HTTP)", Path), http.StatusNotFound)
	})
	return httpserve.Guard(s.token, mux)
}

// Listen checks that addr may be served (loopback, or any address with a token, as massgen
// serve) and listens on it. The error wraps httpserve.ErrTokenRequired when a token is missing.
func (s *Server) Listen(addr string) (net.Listener, error) {
	if err := httpserve.CheckAddr(addr, s.token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("mcpserve: %w", err)
	}
	return ln, nil
}

// ServeListener serves Handler on ln until ctx is done or ln fails, and closes ln. On the way
// out it interrupts the running sessions and waits for their logs (Close), ends the open
// requests and gives them a second to finish, and closes every MCP session. It returns nil
// after a shutdown asked for by ctx.
func (s *Server) ServeListener(ctx context.Context, ln net.Listener) error {
	if err := httpserve.CheckAddr(ln.Addr().String(), s.token); err != nil {
		ln.Close()
		return err
	}
	// Every request's context ends with the server: a client's open event stream (GET) would
	// otherwise hold Shutdown for its whole grace period.
	reqBase, cancelRequests := context.WithCancel(context.Background())
	defer cancelRequests()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: headerTimeout, IdleTimeout: idleTimeout,
		BaseContext: func(net.Listener) context.Context { return reqBase }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	var err error
	served := false
	select {
	case <-ctx.Done():
	case err = <-errc:
		served = true
	}
	s.Close()
	cancelRequests()
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if serr := srv.Shutdown(sctx); serr != nil {
		srv.Close() // streams still open after the grace period
	}
	if !served {
		err = <-errc
	}
	// MCP sessions outlive their requests (until DELETE, or sessionIdle): end them with the
	// server.
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
	if err == nil || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("mcpserve: %w", err)
}
