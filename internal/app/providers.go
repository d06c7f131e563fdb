package app

import (
	"errors"
	"fmt"

	"massgen/internal/config"
	"massgen/internal/provider"
	"massgen/internal/provider/anthropic"
	"massgen/internal/provider/chat"
	"massgen/internal/provider/gemini"
	"massgen/internal/provider/openai"
	"massgen/internal/provider/scripted"
)

// NewProvider builds the backend of one agent from its config, its key and where the key came
// from (named in errors instead of the key).
func NewProvider(b config.Backend, key, keyEnv string) (provider.Provider, error) {
	o := provider.Options{Type: b.Type, Model: b.Model, APIKey: key, KeyEnv: keyEnv, BaseURL: b.BaseURL, Params: b.Params,
		WebSearch: b.Hosted.WebSearch, CodeExecution: b.Hosted.CodeExecution}
	switch config.BackendTypes[b.Type].Protocol {
	case config.ProtocolScripted:
		if b.Script == nil {
			return nil, errors.New("scripted backend without a script")
		}
		return scripted.New(*b.Script, b.Model), nil
	case config.ProtocolResponses:
		return openai.New(o)
	case config.ProtocolChat:
		return chat.New(o)
	case config.ProtocolMessages:
		return anthropic.New(o)
	case config.ProtocolGemini:
		return gemini.New(o)
	}
	return nil, fmt.Errorf("backend type %q is not supported yet in this build (use type: scripted for offline agents)", b.Type)
}
