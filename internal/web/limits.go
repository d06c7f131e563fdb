package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// How long clients may take. Reading a request (headers and body) is bounded by the
// http.Server; responses are not, since a chat completion may wait for its team for as long
// as the session takes and streams stay open for hours, so instead every write to a stream
// must make progress within writeStall.
const (
	defaultReadTimeout = 30 * time.Second
	maxHeaderWait      = 10 * time.Second
	idleTimeout        = 2 * time.Minute
	maxHeaderBytes     = 64 << 10
)

// writeStall is a variable for the tests.
var writeStall = time.Minute

// readBody reads r's whole body, at most limit bytes, and answers the request itself when it
// cannot: 413 over the limit (also when Content-Length says so, before reading anything), 408
// when the client was too slow to send it, 400 otherwise. Reading to the end matters: only
// then does net/http lift the read deadline, which would otherwise cancel a request that
// outlives it.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	if r.ContentLength > limit {
		bodyTooLarge(w, limit)
		return nil, false
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err == nil {
		return b, true
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		bodyTooLarge(w, limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "invalid_request_error", "request_timeout", "",
			"the request body did not arrive in time: send it at once, not a little at a time")
	default:
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_body", "",
			fmt.Sprintf("cannot read the request body: %v", err))
	}
	return nil, false
}

func bodyTooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close") // the rest of the body is not read
	writeError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "request_too_large", "",
		fmt.Sprintf("the request body is over the %s limit of this endpoint: send less", sizeText(limit)))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// noRetry marks a failure that a retry would repeat, at the price of another whole team run.
// OpenAI's clients (openai-python, openai-node, openai-go) retry 408, 409, 429 and every 5xx,
// twice by default, unless the response says x-should-retry: false.
func noRetry(w http.ResponseWriter) { w.Header().Set("X-Should-Retry", "false") }

// stallWriter bounds each write to a client that has stopped reading: a write that makes no
// progress within writeStall fails (and the handler returns, which cancels what the request
// started) instead of blocking forever. net/http lifts the deadline once the request is done,
// so the next request on the connection starts without one.
type stallWriter struct {
	w  io.Writer
	rc *http.ResponseController
}

func newStallWriter(w http.ResponseWriter) *stallWriter {
	return &stallWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *stallWriter) Write(p []byte) (int, error) {
	s.extend()
	return s.w.Write(p)
}

func (s *stallWriter) Flush() error {
	s.extend()
	return s.rc.Flush()
}

// extend moves the deadline; a writer that cannot have one (a test recorder) has none.
func (s *stallWriter) extend() { _ = s.rc.SetWriteDeadline(time.Now().Add(writeStall)) }
