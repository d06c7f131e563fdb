package app

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"massgen/internal/config"
	"massgen/internal/media"
	"massgen/internal/workspace"
)

// The media tools take keys and endpoints where the agents' providers do: the agent's own
// backend for its type (api_key, base_url), the usual variables for the others.
func TestMediaBackends(t *testing.T) {
	own := config.Backend{Type: "openai", APIKey: "sk-own", BaseURL: "http://proxy.local/v1"}
	got := mediaBackends(own, env(map[string]string{
		"OPENAI_API_KEY": "sk-env", "GOOGLE_API_KEY": "g-key", "ANTHROPIC_BASE_URL": "http://claude.local", "ANTHROPIC_API_KEY": "a-key",
	}))
	want := map[string]media.Backend{
		"openai": {Name: "openai", APIKey: "sk-own", KeyEnv: "api_key in the config", BaseURL: "http://proxy.local/v1"},
		"gemini": {Name: "gemini", APIKey: "g-key", KeyEnv: "GOOGLE_API_KEY", BaseURL: config.BackendTypes["gemini"].DefaultBaseURL},
		"claude": {Name: "claude", APIKey: "a-key", KeyEnv: "ANTHROPIC_API_KEY", BaseURL: "http://claude.local"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := mediaBackends(config.Backend{Type: "scripted"}, env(nil)); len(got) != 0 {
		t.Errorf("without keys: %v", got)
	}
}

// A custom_tools entry naming MassGen's understand_image runs natively, under its name; one
// that repeats a tool enable_multimodal_tools offers is a configuration error.
func TestAddMediaTools(t *testing.T) {
	parse := func(extra string) *config.Config {
		t.Helper()
		cfg, rep := config.Parse("m.yaml", []byte(`
agents:
  - id: a
    backend:
      type: scripted
      answers: [hi]
      cwd: ws
      custom_tools:
        - {name: [understand_image], path: massgen/tool/_multimodal_tools/understand_image.py, function: [understand_image]}
        - {path: massgen/tool/_multimodal_tools/read_media.py, function: read_media}
`+extra))
		if !rep.OK() {
			t.Fatal(rep.Text())
		}
		return cfg
	}
	run, err := workspace.NewRun(t.TempDir(), "run1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	ws, err := run.Agent("a", "agent1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := parse("")
	set, err := addMediaTools(nil, cfg.Agents[0], cfg, ws, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range set.Specs() {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"custom_tool__understand_image", "custom_tool__read_media"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	cfg = parse("      enable_multimodal_tools: true\n")
	if _, err := addMediaTools(nil, cfg.Agents[0], cfg, ws, env(nil)); err == nil || !cmp.Equal(err.Error(),
		"agent a: custom_tool__read_media is offered twice (enable_multimodal_tools already offers it); remove the custom_tools entry") {
		t.Errorf("duplicate: %v", err)
	}
}

// MassGen's file generation configs turn enable_file_generation on and name
// text_to_file_generation in custom_tools too: the tool is offered once, under the entry.
func TestAddMediaTools_FileGenerationOnce(t *testing.T) {
	cfg, rep := config.Parse("m.yaml", []byte(`
agents:
  - id: a
    backend:
      type: scripted
      answers: [hi]
      cwd: ws
      enable_file_generation: true
      enable_video_generation: true
      custom_tools:
        - {name: [text_to_file_generation], path: massgen/tool/_multimodal_tools/text_to_file_generation.py, function: [text_to_file_generation]}
        - {name: [text_to_video_generation], path: massgen/tool/_multimodal_tools/text_to_video_generation.py, function: [text_to_video_generation]}
`))
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	run, err := workspace.NewRun(t.TempDir(), "run1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	ws, err := run.Agent("a", "agent1")
	if err != nil {
		t.Fatal(err)
	}
	set, err := addMediaTools(nil, cfg.Agents[0], cfg, ws, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range set.Specs() {
		names = append(names, s.Name)
	}
	want := []string{"custom_tool__generate_media", "custom_tool__text_to_file_generation", "custom_tool__text_to_video_generation"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}
