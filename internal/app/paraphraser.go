package app

import (
	"cmp"
	"fmt"
	"path/filepath"

	"massgen/internal/config"
	"massgen/internal/engine"
	"massgen/internal/paraphrase"
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
