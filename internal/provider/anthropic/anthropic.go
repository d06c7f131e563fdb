// Package anthropic is the `claude` backend: Anthropic's Messages API, streamed through the
// official SDK (github.com/anthropics/anthropic-sdk-go/v2). It translates a provider.Request
// into a Messages request (top-level system, alternating user and assistant turns, tool_use
// and tool_result blocks, prompt-cache breakpoints, pass-through params, the hosted web search
// and code execution tools) and the server-sent events back into neutral chunks, resuming
// turns the API pauses. Nothing else in massgen sees Anthropic's wire format.
package anthropic

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"massgen/internal/provider"
	"massgen/internal/redact"
)

const (
	// Type is the backend type name in the configuration.
	Type = "claude"
	// KeyEnv is the variable the API key conventionally comes from.
	KeyEnv = "ANTHROPIC_API_KEY"
	// DefaultBaseURL is the API host; the SDK adds /v1/messages.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxTokens is sent when the params set no max_tokens (MassGen's default).
	DefaultMaxTokens = 4096
)

// Provider streams Messages API calls. It is safe for concurrent use.
type Provider struct {
	o      provider.Options
	client sdk.Client
	memo   *thinkingMemo
	red    *redact.Redactor // the key and the base URL's credentials
}

var _ provider.Provider = (*Provider)(nil)

// New builds the backend from o. Only o is used: ANTHROPIC_* variables and the SDK's profile
// files are never read, so nothing in the environment can redirect the client or change its
// key. o.BaseURL is the host root (default DefaultBaseURL); o.HTTPClient, when nil, is a
// client shared by every Anthropic backend.
func New(o provider.Options) (*Provider, error) {
	o.Type = cmp.Or(o.Type, Type)
	if o.APIKey == "" {
		return nil, fmt.Errorf("anthropic: no API key: set %s", cmp.Or(o.KeyEnv, KeyEnv))
	}
	base := cmp.Or(o.BaseURL, DefaultBaseURL)
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic: base_url %q: want an http or https URL", redact.URL(base))
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = defaultClient()
	}
	client := sdk.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithoutOpenTelemetry(),
		option.WithAPIKey(o.APIKey),
		option.WithBaseURL(base),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(o.Retries()),
	)
	return &Provider{o: o, client: client, memo: newThinkingMemo(), red: o.Redactor()}, nil
}

// defaultClient is the SDK's own default: the standard transport with a bound on the wait for
// response headers (the body of a stream is not bounded; the caller's context is).
var defaultClient = sync.OnceValue(func() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = responseHeaderTimeout
		return &http.Client{Transport: t}
	}
	return &http.Client{}
})

const responseHeaderTimeout = 10 * time.Minute // as the SDK's default client

func (p *Provider) name() string { return p.o.Type }

// maxContinuations bounds the requests that resume a paused turn (stop_reason pause_turn):
// each is billed, and a turn still pausing after that many ends as it is.
const maxContinuations = 5

// stopPauseTurn is the stop reason of a long server-tool turn that the API paused.
const stopPauseTurn = "pause_turn"

// Stream makes one Messages call. The request starts on the first pull; breaking out of the
// loop closes it. A stream that ends without message_stop is a retryable error. A paused turn
// is resumed within the call, its continuation streaming on into the same iterator, so the
// engine sees one response with one Done.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		c, err := p.toWire(req)
		if err != nil {
			yield(nil, err)
			return
		}
		c.opts = append(c.opts, option.WithMiddleware(limitEvents(req.EventLimit())))
		t := newTranslator()
		t.budget = provider.NewBudget(req)
		var paused []sdk.Message
		for {
			// Only server tools pause a turn; without them nothing is accumulated (the SDK's
			// accumulator copies the text so far on every delta).
			resumable := (p.o.WebSearch || p.o.CodeExecution) && len(paused) < maxContinuations
			msg := p.exchange(ctx, c, t, resumable, yield)
			if msg == nil {
				return
			}
			paused = append(paused, *msg)
			c.resume(paused)
			t.next()
		}
	}
}

