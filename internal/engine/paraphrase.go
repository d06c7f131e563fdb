package engine

import (
	"context"
	"fmt"
	"maps"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/paraphrase"
	"massgen/internal/prompt"
	"massgen/internal/provider"
)

// Paraphraser is the model that writes the agents' variants of the question
// (orchestrator.dspy), with the cache it keeps them in.
type Paraphraser struct {
	// Provider, Backend, Model, Params and Unpriced are the writer's model; a nil Provider
	// means the first agent's. Its spending counts under the first agent.
	Provider       provider.Provider
	Backend, Model string
	Params         map[string]any
	Unpriced       bool
	// Endpoint names where the model is served, for the cache key ("" for the default).
	Endpoint string
	// Cache keeps checked variants; its zero value keeps none.
	Cache paraphrase.Cache
	// Unavailable, when set, is why the writer could not be built where the step runs (a
	// Temporal worker without dspy.backend's key): every agent reads the original, and the
	// event's warning says why.
	Unavailable error
}

// paraphraseQuestion writes and checks the variants before coordination and gives agent i
// the variant of slot i mod num_variants; an agent whose slot failed reads the original
// alone. Whatever fails, the session goes on; the event's warning says what happened. It
// returns the event it published, nil when ctx was cancelled first.
func (s *session) paraphraseQuestion(ctx context.Context) *event.QuestionParaphrased {
	d := s.o.Orchestrator.DSPy
	c := s.agentCallee(0)
	if w := s.o.Paraphraser; w != nil && w.Provider != nil {
		c = callee{agent: 0, p: w.Provider, backend: w.Backend, model: w.Model, params: w.Params, unpriced: w.Unpriced}
	}
	set := paraphrase.Settings{Strategy: d.Strategy, Variants: d.NumVariants, Threshold: d.SemanticThreshold,
		Validate: d.ValidateSemantics, ChainOfThought: d.ChainOfThought, TemperatureRange: d.TemperatureRange}
	var cache paraphrase.Cache
	endpoint := ""
	if w := s.o.Paraphraser; w != nil {
		endpoint = w.Endpoint
		if d.CacheEnabled {
			cache = w.Cache
		}
	}
	key := paraphrase.Key(set, s.o.Question, c.backend+"/"+c.model+"@"+endpoint)
	ev := event.QuestionParaphrased{Writer: s.agents[0].ID, Model: c.backend + "/" + c.model, Strategy: set.Strategy}
	out, hit := cache.Get(key)
	switch {
	case s.o.Paraphraser != nil && s.o.Paraphraser.Unavailable != nil:
		w := s.o.Paraphraser
		if w.Model != "" {
			ev.Model = w.Backend + "/" + w.Model
		}
		out = paraphrase.Outcome{Warning: fmt.Sprintf("the paraphrase writer is not available: %v; every agent reads the original question", w.Unavailable)}
	case hit:
		ev.Cached = true
	default:
		call := func(ctx context.Context, r paraphrase.Request) (string, error) {
			stage := provider.StageParaphrase
			if r.Stage == paraphrase.StageCheck {
				stage = provider.StageParaphraseCheck
			}
			cc := c
			if r.Temperature != nil {
				cc.params = maps.Clone(c.params)
				if cc.params == nil {
					cc.params = map[string]any{}
				}
				if _, own := cc.params["temperature"]; !own || r.Stage == paraphrase.StageCheck {
					cc.params["temperature"] = *r.Temperature
				}
			}
			return s.askOn(ctx, cc, stage, r.System, r.User, paraphrase.MaxReplyBytes)
		}
		var err error
		if out, err = paraphrase.Write(ctx, set, s.o.Question, call); err != nil {
			return nil // cancelled: coordination will not start either
		}
		if err := cache.Put(key, out); err != nil {
			out.Warning = joinWarning(out.Warning, fmt.Sprintf("the variants could not be cached: %v", err))
		}
	}
	ev = s.paraphrased(ev, out)
	s.variants = s.variantsFrom(ev)
	s.publish(ev)
	return &ev
}

// paraphrased is ev with each agent's variant from out, and its warning.
func (s *session) paraphrased(ev event.QuestionParaphrased, out paraphrase.Outcome) event.QuestionParaphrased {
	ev.Warning = out.Warning
	for i, a := range s.agents {
		text, why := out.For(i)
		ev.Variants = append(ev.Variants, event.Paraphrase{Agent: a.ID, Label: coord.Label(i), Text: text, Fallback: text == "", Why: why})
	}
	return ev
}

// variantsFrom is each agent's variant in ev, by id ("" for the original alone).
func (s *session) variantsFrom(ev event.QuestionParaphrased) []string {
	out := make([]string, len(s.agents))
	for _, v := range ev.Variants {
		if i := s.index(v.Agent); i >= 0 {
			out[i] = v.Text
		}
	}
	return out
}

func joinWarning(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// userPrompt is the first message of agent i's coordination conversation: the original
// question, its variant when it has one, and the answers it is shown; in a restarted attempt,
// the restart's feedback first.
func (s *session) userPrompt(i int, answers []prompt.Answer) string {
	v := ""
	if i < len(s.variants) {
		v = s.variants[i]
	}
	return s.restartBlock() + prompt.UserFor(s.o.Question, v, s.o.History, answers)
}
