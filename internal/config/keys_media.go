package config

import (
	"fmt"
	"slices"
	"strings"
)

// MassGen v0.1.28's media tools (massgen/tool/_multimodal_tools): enable_multimodal_tools
// registers read_media and generate_media as custom tools, the *_generation_backend/_model
// keys and multimodal_config pick their providers, and the older enable_image_generation /
// enable_audio_generation / enable_video_generation switches are mapped onto generate_media.
// enable_file_generation (v0.1.12) offers text_to_file_generation. An orchestrator-level
// setting is inherited by every agent that does not set its own, as MassGen's cli.py does.

// MediaChoice is a provider and model for one kind of media; "" fields are chosen at call
// time (the agent's own provider when it can, else the first one with a key).
type MediaChoice struct {
	// Backend is openai, gemini or claude (google and anthropic are accepted as aliases).
	Backend string
	Model   string
	// NumFrames (video only) is how many frames OpenAI and Claude get when understand_video's
	// call names none; 0 means its default (8).
	NumFrames int
}

// MaxVideoFrames bounds num_frames, in the config as in understand_video's calls.
const MaxVideoFrames = 32

// Media is the configuration of an agent's media tools.
type Media struct {
	// Multimodal (enable_multimodal_tools) offers read_media and generate_media; nil when not
	// written, so that the orchestrator's setting applies.
	Multimodal *bool
	// ImageGeneration, AudioGeneration and VideoGeneration (enable_image_generation,
	// enable_audio_generation, enable_video_generation) offer generate_media for that mode alone.
	ImageGeneration, AudioGeneration, VideoGeneration bool
	// FileGeneration (enable_file_generation) offers text_to_file_generation.
	FileGeneration bool
	// Understand holds multimodal_config's choices for read_media by kind (image, audio, video).
	Understand map[string]MediaChoice
	// Generate holds the choices for generate_media by mode (image, audio, video): the
	// <mode>_generation_backend/_model keys. (MassGen's generate_media also reads
	// multimodal_config, whose image model is then used for understanding and generating
	// alike; here multimodal_config is read_media's alone.)
	Generate map[string]MediaChoice
}

// Over returns m with what it leaves unset taken from parent (the orchestrator's settings).
func (m Media) Over(parent Media) Media {
	out := m
	if out.Multimodal == nil {
		out.Multimodal = parent.Multimodal
	}
	out.ImageGeneration = m.ImageGeneration || parent.ImageGeneration
	out.AudioGeneration = m.AudioGeneration || parent.AudioGeneration
	out.VideoGeneration = m.VideoGeneration || parent.VideoGeneration
	out.FileGeneration = m.FileGeneration || parent.FileGeneration
	out.Understand = mergeChoices(parent.Understand, m.Understand)
	out.Generate = mergeChoices(parent.Generate, m.Generate)
	return out
}

func mergeChoices(parent, own map[string]MediaChoice) map[string]MediaChoice {
	if len(parent) == 0 {
		return own
	}
	out := map[string]MediaChoice{}
	for k, v := range parent {
		out[k] = v
	}
	for k, v := range own {
		p := out[k]
		if v.Backend != "" {
			p.Backend = v.Backend
		}
		if v.Model != "" {
			p.Model = v.Model
		}
		if v.NumFrames > 0 {
			p.NumFrames = v.NumFrames
		}
		out[k] = p
	}
	return out
}

// ReadMedia reports whether read_media is offered.
func (m Media) ReadMedia() bool { return m.Multimodal != nil && *m.Multimodal }

// GenerateModes lists the modes generate_media offers, nil when it is not offered.
func (m Media) GenerateModes() []string {
	if m.ReadMedia() {
		return []string{"image", "audio", "video"}
	}
	var out []string
	if m.ImageGeneration {
		out = append(out, "image")
	}
	if m.AudioGeneration {
		out = append(out, "audio")
	}
	if m.VideoGeneration {
		out = append(out, "video")
	}
	return out
}

// Enabled reports whether any media tool is offered.
func (m Media) Enabled() bool { return m.ReadMedia() || len(m.GenerateModes()) > 0 || m.FileGeneration }

// MediaBackends are the providers the media tools call.
var MediaBackends = []string{"openai", "gemini", "claude"}

// mediaAliases are MassGen's other names for them (generate_media says google).
var mediaAliases = map[string]string{"google": "gemini", "anthropic": "claude"}

