// Package chat is the backend for OpenAI-compatible Chat Completions services: the
// chatcompletion type and every preset that speaks the same protocol (grok, cerebras, together,
// fireworks, groq, openrouter, moonshot, nebius, poe, qwen, zai, deepseek, and the local servers
// ollama, lmstudio, vllm and sglang), and Azure OpenAI (azure.go). It streams POST
// {base}/chat/completions through github.com/openai/openai-go/v3 and translates at the edge:
// provider.Request to the wire request (request.go) and the wire stream to provider chunks
// (stream.go).
//
// The SDK client is built without its environment defaults, so no OPENAI_* variable changes
// where requests go or which key is sent: the base URL and key come from provider.Options only.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"massgen/internal/provider"
	"massgen/internal/redact"
)

// responseHeaderTimeout bounds the wait for the response headers of one attempt when the caller
// gives no HTTP client (the SDK's own default).
const responseHeaderTimeout = 10 * time.Minute

// Provider streams chat completions from one OpenAI-compatible service. It holds no per-call
// state and is safe for concurrent use.
type Provider struct {
	o   provider.Options
	svc openai.ChatCompletionService
	red *redact.Redactor // the key and the base URL's credentials
	// azure is the resource's endpoint for azure_openai, whose requests go to their model's
	// deployment; nil for the other types.
	azure *url.URL
}

var _ provider.Provider = (*Provider)(nil)

// New builds a backend for o. o.BaseURL is required (the caller fills the preset's default from
// the backend table) and must include the version path, as in "https://api.groq.com/openai/v1".
// An empty o.APIKey sends no Authorization header, which is what local servers (ollama, vllm,
// lmstudio, sglang) started without a key accept.
func New(o provider.Options) (*Provider, error) {
	if o.Type == "" {
		o.Type = "chatcompletion"
	}
	if o.BaseURL == "" {
		return nil, fmt.Errorf("chat: %s: base_url is required", o.Type)
	}
	u, err := url.Parse(o.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("chat: %s: base_url %q must be an http or https URL", o.Type, redact.URL(o.BaseURL))
	}
	client := o.HTTPClient
	if client == nil {
		client = defaultHTTPClient()
	}
	opts := []option.RequestOption{option.WithBaseURL(o.BaseURL), option.WithHTTPClient(client), option.WithMaxRetries(o.Retries())}
	var azure *url.URL
	switch {
	case o.Type == Azure:
		az, err := azureOptions(o, u, client)
		if err != nil {
			return nil, err
		}
		opts, azure = append(opts, az...), u
	case o.APIKey != "":
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	// NewChatCompletionService, unlike openai.NewClient, reads no environment variable.
	return &Provider{o: o, svc: openai.NewChatCompletionService(opts...), red: o.Redactor(), azure: azure}, nil
}

func defaultHTTPClient() *http.Client {
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t = t.Clone()
		t.ResponseHeaderTimeout = responseHeaderTimeout
		return &http.Client{Transport: t}
	}
	return &http.Client{}
}

// Stream implements provider.Provider. The HTTP request starts on the first pull; breaking out
// of the loop closes the response body.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		params, err := toWire(p.o, req)
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				pe = &provider.Error{Provider: p.o.Type, Fatal: true, Err: err}
			}
			yield(nil, pe)
			return
		}
		// resp is kept even when the SDK fails to parse an error body it does not know, such as
		// vLLM's {"error": "Unauthorized"}, so the status still decides what the error means.
		var resp *http.Response
		opts := []option.RequestOption{option.WithResponseInto(&resp), option.WithMiddleware(limitEvents(req.EventLimit()))}
		if p.azure != nil {
			d, err := azureDeployment(p.azure, string(params.Model))
			if err != nil {
				yield(nil, &provider.Error{Provider: p.o.Type, Fatal: true, Err: err})
				return
			}
			opts = append(opts, d)
		}
		s := p.svc.NewStreaming(ctx, params, opts...)
		defer s.Close()
		t := translator{budget: provider.NewBudget(req)}
		for s.Next() {
			out, err := t.add(s.Current())
			for _, c := range out {
				if !yield(c, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, &provider.Error{Provider: p.o.Type, Err: err})
				return
			}
		}
		if err := s.Err(); err != nil {
			yield(nil, p.streamError(ctx, err, resp))
			return
		}
		out, err := t.end()
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("stream: %w", ctx.Err())
			}
			yield(nil, &provider.Error{Provider: p.o.Type, Err: err})
			return
		}
		for _, c := range out {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// limitEvents bounds every event of the response body, which the SDK would otherwise buffer
// whole however large (see provider.LimitEvents).
func limitEvents(max int) option.Middleware {
	return func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		return provider.LimitResponse(max)(next(r))
	}
}

