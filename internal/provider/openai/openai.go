// Package openai is the `openai` backend: OpenAI's Responses API (POST {base}/responses,
// streamed as server-sent events) through the official openai-go SDK. It translates the
// neutral provider.Request into a Responses request and the stream's events back into
// neutral chunks, and nothing else.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/provider"
	"massgen/internal/redact"
)

// DefaultBaseURL is used when Options.BaseURL is empty. Like every OpenAI-style base URL it
// includes the /v1 prefix.
const DefaultBaseURL = "https://api.openai.com/v1"

// Provider streams calls to the Responses API. It is safe for concurrent use.
type Provider struct {
	o   provider.Options
	svc responses.ResponseService
	red *redact.Redactor // the key and the base URL's credentials
}

var _ provider.Provider = (*Provider)(nil)

// New builds the backend from o. It reads nothing from the environment: the key, base URL,
// organisation and headers are exactly what o says, whatever OPENAI_* variables are set.
// o.Type defaults to "openai" and names the backend in errors.
func New(o provider.Options) (*Provider, error) {
	if o.Type == "" {
		o.Type = "openai"
	}
	// responses.NewResponseService is what openai.NewClient builds for client.Responses, minus
	// NewClient's environment defaults (OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID,
	// OPENAI_PROJECT_ID, OPENAI_ADMIN_KEY, OPENAI_CUSTOM_HEADERS), which we must not inherit:
	// they would change the key, the organisation and the headers behind the config's back.
	// OPENAI_BASE_URL is honoured, but by app.BaseURL, which puts it in o.BaseURL, where the
	// run header and metadata.json show where the requests go.
	svc := responses.NewResponseService(requestOptions(o)...)
	return &Provider{o: o, svc: svc, red: o.Redactor()}, nil
}

// requestOptions are the SDK options of every service built from o: its base URL (OpenAI's
// by default), key, HTTP client and retries, and nothing from the environment.
func requestOptions(o provider.Options) []option.RequestOption {
	base := o.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	var hc option.HTTPClient = defaultHTTPClient()
	if o.HTTPClient != nil {
		hc = o.HTTPClient
	}
	return []option.RequestOption{option.WithBaseURL(base), option.WithAPIKey(o.APIKey), option.WithHTTPClient(hc),
		option.WithMaxRetries(o.Retries())}
}

// defaultHTTPClient is shared by every backend built without Options.HTTPClient, so that
// agents reuse connections. Like the SDK's own default it bounds the wait for response
// headers (not the stream), so a server that accepts and never answers cannot hang a call
// that has no deadline.
var defaultHTTPClient = sync.OnceValue(func() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = 10 * time.Minute
		return &http.Client{Transport: t}
	}
	return &http.Client{}
})

// Stream makes one streamed call. The request starts on the first pull; breaking out of the
// loop closes it. After an error nothing more is yielded.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		params, opts, err := p.toWire(req)
		if err != nil {
			yield(nil, err)
			return
		}
		var raw *http.Response
		opts = append(opts, option.WithResponseInto(&raw), option.WithMiddleware(limitEvents(req.EventLimit())))
		stream := p.svc.NewStreaming(ctx, params, opts...)
		defer stream.Close()

		tr := translator{budget: provider.NewBudget(req)}
		for stream.Next() {
			if ctx.Err() != nil {
				break
			}
			chunks, err := tr.event(stream.Current())
			for _, c := range chunks {
				if !yield(c, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, p.streamError(err))
				return
			}
			if tr.finished {
				return
			}
		}
		if ctx.Err() != nil {
			yield(nil, &provider.Error{Provider: p.o.Type, Err: fmt.Errorf("stream: %w", ctx.Err())})
			return
		}
		if err := stream.Err(); err != nil {
			yield(nil, p.requestError(err, raw))
			return
		}
		yield(nil, p.streamError(errTruncated))
	}
}

// limitEvents bounds every event of the response body, which the SDK would otherwise buffer
// whole however large (see provider.LimitEvents).
func limitEvents(max int) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return provider.LimitResponse(max)(next(r))
	}
}

// errTruncated is a stream that ended without response.completed, .incomplete or .failed.
var errTruncated = errors.New("stream ended before response.completed")

// streamError wraps a failure reported inside a 200 stream. It can be retried.
func (p *Provider) streamError(err error) error {
	return &provider.Error{Provider: p.o.Type, Err: p.scrubbed(err)}
}

// requestError classifies what the SDK returned after its own retries: an HTTP status goes
// through provider.StatusError (401/403/404 fatal), anything else (a dropped connection, a
// malformed event) is retryable.
func (p *Provider) requestError(err error, raw *http.Response) error {
	var ae *responses.Error
	if errors.As(err, &ae) {
		return provider.StatusError(p.o, ae.StatusCode, p.red.Message(apiDetail(ae)))
	}
	// An error body that is not OpenAI's JSON (a proxy's HTML page) makes the SDK return its
	// decoding error instead of an *Error; the status is still what counts.
	if raw != nil && raw.StatusCode >= 400 {
		detail := http.StatusText(raw.StatusCode)
		if raw.Body != nil {
			b, _ := io.ReadAll(io.LimitReader(raw.Body, 512))
			if s := strings.TrimSpace(string(b)); s != "" {
				detail = s
			}
		}
		return provider.StatusError(p.o, raw.StatusCode, p.red.Message(detail))
	}
	return p.streamError(fmt.Errorf("stream: %w", err))
}

// apiDetail is the service's own explanation of a failed request.
func apiDetail(ae *responses.Error) string {
	msg := ae.Message
	if msg == "" {
		msg = http.StatusText(ae.StatusCode)
	}
	if ae.Code != "" {
		msg += " (" + ae.Code + ")"
	}
	return msg
}

// scrubbed keeps err (and what it wraps) unless its text mentions a key, in any of the forms
// redact.Redactor.Message knows ("Incorrect API key provided: sk-proj-****abcd", the key
// without its prefix, ...).
func (p *Provider) scrubbed(err error) error {
	if s := err.Error(); p.red.Message(s) != s {
		return errors.New(p.red.Message(s))
	}
	return err
}
