package provider

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// DefaultMaxResponseBytes bounds a response whose Request sets no MaxResponseBytes: a backend
// must never take in an unbounded response, whoever calls it.
const DefaultMaxResponseBytes = 16 << 20

// ErrResponseTooLarge ends a stream that went over Request.MaxResponseBytes, in what the
// backend assembled or in one event of the wire. The engine treats it as its own output cap.
var ErrResponseTooLarge = errors.New("response too large")

// ResponseLimit is r.MaxResponseBytes with its default applied.
func (r Request) ResponseLimit() int {
	if r.MaxResponseBytes <= 0 {
		return DefaultMaxResponseBytes
	}
	return r.MaxResponseBytes
}

// EventLimit bounds one event of a response's stream as it arrives on the wire, before an SDK
// decodes it. It is larger than ResponseLimit because an event may repeat the whole response
// (OpenAI's response.completed) and JSON may spell one character in six bytes or more (\u00e9).
func (r Request) EventLimit() int { return 2*r.ResponseLimit() + 64<<10 }

// Budget counts the bytes of text, reasoning, tool-call names, IDs and arguments a backend has
// taken in for one response, and refuses them past the request's limit. Backends spend before
// they copy, so that a single tool call whose arguments never end cannot fill the memory before
// the engine sees it. The zero value refuses nothing; use NewBudget.
type Budget struct{ max, used int }

// NewBudget returns the budget of one response to req.
func NewBudget(req Request) *Budget { return &Budget{max: req.ResponseLimit()} }

// Spend takes n bytes from the budget. Past the limit it returns an error wrapping
// ErrResponseTooLarge: the backend must stop reading and end the stream with it, in a
// non-fatal *Error.
func (b *Budget) Spend(n int) error {
	if b == nil || b.max <= 0 || n <= 0 {
		return nil
	}
	b.used += n
	if b.used <= b.max {
		return nil
	}
	return fmt.Errorf("%w: it exceeded %d bytes of text, reasoning and tool-call arguments; stopped reading",
		ErrResponseTooLarge, b.max)
}

// Replace accounts for a value that replaces one already spent for (an API that sends a call's
// arguments again, whole, once they are done): only growth is spent.
func (b *Budget) Replace(old, new int) error { return b.Spend(new - old) }

// LimitEvents wraps the body of a streamed response so that reading fails with
// ErrResponseTooLarge once one server-sent event (the bytes between blank lines) or one line
// of any other body exceeds max bytes. SDKs join an event's data lines without bound and hold a
// line of up to 256 MB before decoding it, which this stops at the wire.
func LimitEvents(body io.ReadCloser, max int) io.ReadCloser {
	return &eventLimiter{body: body, max: max, eol: true}
}

// LimitResponse returns what an SDK middleware returns after next(r), with the response body
// bounded by LimitEvents: return provider.LimitResponse(max)(next(r)).
func LimitResponse(max int) func(*http.Response, error) (*http.Response, error) {
	return func(resp *http.Response, err error) (*http.Response, error) {
		if err == nil && resp != nil && resp.Body != nil {
			resp.Body = LimitEvents(resp.Body, max)
		}
		return resp, err
	}
}

type eventLimiter struct {
	body io.ReadCloser
	max  int
	n    int  // bytes of the current event, line terminators excluded
	eol  bool // the last byte ended a line
	cr   bool // the last byte was \r, which a \n may complete
	err  error
}

func (l *eventLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.body.Read(p)
	for i, c := range p[:n] {
		switch {
		case c == '\n' && l.cr:
			l.cr = false // the \n of \r\n
		case c == '\n' || c == '\r':
			if l.eol {
				l.n = 0 // a blank line ends the event
			}
			l.eol, l.cr = true, c == '\r'
		default:
			l.eol, l.cr = false, false
			if l.n++; l.n > l.max {
				l.err = fmt.Errorf("%w: one event of the stream exceeded %d bytes; stopped reading", ErrResponseTooLarge, l.max)
				return i, l.err
			}
		}
	}
	return n, err
}

func (l *eventLimiter) Close() error { return l.body.Close() }
