package provider

import (
	"maps"
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
