package scripted

import (
	"context"
	"time"
	"unicode"
	"unicode/utf8"

	"massgen/internal/provider"
)

// plan is one call's response, decided before anything is streamed.
type plan struct {
	hang      bool  // block until ctx is done
	err       error // fail after the latency
	reasoning string
	text      string
	calls     []provider.ToolCall
	stop      string
	usage     provider.Usage
	// submit is the well-formed answer this response carries, remembered once its call
	// has been delivered.
	submit *sent
}

// truncate makes pl a response the output token limit cut off: half its text, every call's
// arguments cut in half (so they no longer parse) and stop reason "length". Nothing in it is
// remembered as submitted.
func (pl *plan) truncate() {
	pl.text = halve(pl.text)
	for k, c := range pl.calls {
		c.Arguments = halve(c.Arguments)
		pl.calls[k] = c
	}
	pl.stop, pl.submit = "length", nil
}

func halve(s string) string {
	n := len(s) / 2
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// play streams pl: latency, reasoning and text word by word, tool calls, usage, Done.
func (p *Provider) play(ctx context.Context, pl *plan, yield func(provider.Chunk, error) bool) {
	if pl.hang {
		<-ctx.Done()
		yield(nil, ctx.Err())
		return
	}
	if err := sleep(ctx, p.script.Latency); err != nil {
		yield(nil, err)
		return
	}
	if pl.err != nil {
		yield(nil, pl.err)
		return
	}
	first := true
	send := func(c provider.Chunk) bool {
		if !first {
			if err := sleep(ctx, p.script.ChunkDelay); err != nil {
				yield(nil, err)
				return false
			}
		}
		first = false
		return yield(c, nil)
	}
	for _, w := range words(pl.reasoning) {
		if !send(provider.ReasoningDelta{Text: w}) {
			return
		}
	}
	for _, w := range words(pl.text) {
		if !send(provider.TextDelta{Text: w}) {
			return
		}
	}
	for _, c := range pl.calls {
		if !send(provider.ToolCallChunk{Call: c}) {
			return
		}
	}
	if pl.submit != nil {
		p.mu.Lock()
		p.pending = pl.submit
		p.mu.Unlock()
	}
	if yield(provider.UsageChunk{Usage: pl.usage}, nil) {
		yield(provider.Done{StopReason: pl.stop}, nil)
	}
}

// sleep waits d, or until ctx is done; it returns ctx.Err() if ctx is done, even for d <= 0.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// words splits s into pieces that each hold one word and the spaces after it (leading spaces
// go with the first word), so that concatenating them gives s back.
func words(s string) []string {
	var out []string
	start, prevSpace := 0, false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if prevSpace && !space && start < i && hasWord(s[start:i]) {
			out = append(out, s[start:i])
			start = i
		}
		prevSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func hasWord(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) {
			return true
		}
	}
	return false
}

// usageOf estimates tokens as characters / 4, at least 1 each way. Output counts everything
// streamed, reasoning included, plus the tool call arguments.
func usageOf(inputChars int, pl *plan) provider.Usage {
	out := utf8.RuneCountInString(pl.reasoning) + utf8.RuneCountInString(pl.text)
	for _, c := range pl.calls {
		out += utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
	}
	u := provider.Usage{InputTokens: tokens(inputChars), OutputTokens: tokens(out)}
	if pl.reasoning != "" {
		u.ReasoningTokens = tokens(utf8.RuneCountInString(pl.reasoning))
	}
	return u
}

func tokens(chars int) int64 { return int64(max(1, chars/4)) }
