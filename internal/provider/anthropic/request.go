package anthropic

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"massgen/internal/provider"
)

// reserved are body keys the translation owns: a pass-through param cannot replace them.
// Every other param, max_tokens included, is set in the body as it is.
var reserved = map[string]bool{"model": true, "messages": true, "system": true, "tools": true, "stream": true}

// call is one Messages request ready to send, kept so that a paused turn can be resumed.
type call struct {
	params sdk.MessageNewParams
	opts   []option.RequestOption
	// base is the conversation as first sent; a continuation appends the paused content to it.
	base []sdk.MessageParam
	// autoCache is set when a pass-through cache_control has the API place a breakpoint of its
	// own on the last block, so a continuation must not add one (the API allows four).
	autoCache bool
	// stable is set when a breakpoint marks the end of the shared prefix (Message.Stable):
	// with system, tools and the last block that makes four, so a continuation adds none.
	stable bool
}

// toWire translates a neutral request into Messages API params plus the per-request options
// (beta header) that go with them.
func (p *Provider) toWire(req provider.Request) (*call, error) {
	params := provider.MergeParams(p.o.Params, req.Params)
	model := cmp.Or(req.Model, p.o.Model)
	if model == "" {
		return nil, &provider.Error{Provider: p.name(), Fatal: true, Err: errors.New("no model configured")}
	}
	w := sdk.MessageNewParams{
		Model:     sdk.Model(model),
		MaxTokens: maxTokens(params),
		System:    toWireSystem(req.System),
		Tools:     toWireTools(req.Tools, p.o.WebSearch, p.o.CodeExecution),
		Messages:  toWireMessages(req.Messages, p.memo.lookup),
	}
	if err := attach(p.name(), w.Messages, req); err != nil {
		return nil, err
	}
	if req.ToolChoice == provider.ToolChoiceNone && len(w.Tools) > 0 {
		w.ToolChoice = sdk.ToolChoiceUnionParam{OfNone: &sdk.ToolChoiceNoneParam{}}
		delete(params, "tool_choice")
	}
	_, auto := params["cache_control"]
	stable := !auto && markStable(w.Messages, req.Messages)
	markLastBlock(w.Messages)

	c := &call{params: w, base: w.Messages, stable: stable}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		switch {
		case k == "betas":
			if b := betas(params[k]); b != "" {
				c.opts = append(c.opts, option.WithHeader("anthropic-beta", b))
			}
		case reserved[k]:
		default:
			c.autoCache = c.autoCache || k == "cache_control"
			c.opts = append(c.opts, option.WithJSONSet(provider.SJSONKey(k), params[k]))
		}
	}
	return c, nil
}

// resume points the call at the continuation of a paused turn: the conversation as first
// sent, then the content of every paused response exactly as received (server tool blocks
// included, which is what lets the API pick the turn up), in the container code execution
// used, so that its files are still there.
func (c *call) resume(paused []sdk.Message) {
	var blocks []sdk.ContentBlockParamUnion
	for _, m := range paused {
		// ToParam builds fresh blocks each time, so breakpoints set on an earlier
		// continuation do not pile up past the API's limit of four.
		blocks = append(blocks, m.ToParam().OfAssistant.Content...)
		if m.Container.ID != "" {
			c.params.Container = sdk.MessageCreateParamsContainerUnion{OfString: sdk.String(m.Container.ID)}
		}
	}
	msgs := slices.Clone(c.base)
	if n := len(msgs); n > 0 && msgs[n-1].OfAssistant != nil {
		// A prefilled reply: the paused content continues it, and turns must alternate.
		prev := *msgs[n-1].OfAssistant
		prev.Content = append(slices.Clone(prev.Content), blocks...)
		msgs[n-1] = sdk.MessageParam{OfAssistant: &prev}
	} else {
		msgs = append(msgs, sdk.NewAssistantMessage(blocks...))
	}
	if !c.autoCache && !c.stable {
		// Caches the paused content for the next continuation; the breakpoint on the
		// conversation before it stays, since a cache lookup only reaches 20 blocks back.
		markLastBlock(msgs)
	}
	c.params.Messages = msgs
}

