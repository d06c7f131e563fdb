package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"massgen/internal/provider"
)

// translator maps Gemini response chunks to neutral chunks. It is a pure state machine: feed
// it every chunk with chunk (or a transport error with fail), then call end once.
//
// Gemini quirks it absorbs:
//   - usageMetadata is repeated on every chunk as a running total: only the last one counts,
//     and it is reported once, at the end;
//   - a final chunk may hold only finishReason and usage, or an empty text part;
//   - thought parts (thought=true) are reasoning, and parts may carry a thoughtSignature that
//     must be sent back with a function call;
//   - function calls arrive whole, never split across chunks, often without an ID;
//   - hosted code execution arrives as an executableCode part and, possibly chunks later, a
//     codeExecutionResult part; neither is answer text;
//   - groundingMetadata (the web searches and their sources) comes on the candidate, usually
//     on the last chunk, sometimes repeated.
type translator struct {
	// nextID names a call the API sent without an ID.
	nextID func() string
	// hostedID names a hosted tool run, which the wire never identifies for searches.
	hostedID func(name string) string
	// remember records what a later request must send back about a call.
	remember func(id string, meta callMeta)
	// perQuery: the model's searches are billed per query, not per grounded response.
	perQuery bool
	// text is set when the request asked for tool calls as text (see textcalls.go).
	text *textCalls

	pending []*genai.ExecutableCode // code whose result has not arrived yet
	queries []string                // web search queries, deduplicated
	sources []*genai.GroundingChunkWeb
	seen    map[string]bool // queries and sources already collected

	usage   *genai.GenerateContentResponseUsageMetadata
	finish  genai.FinishReason
	message string // the candidate's finishMessage
	calls   int
	err     error // the first error: a blocked prompt, a broken stream or a spent budget

	// budget bounds what the response brings in, the text held while a tool call written as
	// text is open and code waiting for its result included (nil: unbounded, for tests of the
	// translation alone).
	budget *provider.Budget
}

// chunk translates one response chunk. Only candidate 0 is read: the engine asks for one.
func (t *translator) chunk(resp *genai.GenerateContentResponse) []provider.Chunk {
	if resp == nil || t.err != nil {
		return nil
	}
	if resp.UsageMetadata != nil {
		t.usage = resp.UsageMetadata
	}
	if fb := resp.PromptFeedback; fb != nil && fb.BlockReason != "" {
		msg := fmt.Sprintf("prompt blocked (%s)", fb.BlockReason)
		if fb.BlockReasonMessage != "" {
			msg += ": " + fb.BlockReasonMessage
		}
		t.err = errors.New(msg)
		return nil
	}
	var out []provider.Chunk
	for _, c := range resp.Candidates {
		if c == nil || c.Index != 0 {
			continue
		}
		if c.FinishReason != "" && c.FinishReason != genai.FinishReasonUnspecified {
			t.finish = c.FinishReason
			t.message = c.FinishMessage
			if t.message == "" {
				t.message = blockedCategories(c.SafetyRatings)
			}
		}
		if c.GroundingMetadata != nil {
			t.ground(c.GroundingMetadata)
		}
		if c.Content == nil {
			continue
		}
		for _, p := range c.Content.Parts {
			if p == nil {
				continue
			}
			if err := t.spend(p); err != nil {
				t.fail(err)
				return out
			}
			if t.text != nil && breaksText(p) {
				out = appendText(out, t.text.boundary())
			}
			switch {
			case p.FunctionCall != nil:
				out = append(out, t.call(p))
			case p.ExecutableCode != nil:
				t.executable(p.ExecutableCode)
			case p.CodeExecutionResult != nil:
				out = append(out, t.codeResult(p.CodeExecutionResult))
			case p.Text == "":
				// Empty text parts, often carrying only a thoughtSignature.
			case p.Thought:
				out = append(out, provider.ReasoningDelta{Text: p.Text})
			case t.text != nil:
				out = appendText(out, t.text.feed(p.Text))
			default:
				out = append(out, provider.TextDelta{Text: p.Text})
			}
		}
	}
	return out
}

