// Package gemini is the `gemini` backend: Google's Gemini API (generativelanguage, not Vertex)
// through google.golang.org/genai, streamed with streamGenerateContent over SSE. It translates
// the neutral provider types to Gemini contents, function declarations and generation config, and
// Gemini response chunks back to neutral chunks; nothing else.
package gemini

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"

	"massgen/internal/provider"
	"massgen/internal/redact"
)

// DefaultBaseURL is the Gemini API host root used when Options.BaseURL is empty.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// defaultAPIVersion is the path segment the SDK puts before models/...; a base URL that ends
// with an API version segment overrides it.
const defaultAPIVersion = "v1beta"

// Provider streams calls to the Gemini API. It is safe for concurrent use.
type Provider struct {
	o      provider.Options
	name   string
	client *genai.Client
	red    *redact.Redactor // the key and the base URL's credentials

	// ids numbers the calls the API sent without an ID: call_1, call_2, ... over the
	// provider's lifetime, so that IDs stay unique within one agent's conversation.
	ids atomic.Int64
	// calls remembers what a later request must send back about a call this provider
	// streamed: its thought signature and whether the API gave its ID.
	calls provider.CallMemo[callMeta]
}

// New builds a Gemini backend. o.APIKey is required; o.BaseURL is the host root (default
// DefaultBaseURL; a trailing /v1beta or /v1 selects that API version). New never reads the
// environment: GOOGLE_API_KEY, GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL and GOOGLE_GENAI_USE_VERTEXAI
// cannot change the key, the backend or the endpoint.
func New(o provider.Options) (*Provider, error) {
	name := o.Type
	if name == "" {
		name = "gemini"
	}
	if o.APIKey == "" {
		env := o.KeyEnv
		if env == "" {
			env = "api_key in the config"
		}
		return nil, fmt.Errorf("%s: no API key: set %s", name, env)
	}
	base, version, err := splitBaseURL(o.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if _, err := wireParams(o.Params); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	o.Type = name
	hc := &http.Client{}
	if o.HTTPClient != nil {
		c := *o.HTTPClient
		hc = &c
	}
	hc.Transport = limitTransport{&retryTransport{base: hc.Transport, retries: o.Retries()}}

	// The SDK fills an empty APIKey, Backend or BaseURL from the environment (see
	// genai.NewInternalAPIClient): all three are set here so that it never does.
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:     o.APIKey,
		Backend:    genai.BackendGeminiAPI,
		HTTPClient: hc,
		HTTPOptions: genai.HTTPOptions{
			BaseURL:    base,
			APIVersion: version,
			// One attempt per request at the SDK level: its retry loop ignores Retry-After, so
			// retries of 429, 5xx and connection errors happen in retryTransport below it,
			// before the first byte of the stream, o.Retries() times.
			RetryOptions: &genai.HTTPRetryOptions{Attempts: genai.Ptr[int32](1)},
		},
	})
	if err != nil {
		// The SDK's messages print the whole config, key included.
		return nil, fmt.Errorf("%s: client: %s", name, o.Redactor().Message(err.Error()))
	}
	return &Provider{o: o, name: name, client: client, red: o.Redactor(), calls: provider.CallMemo[callMeta]{Size: maxCalls}}, nil
}

// eventLimitKey carries the *eventLimit of a call to limitTransport, under the SDK.
type eventLimitKey struct{}

// eventLimit is provider.Request.EventLimit of one call, and the error it ended the body with.
type eventLimit struct {
	max int
	mu  sync.Mutex
	err error
}

func (l *eventLimit) tripped() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// limitTransport bounds each event of a streamed response, which the SDK reads as one line of
// up to 256 MB and decodes whole (see provider.LimitEvents).
type limitTransport struct{ base http.RoundTripper }

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if l, ok := req.Context().Value(eventLimitKey{}).(*eventLimit); ok && err == nil && resp.Body != nil {
		resp.Body = &limitedBody{ReadCloser: provider.LimitEvents(resp.Body, l.max), l: l}
	}
	return resp, err
}

// limitedBody records the limit's error, which the SDK does not pass on.
type limitedBody struct {
	io.ReadCloser
	l *eventLimit
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, provider.ErrResponseTooLarge) {
		b.l.mu.Lock()
		b.l.err = err
		b.l.mu.Unlock()
	}
	return n, err
}

// splitBaseURL returns the host root and API version for a configured base URL.
// SplitBaseURL is how a Gemini base_url is read: the host root, and the API version a
// trailing /v1beta, /v1 or /v1alpha selects (default v1beta). Others calling Gemini (the media
// tools) read base URLs the same way.
func SplitBaseURL(raw string) (base, version string, err error) { return splitBaseURL(raw) }

func splitBaseURL(raw string) (base, version string, err error) {
	if raw == "" {
		raw = DefaultBaseURL
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", fmt.Errorf("base_url %q is not an http(s) URL", redact.URL(raw))
	}
	version = defaultAPIVersion
	p := strings.TrimRight(u.Path, "/")
	if i := strings.LastIndex(p, "/"); i >= 0 {
		if last := p[i+1:]; last == "v1beta" || last == "v1" || last == "v1alpha" {
			version, p = last, p[:i]
		}
	}
	u.Path = p + "/"
	u.RawPath = ""
	return u.String(), version, nil
}

