package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/provider"
	"massgen/internal/tool"
)

// eventContentLimit caps the tool arguments and results copied into events.
const eventContentLimit = event.MaxToolContent

// runTools runs the non-workflow calls of one response in order and appends their results to
// the conversation. Each call is bounded by the per-call timeout.
func (s *session) runTools(ctx context.Context, i int, c *conversation, calls []provider.ToolCall) {
	a := s.agents[i]
	for _, tc := range calls {
		if tc.Name == coord.ToolSubmitChecklist && s.m.Gated() {
			s.runChecklist(ctx, i, c, tc)
			continue
		}
		if s.isBroadcastTool(tc.Name) {
			s.runBroadcastTool(ctx, i, c, tc)
			continue
		}
		if s.isPlanTool(tc.Name) {
			s.runPlanTool(i, c, tc)
			continue
		}
		res, d := s.runTool(ctx, a, tc, c.round.cut)
		s.accountTool(i, res.Spent)
		content := res.Content
		ev := event.ToolResult{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, IsError: res.IsError, DurationMS: float64(d.Microseconds()) / 1000}
		ev.SetContent(content)
		s.publish(ev)
		c.msgs = append(c.msgs, provider.Message{Role: provider.RoleTool, ToolCallID: tc.ID, Content: content, IsError: res.IsError})
	}
}

// runTool runs one tool call, bounded by the per-call timeout and, when cut is set, by the
// end of the turn's round.
func (s *session) runTool(ctx context.Context, a Agent, tc provider.ToolCall, cut time.Time) (tool.Result, time.Duration) {
	t, ok := a.Tools.Find(tc.Name)
	if !ok {
		names := []string{coord.ToolNewAnswer, coord.ToolVote}
		for _, spec := range a.Tools.Specs() {
			names = append(names, spec.Name)
		}
		return tool.Errorf(fmt.Sprintf("unknown tool %q; available tools: %s", tc.Name, strings.Join(names, ", "))), 0
	}
	if s.heldBack(tc.Name) {
		return tool.Errorf(fmt.Sprintf("planning mode: %s is held back until the final presentation, because its effects cannot be undone; "+
			"do not call it now: describe in your answer what you would do with it (arguments, order), and the presenting agent will do it", tc.Name)), 0
	}
	if a.Permit != nil {
		// Before the call's time starts: waiting for a person's approval is not the tool's time.
		if refusal := a.Permit(ctx, tc.Name, tc.Arguments); refusal != "" {
			return tool.Errorf(refusal), 0
		}
	}
	limit, byRound := s.callLimit(cut)
	if t.Timeout > 0 && !byRound {
		limit = t.Timeout
		if !cut.IsZero() {
			limit = min(limit, max(cut.Sub(s.o.Now()), 0))
		}
	}
	if byRound && limit <= 0 {
		return tool.Errorf("not run: this round's time is up; finish with new_answer or vote"), 0
	}
	timedOut := fmt.Sprintf("timed out after %s", limit)
	if byRound {
		timedOut = "was cut off at the end of this round's time"
	}
	cctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	out := &toolOutput{publish: func(chunk string) {
		s.publish(event.ToolOutput{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, Text: chunk})
	}, emit: s.publish}
	cctx = tool.WithOutput(cctx, out.write)
	cctx = tool.WithImage(cctx, func(path string, data []byte) {
		out.image(event.ToolImage{Agent: a.ID, CallID: tc.ID, Tool: tc.Name, Path: path, Bytes: len(data), Thumb: thumbnail(data)})
	})
	start := s.o.Now()
	// The tool runs on a goroutine of its own so that one that ignores its context (a blocking
	// read, a syscall that cannot be interrupted) cannot hold the session past its deadline.
	done := make(chan tool.Result, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- t.Run(cctx, tc.Arguments)
	}()
	var res tool.Result
	select {
	case res = <-done:
	case <-cctx.Done():
		grace := time.NewTimer(s.o.ToolGrace)
		defer grace.Stop()
		select {
		case res = <-done:
		case <-grace.C:
			out.silence()
			s.mu.Lock()
			s.stragglers = append(s.stragglers, straggler{agent: a.ID, tool: tc.Name, finished: finished})
			s.mu.Unlock()
			why := timedOut
			if ctx.Err() != nil {
				why = "was cancelled because the session is ending"
			}
			return tool.Errorf(fmt.Sprintf("the call %s and did not stop within %s; it was abandoned and its result will not be used",
				why, s.o.ToolGrace)), s.o.Now().Sub(start)
		}
	}
	if cctx.Err() != nil && ctx.Err() == nil && !res.IsError {
		res = tool.Result{Content: "the call " + timedOut, IsError: true, Spent: res.Spent}
	}
	return res, s.o.Now().Sub(start)
}

// accountTool adds what a tool call paid a provider to agent i's cost. Only its cost counts:
// its tokens are another model's, so the agent's price does not apply to them.
func (s *session) accountTool(i int, spent provider.Usage) {
	if spent.CostUSD <= 0 && !spent.Unknown {
		return
	}
	s.account(i, provider.Usage{CostUSD: spent.CostUSD, Unknown: spent.Unknown, Estimated: spent.Estimated}, s.presenting.Load())
}

// toolOutput forwards what a running tool streams until the engine gives up on the tool:
// after silence returns, nothing it writes reaches the event stream, which may have ended.
type toolOutput struct {
	mu      sync.Mutex
	off     bool
	publish func(string)
	images  int
	emit    func(event.Payload)
}

// maxImages bounds the images one call shows; the rest are only in the workspace.
const maxImages = 50

func (o *toolOutput) image(p event.ToolImage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.off || o.images >= maxImages {
		return
	}
	o.images++
	o.emit(p)
}

func (o *toolOutput) write(chunk string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.off {
		o.publish(chunk)
	}
}

func (o *toolOutput) silence() {
	o.mu.Lock()
	o.off = true
	o.mu.Unlock()
}

// straggler is a tool run the engine gave up on; finished closes when it returns at last.
type straggler struct {
	agent, tool string
	finished    <-chan struct{}
}

// awaitStragglers gives the tool runs the session gave up on one more grace period to return,
// and reports those still running: the session cannot stop them, only say so.
func (s *session) awaitStragglers() {
	s.mu.Lock()
	runs := s.stragglers
	s.mu.Unlock()
	if len(runs) == 0 {
		return
	}
	grace := time.NewTimer(s.o.ToolGrace)
	defer grace.Stop()
	var running []string
	for _, r := range runs {
		select {
		case <-r.finished:
			continue
		default:
		}
		select {
		case <-r.finished:
		case <-grace.C:
			running = append(running, r.agent+"/"+r.tool)
			grace.Reset(0)
		}
	}
	if len(running) > 0 {
		s.publish(event.ToolServerStatus{Server: event.ServerTools, Status: "still running",
			Detail: fmt.Sprintf("%d tool call(s) ignored their cancellation and were still running when the session ended: %s",
				len(running), strings.Join(running, ", "))})
	}
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
