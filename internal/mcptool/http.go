package mcptool

import (
	"context"
	"io"
	"net/http"
)

// httpTransport is the HTTP client transport of one streamable-http server: a private
// connection pool (so that Close leaves no idle connection behind) that adds the configured
// headers and can abort every request in flight.
type httpTransport struct {
	base    *http.Transport
	headers map[string]string
	aborted context.Context
	cancel  context.CancelFunc
}

func newHTTPTransport(headers map[string]string) *httpTransport {
	ctx, cancel := context.WithCancel(context.Background())
	return &httpTransport{
		base: http.DefaultTransport.(*http.Transport).Clone(), headers: headers,
		aborted: ctx, cancel: cancel,
	}
}

// abort cancels every request in flight and closes idle connections. Safe to call again.
func (t *httpTransport) abort() {
	t.cancel()
	t.base.CloseIdleConnections()
}

// RoundTrip sends req with the configured headers; they never replace the headers the MCP
// client sets itself.
func (t *httpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(t.aborted, cancel)
	done := func() {
		stop()
		cancel()
	}
	req = req.Clone(ctx)
	for k, v := range t.headers {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		done()
		return nil, err
	}
	resp.Body = &doneBody{ReadCloser: resp.Body, done: done}
	return resp, nil
}

// doneBody releases the request's context when the body is closed.
type doneBody struct {
	io.ReadCloser
	done func()
}

func (b *doneBody) Close() error {
	err := b.ReadCloser.Close()
	b.done()
	return err
}
