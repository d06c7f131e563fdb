package openai

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"massgen/internal/provider"
)

// owned are body keys the translation writes itself; pass-through params cannot replace them.
// tools and include from the params are merged in by toWire instead (see hostedTools).
var owned = map[string]bool{"model": true, "instructions": true, "input": true, "tools": true, "include": true, "stream": true}

// toWire translates a neutral request into Responses params plus the pass-through keys as
// body edits (Options.Params first, then Request.Params).
func (p *Provider) toWire(req provider.Request) (responses.ResponseNewParams, []option.RequestOption, error) {
	var params responses.ResponseNewParams
	model := req.Model
	if model == "" {
		model = p.o.Model
	}
	if model == "" {
		return params, nil, &provider.Error{Provider: p.o.Type, Fatal: true, Err: errors.New("no model configured")}
	}
	input, err := toWireInput(req.Messages)
	if err != nil {
		return params, nil, &provider.Error{Provider: p.o.Type, Fatal: true, Err: err}
	}
	if err := attach(p.o.Type, input, req.Attachments); err != nil {
		return params, nil, err
	}
	params.Model = model
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	if req.System != "" {
		params.Instructions = param.NewOpt(req.System)
	}
	merged := mergeParams(p.o.Params, req.Params)
	userTools, err := paramTools(merged["tools"])
	if err != nil {
		return params, nil, &provider.Error{Provider: p.o.Type, Fatal: true, Err: err}
	}
	userInclude, err := paramInclude(merged["include"])
	if err != nil {
		return params, nil, &provider.Error{Provider: p.o.Type, Fatal: true, Err: err}
	}
	fileSearch, err := fileSearchTool(req.FileSearch, userTools)
	if err != nil {
		return params, nil, &provider.Error{Provider: p.o.Type, Fatal: true, Err: err}
	}
	// Function tools first, hosted ones after: the list is the same on every call of a
	// session, which keeps the prompt-cache prefix intact.
	params.Tools = append(toWireTools(req.Tools), hostedTools(p.o, userTools)...)
	if fileSearch != nil {
		params.Tools = append(params.Tools, *fileSearch)
	}
	params.Include = include(p.o, userInclude)
	if req.ToolChoice == provider.ToolChoiceNone && len(params.Tools) > 0 {
		params.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: param.NewOpt(responses.ToolChoiceOptionsNone)}
		delete(merged, "tool_choice")
	}
	// Every call carries the whole conversation (no previous_response_id), so there is
	// nothing to gain from OpenAI keeping the response for 30 days; "store: true" in the
	// params turns it back on.
	params.Store = param.NewOpt(false)
	if req.CacheKey != "" {
		// Routes the requests that share a prefix to the same cache; a prompt_cache_key in
		// the params wins.
		params.PromptCacheKey = param.NewOpt(req.CacheKey)
	}
	return params, bodyEdits(merged), nil
}

// toWireInput maps messages to input items: user and assistant text as messages, an
// assistant's tool calls as function_call items, tool results as function_call_output.
// The Responses API rejects a call without an output and an output without its call, so a
// result that answers no open call (unknown, or answered already) is dropped, and a call
// still unanswered when the next message starts gets an error output there.
func toWireInput(msgs []provider.Message) (responses.ResponseInputParam, error) {
	var items responses.ResponseInputParam
	var open []string            // calls of the last assistant message not yet answered, in order
	pending := map[string]bool{} // the same, as a set
	closeOpen := func() {
		for _, id := range open {
			if pending[id] {
				items = append(items, functionOutput(id, "Error: no result was recorded for this call."))
			}
		}
		open, pending = nil, map[string]bool{}
	}
	for i, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			closeOpen()
			items = append(items, message(responses.EasyInputMessageRoleUser, m.Content))
		case provider.RoleAssistant:
			closeOpen()
			if m.Content != "" {
				items = append(items, message(responses.EasyInputMessageRoleAssistant, m.Content))
			}
			for _, c := range m.ToolCalls {
				if isHostedCall(c) {
					continue
				}
				args := c.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCall: &responses.ResponseFunctionToolCallParam{
					CallID: c.ID, Name: c.Name, Arguments: args,
				}})
				if !pending[c.ID] {
					open = append(open, c.ID)
				}
				pending[c.ID] = true
			}
		case provider.RoleTool:
			if !pending[m.ToolCallID] {
				continue // no call to answer, or answered already
			}
			delete(pending, m.ToolCallID)
			out := m.Content
			if m.IsError && !strings.HasPrefix(strings.ToLower(out), "error") {
				out = "Error: " + out
			}
			items = append(items, functionOutput(m.ToolCallID, out))
		default:
			return nil, fmt.Errorf("message %d: unknown role %q", i, m.Role)
		}
	}
	closeOpen()
	return items, nil
}

// isHostedCall tells a web search, code run or file search that OpenAI did inside an earlier
// response (as HostedToolChunk reports it, should one end up in the history) from a function
// call.
// Sent back it would be a function_call to a function never offered; its outcome already
// reached the model, and shows in the answer text. A result that answers it is dropped with
// it, as answering no open call.
func isHostedCall(c provider.ToolCall) bool {
	return c.Name == provider.HostedWebSearch && strings.HasPrefix(c.ID, "ws_") ||
		c.Name == provider.HostedCodeExecution && strings.HasPrefix(c.ID, "ci_") ||
		c.Name == provider.HostedFileSearch && strings.HasPrefix(c.ID, "fs_")
}

func message(role responses.EasyInputMessageRole, text string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfMessage: &responses.EasyInputMessageParam{
		Role: role, Content: responses.EasyInputMessageContentUnionParam{OfString: param.NewOpt(text)},
	}}
}

func functionOutput(callID, out string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
		CallID: param.NewOpt(callID),
		Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: param.NewOpt(out)},
	}}
}

// toWireTools offers each tool as a non-strict function tool: strict mode would demand that
// every property be required and additionalProperties be false, which MCP schemas rarely are.
func toWireTools(specs []provider.ToolSpec) []responses.ToolUnionParam {
	var tools []responses.ToolUnionParam
	for _, s := range specs {
		schema := s.Parameters
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		ft := &responses.FunctionToolParam{Name: s.Name, Parameters: schema, Strict: param.NewOpt(false)}
		if s.Description != "" {
			ft.Description = param.NewOpt(s.Description)
		}
		tools = append(tools, responses.ToolUnionParam{OfFunction: ft})
	}
	return tools
}

// mergeParams layers backend params into one map (provider.MergeParams); max_tokens becomes
// max_output_tokens, the Responses API's name, unless that is set too.
func mergeParams(layers ...map[string]any) map[string]any {
	merged := provider.MergeParams(layers...)
	if v, ok := merged["max_tokens"]; ok {
		delete(merged, "max_tokens")
		if _, set := merged["max_output_tokens"]; !set {
			merged["max_output_tokens"] = v
		}
	}
	return merged
}

// bodyEdits turns merged params into body edits, in a stable order, skipping owned keys.
func bodyEdits(merged map[string]any) []option.RequestOption {
	var opts []option.RequestOption
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		if owned[k] {
			continue
		}
		opts = append(opts, option.WithJSONSet(provider.SJSONKey(k), merged[k]))
	}
	return opts
}
