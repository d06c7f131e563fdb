package tool

import (
	"reflect"
	"testing"
)

func TestWithDefaults(t *testing.T) {
	schema := func(required any) map[string]any {
		return map[string]any{"type": "object", "required": required, "properties": map[string]any{
			"url": map[string]any{"type": "string"}, "headless": map[string]any{"type": "boolean"}}}
	}
	defaults := map[string]any{"headless": false, "absent": 1}
	for name, tc := range map[string]struct {
		in, want map[string]any
	}{
		"required from JSON": {schema([]any{"url", "headless"}), map[string]any{"type": "object", "required": []any{"url"}, "properties": map[string]any{
			"url": map[string]any{"type": "string"}, "headless": map[string]any{"type": "boolean", "default": false}}}},
		"required built in Go, all defaulted": {schema([]string{"headless"}), map[string]any{"type": "object", "properties": map[string]any{
			"url": map[string]any{"type": "string"}, "headless": map[string]any{"type": "boolean", "default": false}}}},
	} {
		before := reflect.ValueOf(tc.in["properties"].(map[string]any)["headless"]).Len()
		if got := WithDefaults(tc.in, defaults); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %v, want %v", name, got, tc.want)
		}
		if reflect.ValueOf(tc.in["properties"].(map[string]any)["headless"]).Len() != before {
			t.Errorf("%s: the schema given was changed", name)
		}
	}
	in := schema([]any{"url"})
	if got := WithDefaults(in, nil); !reflect.DeepEqual(got, in) {
		t.Errorf("no defaults changed the schema: %v", got)
	}
}

func TestFillDefaults(t *testing.T) {
	params := map[string]any{"url": "u", "headless": true}
	FillDefaults(params, map[string]any{"headless": false, "screenshot": true})
	want := map[string]any{"url": "u", "headless": true, "screenshot": true}
	if !reflect.DeepEqual(params, want) {
		t.Errorf("got %v, want %v: the model's own value wins, a missing one is filled in", params, want)
	}
}
