package app

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/paraphrase"
	"massgen/internal/provider"
	"massgen/internal/redact"
	"massgen/internal/usage"
)

// newParaphraser builds orchestrator.dspy's writer: the dspy.backend model through the same
// factory and key rules as an agent's (a missing key is added to missing), or the first
// agent's model without one. It returns nil when paraphrasing is off or runs elsewhere.
func newParaphraser(cfg *config.Config, o Options, red *redact.Redactor, missing *[]string) (*engine.Paraphraser, error) {
	d := cfg.Orchestrator.DSPy
	if !d.Enabled || o.Remote != nil {
		return nil, nil
	}
	w := &engine.Paraphraser{Cache: paraphrase.Cache{Dir: cmp.Or(o.ParaphraseCache, filepath.Join(".massgen", "cache", "paraphrases"))}}
	b := d.Backend
	if b == nil {
		if len(cfg.Agents) > 0 {
			w.Endpoint = redact.URL(cfg.Agents[0].Backend.BaseURL)
		}
		return w, nil
	}
	key, from, err := APIKey(*b, o.Getenv)
	if err != nil {
		*missing = append(*missing, fmt.Sprintf("orchestrator.dspy.backend: %v", err))
		return nil, nil
	}
	p, err := o.NewProvider(*b, key, from)
	if err != nil {
		return nil, errorf(ExitConfig, "orchestrator.dspy.backend: %v", red.Error(err))
	}
	if !red.Empty() {
		p = redacting(p, red)
	}
	w.Provider, w.Backend, w.Model, w.Params = p, b.Type, b.Model, b.Params
	w.Unpriced, w.Endpoint = !usage.Known(b.Type, b.Model), redact.URL(b.BaseURL)
	return w, nil
}

// ParaphraserOn builds orchestrator.dspy's writer where a Temporal worker takes the steps
// before coordination, as a local run builds it, with the worker's keys; check is asked
// about dspy.backend before its provider exists, with the variable its key comes from. A
// writer this worker cannot build (no key, refused by check) is Unavailable: the step falls
// back and says why, and the session goes on. nil when paraphrasing is off.
func ParaphraserOn(cfg *config.Config, getenv func(string) string, newProvider func(b config.Backend, key, keyEnv string) (provider.Provider, error),
	check func(a config.Agent, keyEnv string) error) *engine.Paraphraser {
	d := cfg.Orchestrator.DSPy
	if !d.Enabled {
		return nil
	}
	if newProvider == nil {
		newProvider = NewProvider
	}
	red := redact.New()
	if b := d.Backend; b != nil {
		if key, from, err := APIKey(*b, getenv); err == nil {
			red = redact.New(key) // a provider's error may quote it
			if check != nil {
				if err := check(config.Agent{ID: "orchestrator.dspy.backend", Backend: *b}, from); err != nil {
					return &engine.Paraphraser{Backend: b.Type, Model: b.Model, Unavailable: err}
				}
			}
		}
	}
	var missing []string
	w, err := newParaphraser(cfg, Options{Getenv: getenv, NewProvider: newProvider}, red, &missing)
	switch {
	case err != nil:
		return &engine.Paraphraser{Backend: d.Backend.Type, Model: d.Backend.Model, Unavailable: err}
	case len(missing) > 0:
		return &engine.Paraphraser{Backend: d.Backend.Type, Model: d.Backend.Model, Unavailable: errors.New(strings.Join(missing, "; "))}
	}
	return w
}
