package app

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"maps"
	"slices"
	"strings"
	"sync"

	"massgen/internal/config"
	"massgen/internal/event"
	"massgen/internal/mcptool"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/tool"
)

// The session's secrets are removed at the three places text enters it: what each model
// streams (redactingProvider), what each tool returns (redactTools), and every event on its way
// to a sink (redactingSinks), which also catches errors and MCP statuses. Commands are kept
// from reading keys elsewhere; this is the last line, for a key that got out anyway.

// sessionSecrets lists every secret value the session knows: each agent's api_key, every key
// variable any backend reads (set for this agent or not: a tool could print any of them), the
// credentials in base URLs, MCP servers' secret-looking env values and headers, and extra
// (the serve token).
func sessionSecrets(cfg *config.Config, getenv func(string) string, extra []string) []string {
	out := slices.Clone(extra)
	envs := map[string]bool{}
	for _, e := range config.KeyEnvNames() {
		envs[e] = true
	}
	for _, a := range cfg.Agents {
		out = append(out, a.Backend.APIKey)
		out = append(out, redact.URLSecrets(a.Backend.BaseURL)...)
		for _, e := range config.KeyEnvs(a.Backend.Type, a.Backend.BaseURL) {
			envs[e] = true
		}
		for _, s := range a.Backend.Tools.MCPServers {
			out = append(out, mcpSecrets(mcpServer(s), getenv)...)
		}
	}
	if b := cfg.Orchestrator.DSPy.Backend; b != nil {
		out = append(out, b.APIKey)
		out = append(out, redact.URLSecrets(b.BaseURL)...)
		for _, e := range config.KeyEnvs(b.Type, b.BaseURL) {
			envs[e] = true
		}
	}
	for _, e := range slices.Sorted(maps.Keys(envs)) {
		out = append(out, getenv(e))
	}
	return out
}

// mcpSecrets are the values of an MCP server's env variables and headers whose names say they
// are credentials, after ${VAR} expansion, and its URL's credentials.
func mcpSecrets(s mcptool.Server, getenv func(string) string) []string {
	if exp, err := mcptool.Expand(s, getenv); err == nil {
		s = exp
	}
	out := redact.URLSecrets(s.URL)
	for _, m := range []map[string]string{s.Env, s.Headers} {
		for k, v := range m {
			if !secretKey().MatchString(k) {
				continue
			}
			// "Authorization: Bearer <token>": the token is the secret, the scheme is not.
			if _, tok, ok := strings.Cut(v, " "); ok {
				v = tok
			}
			out = append(out, v)
		}
	}
	return out
}

// redactingProvider removes the session's secrets from everything a model streams before the
// engine sees it. Streamed text is held back by up to a secret's length so a key split across
// deltas is still caught; what is held is let out before any other chunk and at the end.
type redactingProvider struct {
	p   provider.Provider
	red *redact.Redactor
}

// redacting wraps p, keeping its provider.Finisher (a CLI agent's end-of-coordination usage).
func redacting(p provider.Provider, red *redact.Redactor) provider.Provider {
	rp := redactingProvider{p: p, red: red}
	if f, ok := p.(provider.Finisher); ok {
		return redactingFinisher{rp, f}
	}
	return rp
}

type redactingFinisher struct {
	redactingProvider
	f provider.Finisher
}

func (rf redactingFinisher) Finish(ctx context.Context) (provider.Usage, error) {
	u, err := rf.f.Finish(ctx)
	if err != nil {
		err = rf.error(err)
	}
	return u, err
}

