package computer

import (
	"encoding/base64"
	"math"
	"net/http"
	"net/http/httptrace"
	"sync"

	"massgen/internal/provider"
	"massgen/internal/usage"
)

// meter watches the HTTP attempts of a task's model calls, one call at a time, so that a call
// that ends without the usage the provider reports (the run cancelled while the model worked,
// an answer cut off) is still counted: the provider had the request, and it is paid for. A nil
// meter watches nothing.
type meter struct {
	mu       sync.Mutex
	sent     bool  // the last attempt's request reached the server whole
	status   int   // the status of its answer; 0 when none came
	size     int64 // its request body's bytes
	received int64 // its answer's body bytes read
	shots    shotsSent
	carried  int64
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

// shotsSent counts the screenshots a request carries, so that an estimate prices them as the
// provider does (by their pixels) rather than by their base64 bytes, a hundred times more.
type shotsSent struct {
	n     int
	bytes int64 // their base64 bytes in the request body
}

func (s *shotsSent) add(png []byte) {
	s.n++
	s.bytes += int64(base64.StdEncoding.EncodedLen(len(png)))
}

// pricing is how a call is billed: the price table's backend and model, and the tokens one
// screenshot of the task's screen counts as.
type pricing struct {
	backend, model string
	imageTokens    int64
}

// The tokens of a w x h screenshot, as each provider counts images.
func claudeImageTokens(w, h int) int64 { return int64(w*h/750 + 1) }

// openaiImageTokens: high detail, the image fit in 2048x2048 and then its short side in 768,
// 170 tokens a 512-pixel tile and 85 more.
func openaiImageTokens(w, h int) int64 {
	fw, fh := float64(w), float64(h)
	if s := 2048 / max(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	if s := 768 / min(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	tiles := int64(math.Ceil(fw/512) * math.Ceil(fh/512))
	return 85 + 170*tiles
}

// geminiImageTokens: 258 tokens an image up to 384 pixels a side, else a 768-pixel tile.
func geminiImageTokens(w, h int) int64 {
	if w <= 384 && h <= 384 {
		return 258
	}
	return 258 * int64(math.Ceil(float64(w)/768)*math.Ceil(float64(h)/768))
}

// call starts a model call whose request carries shots, and whose context holds carried
// tokens the request does not (OpenAI's previous_response_id keeps the earlier turns on its
// side, billed all the same).
func (m *meter) call(shots shotsSent, carried int64) {
	m.reset()
	m.mu.Lock()
	m.shots, m.carried = shots, carried
	m.mu.Unlock()
}

// cutOff is the cost of a call that ended without usage (the run cancelled while the model
// worked, an answer cut off, a provider that reports none): nothing when the provider never
// had the whole request, or refused it (an error status, which is not billed); otherwise an
// estimate, marked so: the request's text about four bytes a token, each screenshot as the
// provider counts it, the carried context, and as output what of the answer arrived.
func (m *meter) cutOff(p pricing) provider.Usage {
	m.mu.Lock()
	sent, status, size, received, shots, carried := m.sent, m.status, m.size, m.received, m.shots, m.carried
	m.mu.Unlock()
	if !sent || status >= 300 {
		return provider.Usage{}
	}
	if !usage.Known(p.backend, p.model) {
		return provider.Usage{Unknown: true}
	}
	in, out := estimate(p, size, received, shots, carried)
	u := provider.Usage{InputTokens: in, OutputTokens: out}
	return provider.Usage{CostUSD: usage.Cost(p.backend, p.model, u), Estimated: true}
}

// estimate is the tokens of the call m watched: in, its request and the carried context; out,
// what of the answer arrived.
func (m *meter) estimate(p pricing) (in, out int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return estimate(p, m.size, m.received, m.shots, m.carried)
}

func estimate(p pricing, size, received int64, shots shotsSent, carried int64) (in, out int64) {
	in = usage.Tokens(int(max(size-shots.bytes, 0))) + int64(shots.n)*p.imageTokens + carried
	return in, usage.Tokens(int(received))
}

// priced is what a call that reported u costs.
func priced(p pricing, u provider.Usage) provider.Usage {
	if !usage.Known(p.backend, p.model) {
		return provider.Usage{Unknown: true}
	}
	return provider.Usage{CostUSD: usage.Cost(p.backend, p.model, u)}
}
