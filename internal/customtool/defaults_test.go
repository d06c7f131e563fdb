package customtool

import (
	"slices"
	"testing"

	"massgen/internal/config"
)

// default_params fill in what the model leaves out, and its own values win; the model's
// schema shows them as optional, with their defaults.
func TestDefaultParams(t *testing.T) {
	requirePython(t)
	greet := pyTool(t, "greet")
	greet.DefaultParams = map[string]any{"name": "grace", "times": 2}
	tools := start(t, []config.CustomTool{greet}, Options{})
	spec := tools.Set().Specs()[0].Parameters
	props, _ := spec["properties"].(map[string]any)
	for k, want := range greet.DefaultParams {
		p, _ := props[k].(map[string]any)
		if p["default"] != want {
			t.Errorf("schema property %s = %v, want default %v", k, p, want)
		}
	}
	if req, _ := spec["required"].([]any); slices.Contains(req, any("name")) {
		t.Errorf("name is still required: %v", spec)
	}
	for args, want := range map[string]string{
		`{}`:                          "hello grace hello grace",
		`{"name": "ada"}`:             "hello ada hello ada",
		`{"name": "ada", "times": 1}`: "hello ada",
	} {
		if res, _ := call(t, tools, "custom_tool__greet", args); res.IsError || res.Content != want {
			t.Errorf("call %s = %+v, want %q", args, res, want)
		}
	}
}
