package tool

import (
	"context"
	"encoding/json"
	"maps"
)

// WithDefaults is the parameters schema params with defaults (a custom tool's
// default_params): each parameter named, when the schema has it, carries its default and is
// no longer required. params itself is not changed.
func WithDefaults(params, defaults map[string]any) map[string]any {
	if len(defaults) == 0 {
		return params
	}
	out := maps.Clone(params)
	if props, ok := out["properties"].(map[string]any); ok {
		props = maps.Clone(props)
		for k, v := range defaults {
			if p, ok := props[k].(map[string]any); ok {
				p = maps.Clone(p)
				p["default"] = v
				props[k] = p
			}
		}
		out["properties"] = props
	}
	var keep []any
	switch req := out["required"].(type) {
	case []any:
		for _, r := range req {
			if name, _ := r.(string); !has(defaults, name) {
				keep = append(keep, r)
			}
		}
	case []string:
		for _, r := range req {
			if !has(defaults, r) {
				keep = append(keep, r)
			}
		}
	default:
		return out
	}
	if len(keep) == 0 {
		delete(out, "required")
	} else {
		out["required"] = keep
	}
	return out
}

// FillDefaults sets in params, a call's arguments, every default they leave out.
func FillDefaults(params, defaults map[string]any) {
	for k, v := range defaults {
		if _, set := params[k]; !set {
			params[k] = v
		}
	}
}

func has(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// WithPresets merges an entry's preset_args into every call, over the model's arguments, and
// hides them from the schema, and fills in its default_params where the model's arguments leave
// them out, as custom tools do: for a custom_tools entry that names one of MassGen's
// built-in tools, which run natively.
func WithPresets(t Tool, presets, defaults map[string]any) Tool {
	props, _ := t.Spec.Parameters["properties"].(map[string]any)
	for k := range presets {
		delete(props, k)
	}
	t.Spec.Parameters = WithDefaults(t.Spec.Parameters, defaults)
	run := t.Run
	name := t.Spec.Name
	t.Run = func(ctx context.Context, args string) Result {
		params, bad := ParseArgs(name, args)
		if bad != "" {
			return Errorf(bad)
		}
		FillDefaults(params, defaults)
		for k, v := range presets {
			params[k] = v
		}
		b, _ := json.Marshal(params)
		return run(ctx, string(b))
	}
	return t
}
