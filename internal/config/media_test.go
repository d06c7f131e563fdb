package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The media keys: read per agent and inherited from the orchestrator as MassGen's cli.py
// does; a provider this build lacks is an error naming the ones it has.
func TestParse_MediaKeys(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte(`
agents:
  - id: a
    backend:
      type: openai
      multimodal_config:
        image: {backend: anthropic, model: claude-haiku-4-5}
        video: {backend: google, num_frames: 12}
      image_generation_model: gpt-5
  - id: b
    backend:
      type: scripted
      answers: [hi]
      enable_multimodal_tools: false
orchestrator:
  enable_multimodal_tools: true
  audio_generation_backend: openai
  multimodal_config: {image: {model: gemini-2.5-flash}}
`))
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	a := cfg.Agents[0].Backend.Tools.Media.Over(cfg.Orchestrator.Media)
	if !a.ReadMedia() || !cmp.Equal(a.GenerateModes(), []string{"image", "audio", "video"}) {
		t.Errorf("agent a: read %v, generate %v", a.ReadMedia(), a.GenerateModes())
	}
	want := map[string]MediaChoice{"image": {Backend: "claude", Model: "claude-haiku-4-5"}, "video": {Backend: "gemini", NumFrames: 12}}
	if diff := cmp.Diff(want, a.Understand); diff != "" {
		t.Errorf("understand (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]MediaChoice{"image": {Model: "gpt-5"}, "audio": {Backend: "openai"}}, a.Generate); diff != "" {
		t.Errorf("generate (-want +got):\n%s", diff)
	}
	if b := cfg.Agents[1].Backend.Tools.Media.Over(cfg.Orchestrator.Media); b.Enabled() {
		t.Errorf("agent b turned the tools off, yet gets %+v", b)
	}
	if cfg.Agents[0].Backend.Params != nil {
		t.Errorf("media keys reached the request: %v", cfg.Agents[0].Backend.Params)
	}
}

// Videos are made with OpenAI or Gemini (google, as MassGen writes it); the switch alone offers
// generate_media for videos, as enable_image_generation does for images.
func TestParse_VideoGenerationKeys(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte(net("      enable_video_generation: true\n      video_generation_backend: google\n      video_generation_model: veo-3.1-generate-preview\n")))
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Fatal(rep.Text())
	}
	m := cfg.Agents[0].Backend.Tools.Media
	if diff := cmp.Diff(map[string]MediaChoice{"video": {Backend: "gemini", Model: "veo-3.1-generate-preview"}}, m.Generate); diff != "" {
		t.Errorf("generate (-want +got):\n%s", diff)
	}
	if !cmp.Equal(m.GenerateModes(), []string{"video"}) || m.ReadMedia() {
		t.Errorf("modes %v, read_media %v", m.GenerateModes(), m.ReadMedia())
	}
}

func TestParse_MediaKeysRefused(t *testing.T) {
	for _, tc := range []struct{ lines, want string }{
		{"      multimodal_config: {image: {backend: grok}}\n", "E 5:44 agents[0].backend.multimodal_config.image.backend | `grok` is not a media backend this build has | use openai, gemini or claude"},
		{"      image_generation_backend: google\n", "E 5:33 agents[0].backend.image_generation_backend | image generation through `google` is not built: generate_media makes images with openai | use openai, or leave it out"},
		{"      audio_generation_backend: elevenlabs\n", "E 5:33 agents[0].backend.audio_generation_backend | `elevenlabs` is not a audio generation backend this build has (openai) | use openai, or leave it out"},
		{"      video_generation_backend: claude\n", "E 5:33 agents[0].backend.video_generation_backend | video generation through `claude` is not built: generate_media makes videos with openai or gemini | use openai or gemini, or leave it out"},
		{"      video_generation_backend: runway\n", "E 5:33 agents[0].backend.video_generation_backend | `runway` is not a video generation backend this build has (openai, gemini) | use openai or gemini, or leave it out"},
		{"      multimodal_config: {video: {num_frames: 40}}\n", "E 5:47 agents[0].backend.multimodal_config.video.num_frames | num_frames 40 is out of range | use 1 to 32 (default 8)"},
		{"      multimodal_config: {image: {num_frames: 8}}\n", "W 5:35 agents[0].backend.multimodal_config.image.num_frames | `num_frames` has no effect on image | it is a video setting"},
		{"      multimodal_config: {video: {fps: 2}}\n", "W 5:35 agents[0].backend.multimodal_config.video.fps | `fps` has no effect here | only backend, model and (for video) num_frames are read"},
		{"      multimodal_config: {pdf: {backend: openai}}\n", "W 5:27 agents[0].backend.multimodal_config.pdf | `pdf` is not a kind of media here and is ignored | use image, audio or video"},
	} {
		_, rep := Parse("c.yaml", []byte(net(tc.lines)))
		checkIssues(t, rep, []string{tc.want})
	}
}

// A custom_tools entry naming one of MassGen's media tools needs no file: it is built in.
func TestParse_MediaCustomToolsAreBuiltIn(t *testing.T) {
	cfg, rep := Parse("c.yaml", []byte(net(`      custom_tools:
        - name: [understand_image]
          category: multimodal
          path: massgen/tool/_multimodal_tools/understand_image.py
          function: [understand_image]
        - {path: massgen.tool._multimodal_tools.understand_file, function: understand_file}
        - {path: other/understand_audio.py, function: understand_audio}
        - {name: [text_to_video_generation], path: massgen/tool/_multimodal_tools/text_to_video_generation.py, function: [text_to_video_generation]}
        - {name: [text_to_file_generation], path: massgen/tool/_multimodal_tools/text_to_file_generation.py, function: [text_to_file_generation]}
`)))
	if !rep.OK() {
		t.Fatal(rep.Text())
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0].Message, "other/understand_audio.py") {
		t.Errorf("want one warning, for the file that is not MassGen's:\n%s", rep.Text())
	}
	var got []string
	for _, c := range cfg.Agents[0].Backend.Tools.CustomTools {
		got = append(got, c.MediaTool())
	}
	if diff := cmp.Diff([]string{"understand_image", "understand_file", "", "text_to_video_generation", "text_to_file_generation"}, got); diff != "" {
		t.Errorf("MediaTool (-want +got):\n%s", diff)
	}
}
