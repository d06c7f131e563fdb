package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"google.golang.org/genai"

	"massgen/internal/provider"
)

// toWire translates a neutral request into Gemini contents and a call config.
func (p *Provider) toWire(req provider.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	text := textCallMode(p.o, req)
	var contents []*genai.Content
	var err error
	if text {
		contents, err = toTextContents(req.Messages, p.calls.Get)
	} else {
		contents, err = toWireContents(req.Messages, p.calls.Get)
	}
	if err != nil {
		return nil, nil, err
	}
	if err := attach(p.name, contents, req); err != nil {
		return nil, nil, err
	}
	// Request params override the backend's, key by key.
	merged := maps.Clone(p.o.Params)
	if merged == nil {
		merged = map[string]any{}
	}
	maps.Copy(merged, req.Params)
	body, err := wireParams(merged)
	if err != nil {
		return nil, nil, err
	}
	cfg := &genai.GenerateContentConfig{
		// Off: a response cut short (finish reason CONTINUATION) is not re-requested behind the
		// engine's back. Each continuation is a separate billed request the cost ledger would
		// not see as such, and the engine decides what to do with a truncated answer.
		AutomaticContinuation: genai.Ptr(false),
		// Declarations and hosted tools never go together: with both, the function tools
		// are described in the system instruction instead (see textcalls.go).
		Tools: append(toWireTools(req.Tools), hostedTools(p.o)...),
	}
	system := req.System
	if text {
		cfg.Tools = hostedTools(p.o)
		if system, err = withToolProtocol(system, req.Tools, p.o); err != nil {
			return nil, nil, err
		}
		dropFunctionCallingConfig(body)
	} else if req.ToolChoice == provider.ToolChoiceNone && len(req.Tools) > 0 {
		cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeNone}}
		// The request's choice wins over a functionCallingConfig in the params, which the
		// body would otherwise carry over it.
		dropFunctionCallingConfig(body)
	}
	if system != "" {
		cfg.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: system}}}
	}
	if len(body) > 0 {
		// Pass-through params are merged into the request body as they are (after the key
		// renaming in wireParams), so any generationConfig field the API knows works.
		cfg.HTTPOptions = &genai.HTTPOptions{ExtraBody: body}
	}
	return contents, cfg, nil
}