// exchange streams one request into yield. With resume set, a paused response ends without
// Done and is returned, for the caller to send back; otherwise it returns nil, whether the
// response ended, failed (the error already yielded) or the consumer stopped pulling.
func (p *Provider) exchange(ctx context.Context, c *call, t *translator, resume bool, yield func(provider.Chunk, error) bool) *sdk.Message {
	stream := p.client.Messages.NewStreaming(ctx, c.params, c.opts...)
	defer stream.Close()
	// A paused response must go back as the API sent it, which the SDK's accumulator keeps;
	// an accumulation error matters only if the response pauses.
	var msg sdk.Message
	var accErr error
	for stream.Next() {
		if ctx.Err() != nil {
			break
		}
		ev := stream.Current()
		if err := t.spend(ev); err != nil {
			yield(nil, &provider.Error{Provider: p.name(), Err: err})
			return nil
		}
		if resume && accErr == nil {
			accErr = msg.Accumulate(ev)
		}
		chunks, err := t.event(ev)
		if err != nil {
			yield(nil, &provider.Error{Provider: p.name(), Err: fmt.Errorf("malformed stream: %w", err)})
			return nil
		}
		pausing := t.done && resume && t.stop == stopPauseTurn && len(msg.Content) > 0
		switch {
		case pausing && accErr != nil:
			yield(nil, &provider.Error{Provider: p.name(), Err: fmt.Errorf("resume paused turn: %w", accErr)})
			return nil
		case pausing:
			chunks = slices.DeleteFunc(chunks, func(c provider.Chunk) bool { _, done := c.(provider.Done); return done })
		case t.done:
			p.memo.remember(t.thinkingBlocks())
		}
		for _, c := range chunks {
			if !yield(c, nil) {
				return nil
			}
		}
		if pausing {
			return &msg
		}
		if t.done {
			return nil
		}
	}
	if err := cmp.Or(ctx.Err(), stream.Err()); err != nil {
		yield(nil, p.wireError(ctx, err))
		return nil
	}
	yield(nil, &provider.Error{Provider: p.name(), Err: errors.New("stream ended before message_stop")})
	return nil
}

// limitEvents bounds every event of the response body, which the SDK would otherwise buffer
// whole however large (see provider.LimitEvents).
func limitEvents(max int) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return provider.LimitResponse(max)(next(r))
	}
}

// wireError turns an SDK error into a *provider.Error: HTTP statuses through
// provider.StatusError, an `error` event inside the stream (overloaded_error, ...) and
// transport or decoding failures as retryable, a done context as itself, wrapped.
func (p *Provider) wireError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return &provider.Error{Provider: p.name(), Err: fmt.Errorf("call: %w", ctxErr)}
	}
	var ae *sdk.Error
	if errors.As(err, &ae) {
		detail := p.red.Message(apiDetail(ae))
		if ae.StatusCode >= 400 {
			return provider.StatusError(p.o, ae.StatusCode, detail)
		}
		return &provider.Error{Provider: p.name(), Err: fmt.Errorf("error event in stream: %s", detail)}
	}
	if s := err.Error(); p.red.Message(s) != s {
		err = errors.New(p.red.Message(s))
	}
	return &provider.Error{Provider: p.name(), Err: fmt.Errorf("stream: %w", err)}
}

// apiDetail is the service's own account of an error, "type: message", or the start of a body
// that is not the API's JSON (a proxy's page). It never includes the request, whose headers
// hold the key.
func apiDetail(ae *sdk.Error) string {
	typ, msg := string(ae.Type()), strings.TrimSpace(ae.Message)
	switch {
	case typ != "" && msg != "":
		return typ + ": " + msg
	case typ != "" || msg != "":
		return typ + msg
	}
	if raw := strings.TrimSpace(ae.RawJSON()); raw != "" {
		if len(raw) > 200 {
			raw = raw[:200] + "..."
		}
		return raw
	}
	if ae.StatusCode >= 400 {
		return strings.ToLower(http.StatusText(ae.StatusCode))
	}
	return "unknown error"
}