// MediaBackendName normalises a media backend name; "" when it is not one of MediaBackends.
func MediaBackendName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if a, ok := mediaAliases[s]; ok {
		s = a
	}
	if slices.Contains(MediaBackends, s) {
		return s
	}
	return ""
}

const needsMedia = "enable_multimodal_tools"

// mediaOf returns the Media the key at t sets: the agent's, or the orchestrator's.
func mediaOf(t *target) *Media {
	if t.backend != nil {
		return &t.backend.Tools.Media
	}
	return &t.cfg.Orchestrator.Media
}

func media(f func(m *Media, w *walker, v value)) func(*walker, *target, value) {
	return func(w *walker, t *target, v value) { f(mediaOf(t), w, v) }
}

// GenerationBackends are the providers generate_media makes each mode with: OpenAI's Images
// and speech endpoints, and videos with OpenAI's Sora or Gemini's Veo.
var GenerationBackends = map[string][]string{"image": {"openai"}, "audio": {"openai"}, "video": {"openai", "gemini"}}

// generation reads <mode>_generation_backend or _model.
func generation(mode string, model bool) func(*walker, *target, value) {
	return media(func(m *Media, w *walker, v value) {
		c := m.Generate[mode]
		have := GenerationBackends[mode]
		fix := "use " + strings.Join(have, " or ") + ", or leave it out"
		switch name := MediaBackendName(v.s); {
		case model:
			c.Model = v.s
		case slices.Contains(have, name):
			c.Backend = name
		case name != "":
			w.errf(v.f, fix, "%s generation through `%s` is not built: generate_media makes %ss with %s", mode, clip(v.s), mode,
				strings.Join(have, " or "))
			return
		default:
			w.errf(v.f, fix, "`%s` is not a %s generation backend this build has (%s)", clip(v.s), mode, strings.Join(have, ", "))
			return
		}
		if m.Generate == nil {
			m.Generate = map[string]MediaChoice{}
		}
		m.Generate[mode] = c
	})
}

// multimodalConfig reads multimodal_config: {image|audio|video: {backend, model}}, read_media's
// providers, and video's num_frames. MassGen's other frame-extraction settings (max_frames,
// fps, scene detection) have no effect and warn: frames are always evenly spaced.
func multimodalConfig(w *walker, t *target, f field) {
	kinds, _ := w.mapping(f, 1)
	m := mediaOf(t)
	for _, k := range kinds {
		k.loc = joinLoc(f.loc, k.key)
		if !slices.Contains([]string{"image", "audio", "video"}, k.key) {
			w.warnAt(k.loc, fmt.Sprintf("`%s` is not a kind of media here and is ignored", clip(k.key)), "use image, audio or video", k.keyN)
			continue
		}
		entries, _ := w.mapping(k, 2)
		var c MediaChoice
		for _, e := range entries {
			e.loc = joinLoc(k.loc, e.key)
			switch e.key {
			case "backend":
				s, ok := w.str(e)
				if !ok {
					continue
				}
				if c.Backend = MediaBackendName(s); c.Backend == "" {
					w.errf(e, "use openai, gemini or claude", "`%s` is not a media backend this build has", clip(s))
				}
			case "model":
				c.Model, _ = w.str(e)
			case "num_frames":
				if k.key != "video" {
					w.warnAt(e.loc, fmt.Sprintf("`num_frames` has no effect on %s", k.key), "it is a video setting", e.keyN)
					continue
				}
				n, ok := w.integer(e)
				if ok && (n < 1 || n > MaxVideoFrames) {
					w.errf(e, fmt.Sprintf("use 1 to %d (default 8)", MaxVideoFrames), "num_frames %d is out of range", n)
					continue
				}
				c.NumFrames = n
			default:
				w.warnAt(e.loc, fmt.Sprintf("`%s` has no effect here", clip(e.key)),
					"only backend, model and (for video) num_frames are read; OpenAI and Claude get evenly spaced frames", e.keyN)
			}
		}
		if m.Understand == nil {
			m.Understand = map[string]MediaChoice{}
		}
		m.Understand[k.key] = c
	}
}

