package engine

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// eventContentLimit caps the tool output copied into events; the model still gets all of it.
const eventContentLimit = 4 << 10

// runTools runs the non-workflow calls of one response in order and appends their results to
// the conversation. Each call is bounded by the per-call timeout.
func (s *session) runTools(ctx context.Context, i int, c *conversation, calls []provider.ToolCall) {
	a := s.agents[i]
	for _, tc := range calls {
		res, d := s.runTool(ctx, a, tc)
		content := res.Content
		ev := event.ToolResult{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, IsError: res.IsError, DurationMS: float64(d.Microseconds()) / 1000}
		ev.Content, ev.Truncated = cut(content, eventContentLimit)
		s.publish(ev)
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: content, IsError: res.IsError})
	}
}

func (s *session) runTool(ctx context.Context, a Agent, tc provider.ToolCall) (tool.Result, time.Duration) {
	t, ok := a.Tools.Find(tc.Name)
	if !ok {
		names := []string{"new_answer", "vote"}
		for _, spec := range a.Tools.Specs() {
			names = append(names, spec.Name)
		}
		return tool.Errorf(fmt.Sprintf("unknown tool %q; available tools: %s", tc.Name, strings.Join(names, ", "))), 0
	}
	if s.heldBack(tc.Name) {
		return tool.Errorf(fmt.Sprintf("planning mode: %s is held back until the final presentation, because its effects cannot be undone; "+
			"do not call it now: describe in your answer what you would do with it (arguments, order), and the presenting agent will do it", tc.Name)), 0
	}
	cctx, cancel := context.WithTimeout(ctx, s.o.Timeouts.Agent)
	defer cancel()
	cctx = tool.WithOutput(cctx, func(chunk string) {
		s.publish(event.ToolOutput{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, Text: chunk})
	})
	start := s.o.Now()
	res := t.Run(cctx, tc.Arguments)
	if cctx.Err() != nil && ctx.Err() == nil && !res.IsError {
		res = tool.Errorf(fmt.Sprintf("the call timed out after %s", s.o.Timeouts.Agent))
	}
	return res, s.o.Now().Sub(start)
}

// cut returns s limited to n bytes (on a rune boundary) and whether it was cut.
func cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}
