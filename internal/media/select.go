package media

import (
	"fmt"
	"slices"
	"strings"

	"massgen/internal/config"
)

// What each provider can take, by kind (audio on OpenAI is its transcription endpoint; video
// on OpenAI and Claude is still frames of it).
var can = map[string][]string{
	"openai": {kindImage, kindAudio, kindVideo, kindFile},
	"gemini": {kindImage, kindAudio, kindVideo, kindFile},
	"claude": {kindImage, kindVideo, kindFile},
}

// priority is the order providers are tried in when neither the call, the config nor the
// agent's own backend decides (MassGen's backend_selector: Gemini first for images, audio and
// video; understand_file was OpenAI's).
var priority = map[string][]string{
	kindImage: {"gemini", "openai", "claude"},
	kindAudio: {"gemini", "openai"},
	kindVideo: {"gemini", "openai", "claude"},
	kindFile:  {"openai", "claude", "gemini"},
}

// defaultModels per provider and kind (MassGen's backend_selector defaults).
var defaultModels = map[string]map[string]string{
	"openai": {kindImage: "gpt-4.1", kindAudio: "gpt-4o-transcribe", kindVideo: "gpt-4.1", kindFile: "gpt-4.1"},
	"gemini": {kindImage: "gemini-3-flash-preview", kindAudio: "gemini-3-flash-preview", kindVideo: "gemini-3-flash-preview",
		kindFile: "gemini-3-flash-preview"},
	"claude": {kindImage: "claude-sonnet-4-5", kindVideo: "claude-sonnet-4-5", kindFile: "claude-sonnet-4-5"},
}

// keyVars names the variables that give each provider a key, for messages.
var keyVars = map[string]string{"openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY (or GOOGLE_API_KEY)", "claude": "ANTHROPIC_API_KEY"}

// choose picks the provider and model for kind: the call's backend, else multimodal_config's,
// else the agent's own provider, else the first of priority with a key. A model the call
// names wins; then multimodal_config's (for the provider it names, or any); then the agent's
// own model when its own provider was chosen; then the default.
func (ts *toolset) choose(kind, wantBackend, wantModel string) (Backend, string, error) {
	if wantBackend != "" && wantBackend != "auto" {
		n := config.MediaBackendName(wantBackend)
		if n == "" {
			return Backend{}, "", fmt.Errorf("backend_type %q is not a media provider here; use openai, gemini or claude, or leave it out", clip(wantBackend, 40))
		}
		wantBackend = n
	}
	conf := ts.o.Media.Understand[kind]
	own := config.MediaBackendName(ts.o.Own)
	var order []string
	for _, n := range append([]string{wantBackend, conf.Backend, own}, priority[kind]...) {
		if n != "" && n != "auto" && !slices.Contains(order, n) {
			order = append(order, n)
		}
	}
	for _, n := range order {
		b, ok := ts.o.Backends[n]
		if !ok || !slices.Contains(can[n], kind) {
			continue
		}
		model := wantModel
		switch {
		case model != "":
		case conf.Model != "" && (conf.Backend == "" || conf.Backend == n):
			model = conf.Model
		case n == own && ts.o.OwnModel != "" && kind != kindAudio:
			// The agent's own chat model takes images, video and documents; OpenAI's audio goes
			// to a transcription model.
			model = ts.o.OwnModel
		default:
			model = defaultModels[n][kind]
		}
		return b, model, nil
	}
	var need []string
	for _, n := range priority[kind] {
		need = append(need, keyVars[n])
	}
	why := ""
	if wantBackend != "" && wantBackend != "auto" && !slices.Contains(can[wantBackend], kind) {
		why = fmt.Sprintf("%s does not take %s here; ", wantBackend, kindWord(kind))
	}
	return Backend{}, "", fmt.Errorf("%sno provider for %s: set %s", why, kindWord(kind), strings.Join(need, " or "))
}

func kindWord(kind string) string {
	if kind == kindFile {
		return "documents"
	}
	return kind
}

// clip cuts a value the model sent for a message.
func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