// spend takes from the budget what part p adds to the response. A call is counted by its
// arguments' size as the wire spelled them, roughly: the SDK has decoded them already, within
// the bound on one event (provider.LimitEvents).
func (t *translator) spend(p *genai.Part) error {
	if t.budget == nil {
		return nil
	}
	n := len(p.Text)
	if fc := p.FunctionCall; fc != nil {
		n += len(fc.ID) + len(fc.Name)
		if b, err := json.Marshal(fc.Args); err == nil {
			n += len(b)
		}
	}
	if ec := p.ExecutableCode; ec != nil {
		n += len(ec.Code)
	}
	if r := p.CodeExecutionResult; r != nil {
		n += len(r.Output)
	}
	return t.budget.Spend(n)
}

// call translates one complete functionCall part.
func (t *translator) call(p *genai.Part) provider.Chunk {
	fc := p.FunctionCall
	t.calls++
	args := []byte("{}")
	if len(fc.Args) > 0 {
		if b, err := json.Marshal(fc.Args); err == nil {
			args = b
		}
	}
	id := fc.ID
	meta := callMeta{signature: p.ThoughtSignature, apiID: id != ""}
	if id == "" {
		id = t.nextID()
	}
	t.remember(id, meta)
	return provider.ToolCallChunk{Call: provider.ToolCall{ID: id, Name: fc.Name, Arguments: string(args)}}
}

// fail records an error that ended the stream.
func (t *translator) fail(err error) {
	if t.err == nil {
		t.err = err
	}
}

// end returns the closing chunks and the error the stream ends with, if any. Hosted tool
// runs and usage come first, error or not: they happened and are billed either way. Tool
// calls written as text come after the rest of the text and the hosted runs.
func (t *translator) end() ([]provider.Chunk, error) {
	var out []provider.Chunk
	if t.text != nil {
		out = appendText(out, t.text.tail())
	}
	hosted, searches := t.hostedEnd()
	out = append(out, hosted...)
	if t.text != nil {
		out = append(out, t.textCallsEnd()...)
	}
	if u := t.usage; u != nil || searches > 0 {
		usage := provider.Usage{WebSearches: searches}
		if u != nil {
			// promptTokenCount already includes the cached tokens; tool-use prompt tokens
			// (search results fed back to the model) are billed as input too.
			usage.InputTokens = int64(u.PromptTokenCount) + int64(u.ToolUsePromptTokenCount)
			usage.CachedInputTokens = int64(u.CachedContentTokenCount)
			usage.OutputTokens = int64(u.CandidatesTokenCount) + int64(u.ThoughtsTokenCount)
			usage.ReasoningTokens = int64(u.ThoughtsTokenCount)
		}
		out = append(out, provider.UsageChunk{Usage: usage})
	}
	if t.err != nil {
		return out, t.err
	}
	stop, err := t.stopReason()
	if err != nil {
		return out, err
	}
	return append(out, provider.Done{StopReason: stop}), nil
}

// stopReason maps the finish reason to a neutral stop reason: "stop", "tool_calls",
// "max_tokens" or "continuation" (both cut short: the engine decides what to do). Blocked
// and failed generations are errors.
func (t *translator) stopReason() (string, error) {
	detail := func() string {
		if t.message != "" {
			return ": " + t.message
		}
		return ""
	}
	switch t.finish {
	case "":
		return "", errors.New("stream ended before the finish reason")
	case genai.FinishReasonStop:
		if t.calls > 0 {
			return "tool_calls", nil
		}
		return "stop", nil
	case genai.FinishReasonMaxTokens:
		return "max_tokens", nil
	case genai.FinishReasonContinuation:
		return "continuation", nil
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonBlocklist,
		genai.FinishReasonProhibitedContent, genai.FinishReasonSPII, genai.FinishReasonLanguage,
		genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent,
		genai.FinishReasonImageRecitation:
		return "", fmt.Errorf("response blocked (%s)%s", t.finish, detail())
	}
	return "", fmt.Errorf("generation stopped (%s)%s", t.finish, detail())
}

// blockedCategories names the safety categories that blocked (or likely blocked) a candidate.
func blockedCategories(ratings []*genai.SafetyRating) string {
	var cats []string
	for _, r := range ratings {
		if r != nil && (r.Blocked || r.Probability == genai.HarmProbabilityHigh) {
			cats = append(cats, fmt.Sprintf("%s %s", r.Category, r.Probability))
		}
	}
	return strings.Join(cats, ", ")
}
