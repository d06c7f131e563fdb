package tool

import (
	"encoding/json"
	"fmt"
	"strings"

	"massgen/internal/provider"
)

// Spec is the ToolSpec of a tool whose parameters are one JSON object with the properties
// props, of which required must be given.
func Spec(name, desc string, props map[string]any, required ...string) provider.ToolSpec {
	return provider.ToolSpec{Name: name, Description: desc, Parameters: map[string]any{
		"type": "object", "properties": props, "required": append([]string{}, required...),
	}}
}

// Decode decodes a call's JSON arguments into v; empty arguments are {}. When they do not
// decode it returns false and the Result to send back, which shows example.
func Decode(args string, v any, example string) (Result, bool) {
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if err := json.Unmarshal([]byte(args), v); err != nil {
		return Errorf(fmt.Sprintf("invalid arguments (%v); send a JSON object like %s", err, example)), false
	}
	return Result{}, true
}

// Quote quotes s, a path or an id a model sent, for a message, clipped so that a huge argument
// stays readable.
func Quote(s string) string {
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return fmt.Sprintf("%q", s)
}
