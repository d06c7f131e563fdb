package computer

import (
	"net/http"
	"net/http/httptrace"
	"sync"

	anthropic "github.com/anthropics/anthropic-sdk-go/v2"

	"massgen/internal/provider"
	"massgen/internal/usage"
)

// meter watches the HTTP attempts of a task's model calls, one call at a time, so that a call
// that ends without the usage Claude reports (the run cancelled while Claude worked, an answer
// cut off) is still counted: Claude had the request, and it is paid for. A nil meter watches
// nothing.
type meter struct {
	mu       sync.Mutex
	sent     bool  // the last attempt's request reached the server whole
	status   int   // the status of its answer; 0 when none came
	size     int64 // its request body's bytes
	received int64 // its answer's body bytes read
}

// reset starts a call.
func (m *meter) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent, m.status, m.size, m.received = false, 0, 0, 0
}

// attempt starts one attempt (the SDK retries) of r, and returns r traced.
func (m *meter) attempt(r *http.Request) *http.Request {
	if m == nil {
		return r
	}
	m.mu.Lock()
	m.sent, m.status, m.size, m.received = false, 0, r.ContentLength, 0
	m.mu.Unlock()
	return r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) {
			if i.Err == nil {
				m.mu.Lock()
				m.sent = true
				m.mu.Unlock()
			}
		},
	}))
}

func (m *meter) answered(status int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.status = status
	m.mu.Unlock()
}

func (m *meter) read(n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.received += int64(n)
	m.mu.Unlock()
}

// shotsSent counts the screenshots a task's requests carry, so that an estimate prices them as
// Claude does (by their pixels) rather than by their base64 bytes, a hundred times more.
type shotsSent struct {
	n     int
	bytes int64
}

func (s *shotsSent) add(results []anthropic.BetaContentBlockParamUnion) {
	for _, r := range results {
		if r.OfToolResult == nil {
			continue
		}
		for _, c := range r.OfToolResult.Content {
			if c.OfImage != nil && c.OfImage.Source.OfBase64 != nil {
				s.n++
				s.bytes += int64(len(c.OfImage.Source.OfBase64.Data))
			}
		}
	}
}

// cutOff is the cost of a call that ended without usage: nothing when Claude never had the
// whole request, or refused it (an error status, which is not billed); otherwise the request
// estimated (its text about four bytes a token, each screenshot width*height/750 tokens, as
// Anthropic counts images) and as output what of the answer arrived, marked estimated.
func (m *meter) cutOff(model string, shots shotsSent, w, h int) provider.Usage {
	m.mu.Lock()
	sent, status, size, received := m.sent, m.status, m.size, m.received
	m.mu.Unlock()
	if !sent || status >= 300 {
		return provider.Usage{}
	}
	if !usage.Known("claude", model) {
		return provider.Usage{Unknown: true}
	}
	in := usage.Tokens(int(max(size-shots.bytes, 0))) + int64(shots.n)*int64(w*h/750+1)
	u := provider.Usage{InputTokens: in, OutputTokens: usage.Tokens(int(received))}
	return provider.Usage{CostUSD: usage.Cost("claude", model, u), Estimated: true}
}