// maxTokens is the configured max_tokens (the pass-through value wins anyway), else
// DefaultMaxTokens, raised above a thinking budget that would not fit in it.
func maxTokens(params map[string]any) int64 {
	if n, ok := number(params["max_tokens"]); ok {
		return n
	}
	if th, ok := params["thinking"].(map[string]any); ok {
		if budget, ok := number(th["budget_tokens"]); ok && budget >= DefaultMaxTokens {
			return budget + DefaultMaxTokens
		}
	}
	return DefaultMaxTokens
}

// number reads an integer from a decoded config value.
func number(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case int64:
		return n, true
	case uint:
		return int64(n), true
	case uint32:
		return int64(n), true
	case uint64:
		return int64(n), true
	case float32:
		return int64(n), n == float32(int64(n))
	case float64:
		return int64(n), n == float64(int64(n))
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// betas renders the `betas` param (a list or a comma-separated string) as a header value.
func betas(v any) string {
	var out []string
	switch b := v.(type) {
	case string:
		out = strings.Split(b, ",")
	case []string:
		out = b
	case []any:
		for _, x := range b {
			out = append(out, fmt.Sprint(x))
		}
	}
	for i := range out {
		out[i] = strings.TrimSpace(out[i])
	}
	return strings.Join(slices.DeleteFunc(out, func(s string) bool { return s == "" }), ",")
}

// toWireSystem is the top-level system prompt as one text block carrying the first cache
// breakpoint.
func toWireSystem(system string) []sdk.TextBlockParam {
	if system == "" {
		return nil
	}
	return []sdk.TextBlockParam{{Text: system, CacheControl: sdk.NewCacheControlEphemeralParam()}}
}

// toWireTools offers the function tools with their JSON Schemas, then the hosted tools the
// options switch on (they run on Anthropic's side; the stream reports them). The last tool of
// the list carries the second cache breakpoint, so system plus tools form one cached prefix.
//
// Code execution is code_execution_20250825, the newest version without the REPL persistence
// meant for programmatic tool calling: it is in the SDK's GA Messages API, needing no beta
// header, and runs both bash commands and file edits.
func toWireTools(tools []provider.ToolSpec, webSearch, codeExecution bool) []sdk.ToolUnionParam {
	out := make([]sdk.ToolUnionParam, 0, len(tools)+2)
	for _, t := range tools {
		tp := &sdk.ToolParam{Name: t.Name, InputSchema: toWireSchema(t.Parameters)}
		if t.Description != "" {
			tp.Description = sdk.String(t.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: tp})
	}
	if webSearch {
		out = append(out, sdk.ToolUnionParam{OfWebSearchTool20250305: &sdk.WebSearchTool20250305Param{}})
	}
	if codeExecution {
		out = append(out, sdk.ToolUnionParam{OfCodeExecutionTool20250825: &sdk.CodeExecutionTool20250825Param{}})
	}
	if len(out) == 0 {
		return nil
	}
	if cc := out[len(out)-1].GetCacheControl(); cc != nil {
		*cc = sdk.NewCacheControlEphemeralParam()
	}
	return out
}

// toWireSchema maps a JSON Schema object onto input_schema, keeping every other keyword
// (additionalProperties, $defs, ...) as it is.
func toWireSchema(schema map[string]any) sdk.ToolInputSchemaParam {
	var s sdk.ToolInputSchemaParam
	extra := map[string]any{}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			s.Required = stringList(v)
		default:
			extra[k] = v
		}
	}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	if len(extra) > 0 {
		s.ExtraFields = extra
	}
	return s
}

// stringList reads a list of strings from a decoded schema value.
func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// turn is one wire message under construction.
type turn struct {
	user   bool
	blocks []sdk.ContentBlockParamUnion
}