func mediaKeysIn(sec string) []Key {
	tool := sec == secBackend
	return []Key{
		{Section: sec, Name: "enable_multimodal_tools", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.28", tool: tool,
			Doc: "Offer custom_tool__read_media (understand images, audio and video) and custom_tool__generate_media (make images and speech).",
			set: media(func(m *Media, _ *walker, v value) { b := v.b; m.Multimodal = &b })},
		{Section: sec, Name: "multimodal_config", Type: TypeMapping, Status: Implemented, Since: "0.1.28", tool: tool,
			ex: "{image: {backend: gemini}}", Doc: "Provider and model per kind of media: {image|audio|video: {backend: openai|gemini|claude, model: ...}}; video also takes num_frames (1-32, default 8), the frames OpenAI and Claude get.",
			raw: multimodalConfig},
		{Section: sec, Name: "image_generation_backend", Type: TypeString, Status: Implemented, Since: "0.1.28", tool: tool, ex: "openai",
			Doc: "generate_media's provider for images: openai.", set: generation("image", false)},
		{Section: sec, Name: "image_generation_model", Type: TypeString, Status: Implemented, Since: "0.1.28", tool: tool, ex: "gpt-image-1",
			Doc: "generate_media's model for images (default gpt-image-1; a Responses model such as gpt-5 uses its image_generation tool).",
			set: generation("image", true)},
		{Section: sec, Name: "audio_generation_backend", Type: TypeString, Status: Implemented, Since: "0.1.28", tool: tool, ex: "openai",
			Doc: "generate_media's provider for speech: openai.", set: generation("audio", false)},
		{Section: sec, Name: "audio_generation_model", Type: TypeString, Status: Implemented, Since: "0.1.28", tool: tool, ex: "gpt-4o-mini-tts",
			Doc: "generate_media's model for speech (default gpt-4o-mini-tts).", set: generation("audio", true)},
		{Section: sec, Name: "video_generation_backend", Type: TypeString, Status: Implemented, Since: "0.1.28", tool: tool, ex: "google",
			Doc: "generate_media's provider for videos: openai (Sora) or gemini/google (Veo).", set: generation("video", false)},
		{Section: sec, Name: "video_generation_model", Type: TypeString, Status: Implemented, Since: "0.1.28", tool: tool, ex: "veo-3.1-generate-preview",
			Doc: "generate_media's model for videos (default sora-2 on OpenAI, veo-3.1-fast-generate-preview on Gemini).",
			set: generation("video", true)},
	}
}

func mediaConfigKeys() []Key {
	return concat(mediaKeysIn(secBackend), mediaKeysIn(secOrch), []Key{
		{Section: secBackend, Name: "enable_image_generation", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "Offer custom_tool__generate_media for images (also on with enable_multimodal_tools).",
			set: media(func(m *Media, _ *walker, v value) { m.ImageGeneration = v.b })},
		{Section: secBackend, Name: "enable_audio_generation", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "Offer custom_tool__generate_media for speech (also on with enable_multimodal_tools).",
			set: media(func(m *Media, _ *walker, v value) { m.AudioGeneration = v.b })},
		{Section: secBackend, Name: "enable_video_generation", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "Offer custom_tool__generate_media for videos: OpenAI's Sora or Gemini's Veo (also on with enable_multimodal_tools).",
			set: media(func(m *Media, _ *walker, v value) { m.VideoGeneration = v.b })},
		{Section: secBackend, Name: "enable_file_generation", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12", tool: true,
			Doc: "Offer custom_tool__text_to_file_generation: an OpenAI model writes the text, saved as txt, md or pdf (pptx is refused).",
			set: media(func(m *Media, _ *walker, v value) { m.FileGeneration = v.b })},
	})
}

// mediaToolNames are MassGen's media tools a custom_tools entry may name
// (massgen/tool/_multimodal_tools); they run natively here, not in Python.
var mediaToolNames = []string{"read_media", "generate_media", "understand_image", "understand_audio", "understand_video", "understand_file",
	"text_to_video_generation", "text_to_file_generation"}

// MediaTool returns which of MassGen's media tools the entry names, or "": its function is
// one of them and its path is MassGen's file or module for it (or absent, MassGen's built-in
// lookup).
func (c CustomTool) MediaTool() string {
	if len(c.Command) > 0 || !slices.Contains(mediaToolNames, c.Function) {
		return ""
	}
	p := strings.ReplaceAll(strings.TrimSuffix(c.Path, ".py"), "\\", "/")
	p = strings.ReplaceAll(p, ".", "/")
	switch {
	case c.Path == "",
		strings.HasSuffix(p, "_multimodal_tools/"+c.Function),
		strings.HasSuffix(p, "_multimodal_tools/generation/"+c.Function),
		strings.HasSuffix(p, "_multimodal_tools"):
		return c.Function
	}
	return ""
}