// Stream makes one streamed call. The request starts on the first pull; breaking out of the
// loop closes it. Errors are *provider.Error values, wrapping ctx.Err() when ctx ended the call.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		model := req.Model
		if model == "" {
			model = p.o.Model
		}
		if model == "" {
			yield(nil, &provider.Error{Provider: p.name, Fatal: true, Err: errors.New("no model configured")})
			return
		}
		contents, cfg, err := p.toWire(req)
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				pe = &provider.Error{Provider: p.name, Fatal: true, Err: err}
			}
			yield(nil, pe)
			return
		}
		t := &translator{nextID: p.nextID, hostedID: p.hostedID, remember: p.rememberCall, perQuery: perQuerySearch(model),
			budget: provider.NewBudget(req)}
		if textCallMode(p.o, req) {
			t.text = &textCalls{}
		}
		lim := &eventLimit{max: req.EventLimit()}
		for resp, err := range p.client.Models.GenerateContentStream(context.WithValue(ctx, eventLimitKey{}, lim), model, contents, cfg) {
			if err != nil {
				// The SDK reports the cut line it was left with, not why it was cut.
				t.fail(p.wireError(ctx, model, cmp.Or(lim.tripped(), err)))
				break
			}
			for _, c := range t.chunk(resp) {
				if !yield(c, nil) {
					return
				}
			}
			if t.err != nil {
				break
			}
		}
		if cerr := ctx.Err(); cerr != nil && t.finish == "" {
			// However the SDK ended the stream, ctx is why.
			t.fail(&provider.Error{Provider: p.name, Err: fmt.Errorf("stream: %w", cerr)})
		}
		chunks, err := t.end()
		for _, c := range chunks {
			if !yield(c, nil) {
				return
			}
		}
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				err = &provider.Error{Provider: p.name, Err: err}
			}
			yield(nil, err)
		}
	}
}

func (p *Provider) nextID() string { return fmt.Sprintf("call_%d", p.ids.Add(1)) }

// hostedID shares the call counter so that hosted runs and calls never share an ID.
func (p *Provider) hostedID(name string) string { return fmt.Sprintf("%s_%d", name, p.ids.Add(1)) }

// wireError turns an SDK or transport error into a *provider.Error that never holds the key.
func (p *Provider) wireError(ctx context.Context, model string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return &provider.Error{Provider: p.name, Err: fmt.Errorf("stream: %w", cerr)}
	}
	var ae genai.APIError
	var aep *genai.APIError
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &aep) && aep != nil:
		ae = *aep
	case errors.Is(err, provider.ErrResponseTooLarge):
		return &provider.Error{Provider: p.name, Err: err}
	default:
		// A malformed chunk's message quotes the chunk: clip it.
		return &provider.Error{Provider: p.name, Err: errors.New("stream: " + clip(p.red.Message(err.Error())))}
	}
	detail := clip(p.red.Message(ae.Message))
	reason := errorReason(ae)
	if tag := strings.Trim(ae.Status+", "+reason, ", "); tag != "" {
		detail += " (" + tag + ")"
	}
	if ae.Code == 0 {
		return &provider.Error{Provider: p.name, Err: errors.New(detail)}
	}
	if ae.Code == http.StatusBadRequest && reason == "API_KEY_INVALID" {
		// The Gemini API answers a bad key with 400 INVALID_ARGUMENT, not 401.
		e := provider.StatusError(p.o, http.StatusUnauthorized, detail)
		e.Status = ae.Code
		return e
	}
	if ae.Code == http.StatusBadRequest && (p.o.WebSearch || p.o.CodeExecution) && hostedToolsRejected(ae.Message) {
		return p.hostedToolsError(model, detail)
	}
	return provider.StatusError(p.o, ae.Code, detail)
}

// errorReason returns the google.rpc.ErrorInfo reason of an API error, if any.
func errorReason(ae genai.APIError) string {
	for _, d := range ae.Details {
		if r, ok := d["reason"].(string); ok && r != "" {
			return r
		}
	}
	return ""
}

// clip shortens a service message (an HTML error page, say) to something readable.
func clip(s string) string {
	const max = 500
	s = strings.TrimSpace(s)
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}

// callMeta is what a later request must send back about a call.
type callMeta struct {
	signature []byte // the thought signature of the functionCall part
	apiID     bool   // the ID came from the API, so it is sent back
	// raw: a tool_call block that did not parse, so Arguments hold the block as the model
	// wrote it and the request replays it as it was.
	raw bool
}

// maxCalls bounds the calls whose metadata is kept: only the latest turns come back.
const maxCalls = 4096

// rememberCall keeps what a call needs when it is sent back; calls that need nothing are not
// stored.
func (p *Provider) rememberCall(id string, meta callMeta) {
	if len(meta.signature) == 0 && !meta.apiID && !meta.raw {
		return
	}
	p.calls.Put(id, meta)
}