// toWireMessages turns the neutral conversation into alternating user and assistant turns:
// tool results become tool_result blocks of a user turn, consecutive turns of one role are
// merged (the API requires alternation), and empty messages are dropped (it rejects empty
// text). thinking returns the thinking blocks that preceded a tool call, which the API
// requires back when the conversation continues after that call with thinking on.
func toWireMessages(msgs []provider.Message, thinking func(callID string) []sdk.ContentBlockParamUnion) []sdk.MessageParam {
	var turns []turn
	for _, m := range msgs {
		user := m.Role != provider.RoleAssistant
		var blocks []sdk.ContentBlockParamUnion
		switch m.Role {
		case provider.RoleTool:
			blocks = append(blocks, toolResult(m))
		case provider.RoleAssistant:
			if len(m.ToolCalls) > 0 && thinking != nil {
				blocks = append(blocks, thinking(m.ToolCalls[0].ID)...)
			}
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, sdk.NewToolUseBlock(c.ID, toolInput(c.Arguments), c.Name))
			}
		default:
			if m.Content != "" {
				blocks = append(blocks, sdk.NewTextBlock(m.Content))
			}
		}
		if len(blocks) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].user == user {
			turns[n-1].blocks = append(turns[n-1].blocks, blocks...)
			continue
		}
		turns = append(turns, turn{user: user, blocks: blocks})
	}
	out := make([]sdk.MessageParam, len(turns))
	for i, t := range turns {
		if !t.user {
			out[i] = sdk.NewAssistantMessage(t.blocks...)
			continue
		}
		// tool_result blocks must open a user turn; text that arrived with them follows.
		slices.SortStableFunc(t.blocks, func(a, b sdk.ContentBlockParamUnion) int {
			return boolInt(b.OfToolResult != nil) - boolInt(a.OfToolResult != nil)
		})
		out[i] = sdk.NewUserMessage(t.blocks...)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// toolResult is a tool message as a tool_result block.
func toolResult(m provider.Message) sdk.ContentBlockParamUnion {
	r := &sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.Content != "" {
		r.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
	}
	if m.IsError {
		r.IsError = sdk.Bool(true)
	}
	return sdk.ContentBlockParamUnion{OfToolResult: r}
}

// toolInput is a call's arguments as the tool_use input object. Arguments that are not a
// JSON object (the model may have produced anything) become {} so the conversation can go on;
// the rejection already told the model what was wrong.
func toolInput(args string) json.RawMessage {
	args = strings.TrimSpace(args)
	if strings.HasPrefix(args, "{") && json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	return json.RawMessage("{}")
}

// markStable puts a cache breakpoint on the end of the last message marked Stable, unless it
// is the final message (which markLastBlock marks), so that requests sharing the prefix up to
// there (other agents' turns on the same answers, the agent's next turn) read it from the
// cache. It reports whether it placed one. toWireMessages drops only messages without blocks
// and merges turns without reordering text, so the stable message's text is found by its
// place among the non-empty user texts.
func markStable(wire []sdk.MessageParam, msgs []provider.Message) bool {
	last := -1
	for k, m := range msgs {
		if m.Stable && m.Role == provider.RoleUser && m.Content != "" {
			last = k
		}
	}
	if last < 0 || last == len(msgs)-1 {
		return false
	}
	text := msgs[last].Content
	// The last of the wire's text blocks with that text at or before its place is the one.
	for i := len(wire) - 1; i >= 0; i-- {
		u := wire[i].OfUser
		if u == nil {
			continue
		}
		for j := len(u.Content) - 1; j >= 0; j-- {
			if t := u.Content[j].OfText; t != nil && t.Text == text {
				if i == len(wire)-1 && j == len(u.Content)-1 {
					return false // the final block: markLastBlock's
				}
				t.CacheControl = sdk.NewCacheControlEphemeralParam()
				return true
			}
		}
	}
	return false
}

// markLastBlock puts the third cache breakpoint on the last block of the final message, so
// the whole conversation so far is cached for the next call of the turn.
func markLastBlock(msgs []sdk.MessageParam) {
	if len(msgs) == 0 {
		return
	}
	last := msgs[len(msgs)-1]
	var blocks []sdk.ContentBlockParamUnion
	switch {
	case last.OfUser != nil:
		blocks = last.OfUser.Content
	case last.OfAssistant != nil:
		blocks = last.OfAssistant.Content
	}
	for i := len(blocks) - 1; i >= 0; i-- {
		if cc := blocks[i].GetCacheControl(); cc != nil {
			*cc = sdk.NewCacheControlEphemeralParam()
			return
		}
	}
}
