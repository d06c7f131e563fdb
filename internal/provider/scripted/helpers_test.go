package scripted

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"massgen/internal/provider"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// shown is one answer block as the engine renders it.
type shown struct{ label, text string }

func block(a shown) string { return fmt.Sprintf("<%s>\n%s\n<end of %s>", a.label, a.text, a.label) }

func blocks(answers []shown) string {
	parts := make([]string, len(answers))
	for i, a := range answers {
		parts[i] = block(a)
	}
	return strings.Join(parts, "\n\n")
}

// userMsg is the first coordination message: the task and the current answers.
func userMsg(answers ...shown) provider.Message {
	cur := "(none yet)"
	if len(answers) > 0 {
		cur = blocks(answers)
	}
	return provider.Message{Role: provider.RoleUser, Content: "<ORIGINAL MESSAGE>\nWhat is 2+2?\n" +
		"<END OF ORIGINAL MESSAGE>\n\n<CURRENT ANSWERS>\n" + cur + "\n<END OF CURRENT ANSWERS>"}
}

// tools are the workflow tools with enum as the vote's agent_id enum (absent when empty).
func tools(enum ...string) []provider.ToolSpec {
	agentID := map[string]any{"type": "string"}
	if len(enum) > 0 {
		e := make([]any, len(enum))
		for i, l := range enum {
			e[i] = l
		}
		agentID["enum"] = e
	}
	return []provider.ToolSpec{
		{Name: "new_answer", Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"content": map[string]any{"type": "string"}}, "required": []any{"content"}}},
		{Name: "vote", Parameters: map[string]any{"type": "object", "properties": map[string]any{
			"agent_id": agentID, "reason": map[string]any{"type": "string"}}, "required": []any{"agent_id", "reason"}}},
	}
}

// coordReq is a fresh coordination request showing answers, whose labels make the vote enum.
func coordReq(answers ...shown) provider.Request {
	enum := make([]string, len(answers))
	for i, a := range answers {
		enum[i] = a.label
	}
	return provider.Request{
		System:   "You are one of several agents.",
		Messages: []provider.Message{userMsg(answers...)},
		Tools:    tools(enum...),
		Stage:    provider.StageInitial,
	}
}

// presentReq is a presentation request showing answers, own marked as the reader's.
func presentReq(own string, answers ...shown) provider.Request {
	var b strings.Builder
	b.WriteString("<ALL ANSWERS>\n")
	for i, a := range answers {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if a.label == own {
			b.WriteString("(your own answer)\n")
		}
		b.WriteString(block(a))
	}
	b.WriteString("\n<END OF ALL ANSWERS>\n\nPresent the final answer now.")
	return provider.Request{
		System:   "Present.",
		Messages: []provider.Message{{Role: provider.RoleUser, Content: b.String()}},
		Stage:    provider.StagePresentation,
	}
}

// reply continues req with the response r and one tool result per call, errors when isErr.
func reply(req provider.Request, r result, isErr bool, text string) provider.Request {
	msgs := append([]provider.Message(nil), req.Messages...)
	msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, Content: r.text, ToolCalls: r.calls})
	if len(r.calls) == 0 {
		msgs = append(msgs, provider.Message{Role: provider.RoleUser, Content: text})
	}
	for _, c := range r.calls {
		msgs = append(msgs, provider.Message{Role: provider.RoleTool, ToolCallID: c.ID, IsError: isErr, Content: text})
	}
	req.Messages = msgs
	return req
}

// result is everything one call streamed.
type result struct {
	reasoning, text string
	reasoningDeltas []string
	textDeltas      []string
	calls           []provider.ToolCall
	usage           []provider.Usage
	stop            string
	err             error
	kinds           []string // chunk kinds in order
	afterEnd        bool     // something came after Done or an error
}

func collect(t *testing.T, seq iter.Seq2[provider.Chunk, error]) result {
	t.Helper()
	var r result
	ended := false
	for c, err := range seq {
		if ended {
			r.afterEnd = true
		}
		if err != nil {
			r.err = err
			r.kinds = append(r.kinds, "error")
			ended = true
			continue
		}
		switch c := c.(type) {
		case provider.ReasoningDelta:
			r.reasoning += c.Text
			r.reasoningDeltas = append(r.reasoningDeltas, c.Text)
			r.kinds = append(r.kinds, "reasoning")
		case provider.TextDelta:
			r.text += c.Text
			r.textDeltas = append(r.textDeltas, c.Text)
			r.kinds = append(r.kinds, "text")
		case provider.ToolCallChunk:
			r.calls = append(r.calls, c.Call)
			r.kinds = append(r.kinds, "call")
		case provider.UsageChunk:
			r.usage = append(r.usage, c.Usage)
			r.kinds = append(r.kinds, "usage")
		case provider.Done:
			r.stop = c.StopReason
			r.kinds = append(r.kinds, "done")
			ended = true
		default:
			t.Fatalf("unexpected chunk %T", c)
		}
	}
	if r.afterEnd {
		t.Errorf("chunks after the end of the stream: %v", r.kinds)
	}
	return r
}

func run(t *testing.T, p *Provider, req provider.Request) result {
	t.Helper()
	return collect(t, p.Stream(t.Context(), req))
}

// summary renders the calls of r: "new_answer:<content>", "vote:<agent_id>", "text" when none.
func summary(t *testing.T, r result) string {
	t.Helper()
	if r.err != nil {
		return "error: " + r.err.Error()
	}
	if len(r.calls) == 0 {
		return "text"
	}
	var parts []string
	for _, c := range r.calls {
		var args struct {
			Content string `json:"content"`
			AgentID string `json:"agent_id"`
		}
		if err := json.Unmarshal([]byte(c.Arguments), &args); err != nil {
			parts = append(parts, c.Name+":<bad json>")
			continue
		}
		switch c.Name {
		case "new_answer":
			parts = append(parts, "new_answer:"+args.Content)
		case "vote":
			parts = append(parts, "vote:"+args.AgentID)
		default:
			parts = append(parts, c.Name)
		}
	}
	return strings.Join(parts, " + ")
}