// toWireContents translates the conversation. Assistant messages become model contents with
// text and functionCall parts; tool results become functionResponse parts of a user content,
// named after the call they answer. Consecutive contents of one role are merged, so tool results
// and a user message that follows them form one user turn.
func toWireContents(msgs []provider.Message, meta func(id string) callMeta) ([]*genai.Content, error) {
	if len(msgs) == 0 {
		return nil, errors.New("request: no messages")
	}
	var out turns
	add := out.add
	names := map[string]string{} // call ID -> function name, from the conversation so far
	for i, m := range msgs {
		switch m.Role {
		case provider.RoleUser:
			if m.Content != "" {
				add(genai.RoleUser, &genai.Part{Text: m.Content})
			}
		case provider.RoleAssistant:
			var parts []*genai.Part
			if m.Content != "" {
				parts = append(parts, &genai.Part{Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				cm := meta(c.ID)
				fc := &genai.FunctionCall{Name: c.Name, Args: wireArgs(c.Arguments)}
				if cm.apiID {
					fc.ID = c.ID
				}
				parts = append(parts, &genai.Part{FunctionCall: fc, ThoughtSignature: cm.signature})
			}
			add(genai.RoleModel, parts...)
		case provider.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				return nil, fmt.Errorf("request: message %d answers unknown tool call %q", i, m.ToolCallID)
			}
			key := "output"
			if m.IsError {
				key = "error"
			}
			fr := &genai.FunctionResponse{Name: name, Response: map[string]any{key: m.Content}}
			if meta(m.ToolCallID).apiID {
				fr.ID = m.ToolCallID
			}
			add(genai.RoleUser, &genai.Part{FunctionResponse: fr})
		default:
			return nil, fmt.Errorf("request: message %d has unknown role %q", i, m.Role)
		}
	}
	return out.contents()
}

// turns builds contents, merging consecutive contents of one role into one turn.
type turns []*genai.Content

func (t *turns) add(role string, parts ...*genai.Part) {
	if len(parts) == 0 {
		return
	}
	if n := len(*t); n > 0 && (*t)[n-1].Role == role {
		(*t)[n-1].Parts = append((*t)[n-1].Parts, parts...)
		return
	}
	*t = append(*t, &genai.Content{Role: role, Parts: parts})
}

func (t turns) contents() ([]*genai.Content, error) {
	if len(t) == 0 {
		return nil, errors.New("request: every message is empty")
	}
	return t, nil
}

// wireArgs parses a call's JSON arguments into the object Gemini wants. Arguments that are not
// a JSON object (the model's own malformed output, replayed) are kept as text under "arguments"
// rather than dropped, so the model can see what it sent.
func wireArgs(raw string) map[string]any {
	if strings.TrimSpace(raw) == "" {
		return map[string]any{}
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil || args == nil {
		return map[string]any{"arguments": raw}
	}
	return args
}

// toWireTools declares the tools as functions whose parameters are plain JSON Schema
// (parametersJsonSchema), which keeps enum, required and nested objects as they are.
func toWireTools(specs []provider.ToolSpec) []*genai.Tool {
	if len(specs) == 0 {
		return nil
	}
	decls := make([]*genai.FunctionDeclaration, 0, len(specs))
	for _, s := range specs {
		d := &genai.FunctionDeclaration{Name: s.Name, Description: s.Description}
		if s.Parameters != nil {
			d.ParametersJsonSchema = s.Parameters
		}
		decls = append(decls, d)
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}
}

// reservedParams are body fields the translation owns; a param may not replace them.
var reservedParams = []string{"contents", "systemInstruction", "tools", "model"}

// bodyParams are request fields that live beside generationConfig rather than inside it.
var bodyParams = []string{"safetySettings", "toolConfig", "cachedContent", "serviceTier", "store", "labels"}

// opaqueParams hold user data (schemas, labels) whose keys are never renamed.
var opaqueParams = []string{"responseSchema", "responseJsonSchema", "parametersJsonSchema", "labels"}

// wireParams turns pass-through backend keys into request body fields. Keys may be snake_case
// as in MassGen configs (max_tokens, top_p, thinking_config: {thinking_budget, include_thoughts})
// or the API's camelCase. max_tokens means maxOutputTokens. Request-level fields (safety_settings,
// tool_config, cached_content, ...) go to the top of the body, a generation_config map is merged
// into generationConfig, and every other key goes into generationConfig.
func wireParams(params map[string]any) (map[string]any, error) {
	if len(params) == 0 {
		return nil, nil
	}
	body := map[string]any{}
	gen := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		v := params[k]
		key := camel(k)
		if k == "max_tokens" || key == "maxTokens" {
			key = "maxOutputTokens"
		}
		switch {
		case slices.Contains(reservedParams, key):
			return nil, fmt.Errorf("param %q cannot be set: the request builds it", k)
		case key == "generationConfig":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("param %q must be a mapping, not %T", k, v)
			}
			maps.Copy(gen, camelValue(key, m).(map[string]any))
		case slices.Contains(bodyParams, key):
			body[key] = camelValue(key, v)
		default:
			gen[key] = camelValue(key, v)
		}
	}
	if len(gen) > 0 {
		body["generationConfig"] = gen
	}
	return body, nil
}

// camelValue renames the keys of nested mappings to camelCase, except inside opaque fields.
func camelValue(key string, v any) any {
	if slices.Contains(opaqueParams, key) {
		return v
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			ck := camel(k)
			out[ck] = camelValue(ck, e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = camelValue(key, e)
		}
		return out
	}
	return v
}

// camel turns snake_case into lowerCamelCase; other names are returned unchanged.
func camel(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	up := false
	for i, r := range s {
		switch {
		case r == '_' && i > 0:
			up = true
		case up && r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
			up = false
		default:
			b.WriteRune(r)
			up = false
		}
	}
	return b.String()
}
