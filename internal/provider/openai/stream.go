package openai

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/provider"
)

// translator maps Responses stream events to neutral chunks. It assembles function calls
// from output_item.added (call_id, name), function_call_arguments.delta/.done and
// output_item.done, and emits each call once, when its item is done. The zero value is ready.
type translator struct {
	calls    map[int64]*pendingCall // by output_index
	emitted  map[string]bool        // call_ids already sent
	nCalls   int
	finished bool // a terminal event was handled: read nothing more

	hostedSeen map[string]bool   // hosted items (web_search_call, code_interpreter_call) sent, by id
	code       map[string]string // code_interpreter_call_code.done by item id, should the item lack it
	searches   int64             // completed web searches, which OpenAI bills per call
	fileCalls  int64             // completed file searches, billed per call too

	// budget bounds what the response brings in, the arguments being assembled here included
	// (nil: unbounded, for tests of the translation alone).
	budget *provider.Budget
}

type pendingCall struct {
	callID, name string
	args         []byte
	done         bool
}

// event handles one event. The chunks come before the error, if any; after a terminal event
// (completed, incomplete, failed, error) finished is set.
func (t *translator) event(ev responses.ResponseStreamEventUnion) ([]provider.Chunk, error) {
	if err := t.spend(ev); err != nil {
		t.finished = true
		return nil, err
	}
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		if ev.Delta != "" {
			return []provider.Chunk{provider.TextDelta{Text: ev.Delta}}, nil
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if ev.Delta != "" {
			return []provider.Chunk{provider.ReasoningDelta{Text: ev.Delta}}, nil
		}
	case "response.reasoning_summary_part.added":
		if ev.SummaryIndex > 0 { // keep summary parts apart, as the API's own text does
			return []provider.Chunk{provider.ReasoningDelta{Text: "\n\n"}}, nil
		}
	case "response.output_item.added":
		if ev.Item.Type == "function_call" {
			fc := ev.Item.AsFunctionCall()
			c := t.call(ev.OutputIndex)
			c.callID, c.name = fc.CallID, fc.Name
			c.args = append(c.args[:0], fc.Arguments...)
		}
	case "response.function_call_arguments.delta":
		c := t.call(ev.OutputIndex)
		before := len(c.args)
		c.args = append(c.args, ev.Delta...)
		if p, ok := provider.Progress(c.callID, c.name, before, len(c.args)); ok {
			return []provider.Chunk{p}, nil
		}
	case "response.function_call_arguments.done":
		c := t.call(ev.OutputIndex)
		if ev.Arguments != "" {
			c.args = append(c.args[:0], ev.Arguments...)
		}
	case "response.code_interpreter_call_code.done":
		if t.code == nil {
			t.code = map[string]string{}
		}
		t.code[ev.ItemID] = ev.Code
	case "response.output_item.done":
		if isHostedItem(ev.Item.Type) {
			return t.hosted(ev.Item), nil
		}
		if ev.Item.Type == "function_call" {
			fc := ev.Item.AsFunctionCall()
			c := t.call(ev.OutputIndex)
			c.callID = cmp.Or(fc.CallID, c.callID)
			c.name = cmp.Or(fc.Name, c.name)
			if fc.Arguments != "" {
				c.args = append(c.args[:0], fc.Arguments...)
			}
			c.done = true
			return t.emit(c), nil
		}
	case "response.completed":
		t.finished = true
		out := t.flush(ev.Response)
		out = append(out, t.usage(ev.Response)...)
		stop := "stop"
		if t.nCalls > 0 {
			stop = "tool_calls"
		}
		return append(out, provider.Done{StopReason: stop}), nil
	case "response.incomplete":
		t.finished = true
		out := t.usage(ev.Response)
		reason := ev.Response.IncompleteDetails.Reason
		// Running out of max_output_tokens ends the call, truncated but usable: retrying the
		// same request would only be cut off again. Calls whose item never finished are
		// dropped, their arguments being cut short too.
		if reason == "max_output_tokens" {
			return append(out, provider.Done{StopReason: "length"}), nil
		}
		if reason == "" {
			reason = "no reason given"
		}
		return out, fmt.Errorf("response incomplete: %s", reason)
	case "response.failed":
		t.finished = true
		e := ev.Response.Error
		msg := cmp.Or(e.Message, "no message")
		if e.Code != "" {
			msg += " (" + string(e.Code) + ")"
		}
		return t.usage(ev.Response), fmt.Errorf("response failed: %s", msg)
	case "error":
		t.finished = true
		msg := cmp.Or(ev.Message, "no message")
		if ev.Code != "" {
			msg += " (" + ev.Code + ")"
		}
		return nil, fmt.Errorf("error event: %s", msg)
	}
	// Everything else (response.created, .in_progress, content_part.*, output_text.done,
	// annotations, reasoning items, hosted tool progress and code deltas) carries nothing the
	// engine needs: hosted tools are reported whole, at their output_item.done.
	return nil, nil
}

