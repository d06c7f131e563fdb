package tool

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParseArgs decodes the model's arguments for the tool called name; bad is the message for the
// model when they are not a JSON object. Empty input and null mean no arguments.
func ParseArgs(name, args string) (params map[string]any, bad string) {
	if s := strings.TrimSpace(args); s == "" || s == "null" {
		return map[string]any{}, ""
	}
	if err := json.Unmarshal([]byte(args), &params); err != nil {
		return nil, fmt.Sprintf("invalid arguments for %s: %v; send one JSON object with the parameters "+
			"the tool's schema lists, for example {\"name\": \"value\"}", name, err)
	}
	if params == nil {
		params = map[string]any{}
	}
	return params, ""
}
