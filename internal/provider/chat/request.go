package chat

import (
	"fmt"
	"maps"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"massgen/internal/provider"
)

// ownKeys are the body fields this package writes; a pass-through param never replaces them.
var ownKeys = map[string]bool{"model": true, "messages": true, "tools": true, "stream": true}

// massgenKeys are backend keys MassGen interprets itself and never sends to the service. The
// config package strips the common ones; these are the rest that reach Params.
var massgenKeys = map[string]bool{
	"max_mcp_message_history": true, "media_max_file_size_mb": true, "enforce_read_before_delete": true,
	"enable_image_generation": true, "enable_audio_generation": true, "enable_file_generation": true,
	"enable_video_generation": true, "provider_name": true, "exclude_file_operation_mcps": true,
	"agent_temporary_workspace": true, "context_write_access_enabled": true, "debug_delay_seconds": true,
}

// errorPrefix starts a rejected tool call's result, so the model reads it as an error.
const errorPrefix = "Error: "

// toWire builds the request body for req. Model comes from req, else from o; Params from o,
// then req, then the contents of extra_body (the Python SDK merges extra_body last, at the top
// level of the body), each overriding the one before.
func toWire(o provider.Options, req provider.Request) (openai.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = o.Model
	}
	if model == "" {
		return openai.ChatCompletionNewParams{}, fmt.Errorf("no model configured: set backend.model")
	}
	params := openai.ChatCompletionNewParams{
		Model:         model,
		Messages:      toWireMessages(req.System, req.Messages),
		Tools:         toWireTools(req.Tools),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if err := attach(o.Type, params.Messages, req); err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	extra, err := extraFields(o.Params, req.Params)
	if err != nil {
		return openai.ChatCompletionNewParams{}, err
	}
	if req.ToolChoice == provider.ToolChoiceNone && len(params.Tools) > 0 {
		params.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(openai.ChatCompletionToolChoiceOptionAutoNone))}
		delete(extra, "tool_choice")
	}
	if o.WebSearch {
		// Each service's own search, as MassGen asks for it: OpenRouter's web plugin, xAI's
		// live search (the model decides when to search).
		field, value := "search_parameters", any(map[string]any{"mode": "auto", "return_citations": true})
		if o.Type == "openrouter" {
			field, value = "plugins", []any{map[string]any{"id": "web"}}
		}
		if _, set := extra[field]; set {
			return openai.ChatCompletionNewParams{}, fmt.Errorf("enable_web_search sets %s: remove one of them", field)
		}
		extra[field] = value
	}
	if len(extra) > 0 {
		params.SetExtraFields(extra)
	}
	return params, nil
}

// extraFields merges the pass-through params into top-level body fields.
func extraFields(layers ...map[string]any) (map[string]any, error) {
	out := map[string]any{}
	var extraBody map[string]any
	for _, l := range layers {
		for k, v := range l {
			switch {
			case ownKeys[k] || massgenKeys[k] || strings.HasPrefix(k, "command_line_"):
				continue
			case k == "provider":
				// MassGen's display name for pricing is a string; OpenRouter's routing
				// preferences are an object and belong in the body.
				if _, ok := v.(string); ok {
					continue
				}
			case k == "extra_body":
				if v == nil {
					continue
				}
				m, ok := v.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("extra_body must be a mapping, not %T", v)
				}
				if extraBody == nil {
					extraBody = map[string]any{}
				}
				maps.Copy(extraBody, m)
				continue
			}
			out[k] = v
		}
	}
	for k, v := range extraBody {
		if !ownKeys[k] {
			out[k] = v
		}
	}
	// stream_options is ours too, but a server-specific option in it (vLLM's
	// continuous_usage_stats) may come from the config: keep it, with usage on.
	if so, ok := out["stream_options"]; ok {
		m, isMap := so.(map[string]any)
		if !isMap {
			return nil, fmt.Errorf("stream_options must be a mapping, not %T", so)
		}
		m = maps.Clone(m)
		m["include_usage"] = true
		out["stream_options"] = m
	}
	return out, nil
}

// toWireMessages builds the system message and the conversation, without orphan tool calls or
// results.
func toWireMessages(system string, msgs []provider.Message) []openai.ChatCompletionMessageParamUnion {
	var out []openai.ChatCompletionMessageParamUnion
	if system != "" {
		out = append(out, openai.SystemMessage(system))
	}
	for _, m := range pairToolCalls(msgs) {
		switch m.Role {
		case provider.RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case provider.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				args := c.Arguments
				if strings.TrimSpace(args) == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case provider.RoleTool:
			content := m.Content
			if m.IsError && !strings.HasPrefix(strings.ToLower(content), "error") {
				content = errorPrefix + content
			}
			out = append(out, openai.ToolMessage(content, m.ToolCallID))
		}
	}
	return out
}

// pairToolCalls returns the conversation as strict services accept it: every assistant tool
// call answered by exactly one tool message placed right after the assistant message, and
// every tool message answering a call. Calls without a result and results without a call are
// dropped (MassGen does the same); results that came after a user message are moved up to
// their assistant message; an assistant message left with neither text nor calls is dropped.
func pairToolCalls(msgs []provider.Message) []provider.Message {
	out := make([]provider.Message, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		switch m.Role {
		case provider.RoleTool:
			i++ // a result outside any assistant message's window has no call
			continue
		case provider.RoleAssistant:
		default:
			out = append(out, m)
			i++
			continue
		}
		// The window of an assistant message runs to the next assistant message.
		end := i + 1
		for end < len(msgs) && msgs[end].Role != provider.RoleAssistant {
			end++
		}
		window := msgs[i+1 : end]
		results := map[string]provider.Message{}
		for _, w := range window {
			if _, dup := results[w.ToolCallID]; w.Role == provider.RoleTool && w.ToolCallID != "" && !dup {
				results[w.ToolCallID] = w
			}
		}
		a := m
		a.ToolCalls = nil
		var answers []provider.Message
		for _, c := range m.ToolCalls {
			r, ok := results[c.ID]
			if !ok || c.ID == "" {
				continue
			}
			delete(results, c.ID) // one result per call, even if the model repeated an ID
			a.ToolCalls = append(a.ToolCalls, c)
			answers = append(answers, r)
		}
		if a.Content != "" || len(a.ToolCalls) > 0 {
			out = append(out, a)
			out = append(out, answers...)
		}
		for _, w := range window {
			if w.Role != provider.RoleTool {
				out = append(out, w)
			}
		}
		i = end
	}
	return out
}

// toWireTools offers each tool as a function tool.
func toWireTools(tools []provider.ToolSpec) []openai.ChatCompletionToolUnionParam {
	var out []openai.ChatCompletionToolUnionParam
	for _, t := range tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(t.Parameters)}
		if t.Description != "" {
			fd.Description = openai.String(t.Description)
		}
		if fd.Parameters == nil {
			fd.Parameters = shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
		}
		out = append(out, openai.ChatCompletionFunctionTool(fd))
	}
	return out
}