// spend takes from the budget what ev adds to the response before any of it is kept: deltas
// in full, a call's name and ID once, and arguments given whole only where they outgrow the
// deltas they replace.
func (t *translator) spend(ev responses.ResponseStreamEventUnion) error {
	if t.budget == nil {
		return nil
	}
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta", "response.reasoning_summary_text.delta",
		"response.reasoning_text.delta", "response.function_call_arguments.delta":
		return t.budget.Spend(len(ev.Delta))
	case "response.output_item.added", "response.output_item.done":
		if ev.Item.Type != "function_call" {
			return nil
		}
		fc := ev.Item.AsFunctionCall()
		c := t.calls[ev.OutputIndex]
		if c == nil {
			return t.budget.Spend(len(fc.CallID) + len(fc.Name) + len(fc.Arguments))
		}
		return t.budget.Replace(len(c.args), len(fc.Arguments))
	case "response.function_call_arguments.done":
		old := 0
		if c := t.calls[ev.OutputIndex]; c != nil {
			old = len(c.args)
		}
		return t.budget.Replace(old, len(ev.Arguments))
	}
	return nil
}

func (t *translator) call(index int64) *pendingCall {
	if t.calls == nil {
		t.calls = map[int64]*pendingCall{}
	}
	c := t.calls[index]
	if c == nil {
		c = &pendingCall{}
		t.calls[index] = c
	}
	return c
}

// emit sends c unless a call with its call_id went out already.
func (t *translator) emit(c *pendingCall) []provider.Chunk {
	if t.emitted == nil {
		t.emitted = map[string]bool{}
	}
	if c.callID != "" {
		if t.emitted[c.callID] {
			return nil
		}
		t.emitted[c.callID] = true
	}
	t.nCalls++
	return []provider.Chunk{provider.ToolCallChunk{Call: provider.ToolCall{ID: c.callID, Name: c.name, Arguments: string(c.args)}}}
}

// flush emits, when the response completes, the calls whose output_item.done never came:
// first those assembled from the stream, then any that only the final response lists, hosted
// items included (those without an id cannot be told from ones already reported).
func (t *translator) flush(r responses.Response) []provider.Chunk {
	var out []provider.Chunk
	for _, i := range slices.Sorted(maps.Keys(t.calls)) {
		if c := t.calls[i]; !c.done && c.name != "" {
			out = append(out, t.emit(c)...)
		}
	}
	for _, item := range r.Output {
		if isHostedItem(item.Type) {
			if item.ID != "" {
				out = append(out, t.hosted(item)...)
			}
			continue
		}
		if item.Type != "function_call" {
			continue
		}
		fc := item.AsFunctionCall()
		if !t.emitted[fc.CallID] {
			out = append(out, t.emit(&pendingCall{callID: fc.CallID, name: fc.Name, args: []byte(fc.Arguments)})...)
		}
	}
	return out
}

// usage reads the response's token counts, with the searches the stream reported: the usage
// object does not count them, yet each is billed. OpenAI's input_tokens include the cached
// ones and output_tokens include reasoning, as provider.Usage wants.
func (t *translator) usage(r responses.Response) []provider.Chunk {
	if !r.JSON.Usage.Valid() && t.searches == 0 && t.fileCalls == 0 {
		return nil
	}
	u := r.Usage
	return []provider.Chunk{provider.UsageChunk{Usage: provider.Usage{
		InputTokens:       u.InputTokens,
		CachedInputTokens: u.InputTokensDetails.CachedTokens,
		OutputTokens:      u.OutputTokens,
		ReasoningTokens:   u.OutputTokensDetails.ReasoningTokens,
		WebSearches:       t.searches,
		FileSearches:      t.fileCalls,
	}}}
}