func (rp redactingProvider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		text, reasoning := rp.red.Stream(), rp.red.Stream()
		// let emits what a stream holds as a chunk of its kind; false when the consumer stopped.
		let := func(s *redact.Stream, reason bool) bool {
			held := s.Flush()
			if held == "" {
				return true
			}
			if reason {
				return yield(provider.ReasoningDelta{Text: held}, nil)
			}
			return yield(provider.TextDelta{Text: held}, nil)
		}
		flush := func() bool { return let(reasoning, true) && let(text, false) }
		for c, err := range rp.p.Stream(ctx, req) {
			if err != nil {
				if flush() {
					yield(nil, rp.error(err))
				}
				return
			}
			ok := true
			switch v := c.(type) {
			case provider.TextDelta:
				// Reasoning comes before the answer: what is held of it is complete now.
				ok = let(reasoning, true)
				if s := text.Write(v.Text); ok && s != "" {
					ok = yield(provider.TextDelta{Text: s}, nil)
				}
			case provider.ReasoningDelta:
				ok = let(text, false)
				if s := reasoning.Write(v.Text); ok && s != "" {
					ok = yield(provider.ReasoningDelta{Text: s}, nil)
				}
			case provider.UsageChunk:
				ok = yield(v, nil) // numbers only, and their place in the stream does not matter
			case provider.ToolCallProgress:
				// A count for views; the text held back stays held.
				v.ID, v.Name = rp.red.String(v.ID), rp.red.String(v.Name)
				ok = yield(v, nil)
			case provider.ToolCallChunk:
				v.Call = rp.call(v.Call)
				ok = flush() && yield(v, nil)
			case provider.HostedToolChunk:
				v.Call = rp.call(v.Call)
				v.Result = rp.red.String(v.Result)
				ok = flush() && yield(v, nil)
			default: // Done, and whatever comes later: the text before it is complete
				ok = flush() && yield(c, nil)
			}
			if !ok {
				return
			}
		}
		flush()
	}
}

// call redacts a tool call's arguments, keeping them valid JSON when they were.
func (rp redactingProvider) call(c provider.ToolCall) provider.ToolCall {
	c.Arguments = redactJSON(rp.red, c.Arguments)
	return c
}

// error redacts a provider error's message, keeping its kind (fatal, status) for the engine.
func (rp redactingProvider) error(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) {
		inner := rp.red.Error(pe.Err)
		if inner == pe.Err {
			return err
		}
		cp := *pe
		cp.Err = inner
		return &cp
	}
	return rp.red.Error(err)
}

// redactJSON redacts the strings of a JSON document (object keys too) and encodes it again,
// so a key inside a string does not break the quoting around it; text that is not one JSON
// document is redacted as text.
func redactJSON(red *redact.Redactor, s string) string {
	if red.String(s) == s {
		return s
	}
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil || d.More() {
		return red.String(s)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // arguments read as the model wrote them: "a < b"
	if err := enc.Encode(redactDecoded(red, v)); err != nil {
		return red.String(s)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// redactDecoded redacts every string of a decoded JSON value.
func redactDecoded(red *redact.Redactor, v any) any {
	switch x := v.(type) {
	case string:
		return red.String(x)
	case json.Number:
		return json.Number(red.String(string(x)))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactDecoded(red, e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[red.String(k)] = redactDecoded(red, e)
		}
		return out
	}
	return v
}

// redactTools wraps every tool so that its result, and the output it streams while it runs,
// lose the session's secrets before the engine (and so the model and the events) sees them.
func redactTools(set tool.Set, red *redact.Redactor) tool.Set {
	if red.Empty() || len(set) == 0 {
		return set
	}
	out := make(tool.Set, len(set))
	for i, t := range set {
		run := t.Run
		t.Run = func(ctx context.Context, args string) tool.Result {
			o := &redactingOutput{out: tool.Output(ctx), red: red, s: red.Stream()}
			res := run(tool.WithOutput(ctx, o.write), args)
			o.close()
			res.Content = red.String(res.Content)
			return res
		}
		out[i] = t
	}
	return out
}

// redactingOutput redacts a call's streamed output, holding back what may be the start of a
// secret until the next chunk or the end of the call. Tools may write from several goroutines.
type redactingOutput struct {
	mu     sync.Mutex
	out    tool.OutputFunc
	red    *redact.Redactor
	s      *redact.Stream
	closed bool
}

func (o *redactingOutput) write(chunk string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		// A straggler after the call returned (a background shell): nothing is held for it.
		if s := o.red.String(chunk); s != "" {
			o.out(s)
		}
		return
	}
	if s := o.s.Write(chunk); s != "" {
		o.out(s)
	}
}

// close lets out what is held when the call returns.
func (o *redactingOutput) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if s := o.s.Flush(); s != "" {
		o.out(s)
	}
	o.closed = true
}

// redactingSinks hands every event, its strings redacted, to the sinks behind it: the log
// directory, massgen.log, the views and the web server's stream.
type redactingSinks struct {
	red   *redact.Redactor
	sinks []event.Sink
}

func (rs *redactingSinks) Handle(e event.Event) {
	e.Payload = redact.Value(rs.red, e.Payload)
	for _, s := range rs.sinks {
		s.Handle(e)
	}
}
