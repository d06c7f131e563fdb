package provider

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// MergeParams layers pass-through params into one map, later maps winning, and merges the
// entries of extra_body into it as the Python SDKs do, without replacing a key set directly.
func MergeParams(layers ...map[string]any) map[string]any {
	merged := map[string]any{}
	for _, l := range layers {
		maps.Copy(merged, l)
	}
	if extra, ok := merged["extra_body"].(map[string]any); ok {
		delete(merged, "extra_body")
		for k, v := range extra {
			if _, set := merged[k]; !set {
				merged[k] = v
			}
		}
	}
	return merged
}

// SJSONKey escapes a top-level body key for the SDKs' WithJSONSet, whose keys are sjson paths.
var SJSONKey = strings.NewReplacer(`\`, `\\`, `.`, `\.`, `*`, `\*`, `?`, `\?`).Replace

// PropertyEnum returns the distinct non-empty strings of parameters.properties.<name>.enum of a
// tool's JSON schema, whatever Go types the schema was built from (the fakes read the vote
// tool's labels with it).
func PropertyEnum(params map[string]any, name string) []string {
	// The engine builds schemas from maps and []any: read those directly, and round-trip
	// through JSON only for other shapes.
	if props, ok := params["properties"].(map[string]any); ok {
		if prop, ok := props[name].(map[string]any); ok {
			if enum, ok := prop["enum"].([]any); ok {
				return enumStrings(enum)
			}
			if _, has := prop["enum"]; !has {
				return nil
			}
		}
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil
	}
	var schema struct {
		Properties map[string]struct {
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(b, &schema) != nil {
		return nil
	}
	return enumStrings(schema.Properties[name].Enum)
}

func enumStrings(enum []any) []string {
	var out []string
	for _, e := range enum {
		if s, ok := e.(string); ok && s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
