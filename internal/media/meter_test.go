package media

import (
	"testing"

	"massgen/internal/usage"
)

// What a media tool's own model calls are billed reaches its result (tool.Result.Spent): priced
// from the usage the provider reported, estimated from the sizes when it reported none, and
// unknown where the price list cannot tell (transcription is billed by the minute).
func TestMetered_BillsTheToolsModelCalls(t *testing.T) {
	for _, tc := range []struct {
		name, own, ownModel, file string
		providers                 []string
		backend, model            string
		estimated, unknown        bool
	}{
		{"Claude reports its usage", "claude", "claude-opus-4-1", "shot.png", []string{"claude"}, "claude", "claude-opus-4-1", false, false},
		{"Gemini reports its usage", "scripted", "", "shot.png", []string{"gemini"}, "gemini", "gemini-3-flash-preview", false, false},
		{"OpenAI's fake reports none: estimated", "openai", "gpt-5-mini", "shot.png", []string{"openai"}, "openai", "gpt-5-mini", true, false},
		{"transcription has no price", "openai", "gpt-5", "talk.wav", []string{"openai"}, "openai", "gpt-4o-transcribe", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.own, tc.ownModel, allOn, tc.providers...)
			res, _ := run(t, metered(s.ts.readMediaTool()), map[string]any{"file_path": tc.file, "prompt": "What is it?"})
			if res.IsError {
				t.Fatalf("error: %s", res.Content)
			}
			sp := res.Spent
			if sp.Estimated != tc.estimated || sp.Unknown != tc.unknown {
				t.Errorf("spent %+v: want estimated %v, unknown %v", sp, tc.estimated, tc.unknown)
			}
			if !tc.unknown && (sp.CostUSD <= 0 || !usage.Known(tc.backend, tc.model)) {
				t.Errorf("spent %+v on %s: want a priced cost", sp, tc.model)
			}
			// Without the meter the same call reports nothing: the test would not see a regression.
			bare, _ := run(t, s.ts.readMediaTool(), map[string]any{"file_path": tc.file, "prompt": "What is it?"})
			if bare.Spent.CostUSD != 0 || bare.Spent.Unknown {
				t.Errorf("unmetered tool reported %+v", bare.Spent)
			}
		})
	}
}