// streamError turns what the SDK reported into a *provider.Error: HTTP errors by status, a
// cancelled or expired ctx wrapping ctx.Err(), anything else (connection lost, malformed
// event, error event) retryable.
func (p *Provider) streamError(ctx context.Context, err error, resp *http.Response) error {
	if ctx.Err() != nil {
		return &provider.Error{Provider: p.o.Type, Err: fmt.Errorf("stream: %w", ctx.Err())}
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		detail := apiDetail(apiErr)
		if detail == "" {
			detail = bodyDetail(apiErr.Response)
		}
		return provider.StatusError(p.o, apiErr.StatusCode, p.red.Message(detail))
	}
	if resp != nil && resp.StatusCode >= 400 {
		return provider.StatusError(p.o, resp.StatusCode, p.red.Message(bodyDetail(resp)))
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		return &provider.Error{Provider: p.o.Type,
			Err: fmt.Errorf("stream: the service sent an error: %s", p.red.Message(eventDetail(se)))}
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return &provider.Error{Provider: p.o.Type, Err: p.red.Error(fmt.Errorf("stream: malformed event: %w", err))}
	}
	// A transport error quotes the request URL, credentials and all.
	return &provider.Error{Provider: p.o.Type, Err: p.red.Error(fmt.Errorf("stream: %w", err))}
}

// apiDetail is the service's own message of an HTTP error in OpenAI's shape, with its type and
// code when given; "" when there is no message.
func apiDetail(e *openai.Error) string {
	msg := e.Message
	if msg == "" {
		return ""
	}
	var extra []string
	if e.Type != "" {
		extra = append(extra, "type "+e.Type)
	}
	if e.Code != "" {
		extra = append(extra, "code "+e.Code)
	}
	if len(extra) > 0 {
		msg += " [" + strings.Join(extra, ", ") + "]"
	}
	return msg
}

// bodyDetail is the message of an error body in another shape than OpenAI's: {"error": "..."}
// (vLLM, LM Studio), {"message": "..."} (older vLLM), {"detail": "..."} (FastAPI servers), or
// short plain text; otherwise the status text.
func bodyDetail(resp *http.Response) string {
	status := "no response"
	if resp != nil {
		status = http.StatusText(resp.StatusCode)
	}
	if resp == nil || resp.Body == nil {
		return status
	}
	// The SDK has read the body already and left a copy in memory.
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		for _, k := range []string{"error", "message", "detail"} {
			if v, ok := m[k].(string); ok && v != "" {
				return v
			}
		}
		if e, ok := m["error"].(map[string]any); ok {
			if v, ok := e["message"].(string); ok && v != "" {
				return v
			}
		}
		return status
	}
	text := strings.TrimSpace(string(b))
	if text == "" || strings.HasPrefix(text, "<") || len(text) > 300 {
		return status
	}
	return text
}

// eventDetail is the message of an error event sent inside a stream ({"error": {...}}).
func eventDetail(se *ssestream.StreamError) string {
	var ev struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(se.Event.Data, &ev) == nil && ev.Error.Message != "" {
		if ev.Error.Code != nil {
			return fmt.Sprintf("%s [code %v]", ev.Error.Message, ev.Error.Code)
		}
		return ev.Error.Message
	}
	return strings.TrimPrefix(se.Message, "received error while streaming: ")
}
