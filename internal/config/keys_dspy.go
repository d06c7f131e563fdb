package config

import (
	"fmt"
	"reflect"
	"strings"
)

// DSPy is orchestrator.dspy: MassGen's question paraphrasing (its dspy_paraphraser), done
// natively. Before coordination one call writes NumVariants rewordings of the question, a
// second call checks that each asks for exactly the same thing, and each agent reads the
// original question with the variant of its slot (agent i, slot i mod NumVariants); a slot
// whose variant failed gives its agents the original alone.
type DSPy struct {
	Enabled bool
	// Backend is the model that writes and checks the variants; nil means the first agent's.
	Backend *Backend
	// NumVariants is how many variants are written, 1 to MaxParaphraseVariants (default 3).
	NumVariants int
	// Strategy is balanced (default), diverse, conservative or adaptive: how far a variant
	// may move from the original's wording.
	Strategy string
	// CacheEnabled keeps checked variants on disk, keyed by question, strategy and model, so
	// the same question costs no call the next time (default true).
	CacheEnabled bool
	// SemanticThreshold is the confidence the check must state for a variant to pass
	// (default 0.85).
	SemanticThreshold float64
	// ValidateSemantics makes the check call (default true); without it only the local
	// similarity rule checks the variants.
	ValidateSemantics bool
	// ChainOfThought asks the writer to reason before it writes (use_chain_of_thought).
	ChainOfThought bool
	// TemperatureRange, when set (temperature_range), sets the writing call's temperature by
	// strategy; nil sends none, the model's default (reasoning models take no other).
	TemperatureRange []float64
}

// Paraphrase strategies (orchestrator.dspy.strategy).
var ParaphraseStrategies = []string{"balanced", "diverse", "conservative", "adaptive"}

// MaxParaphraseVariants caps num_variants: every variant is read and checked, and more than a
// handful adds wording, not diversity.
const MaxParaphraseVariants = 10

// DefaultDSPy is orchestrator.dspy's defaults, MassGen's.
func DefaultDSPy() DSPy {
	return DSPy{NumVariants: 3, Strategy: "balanced", CacheEnabled: true, SemanticThreshold: 0.85, ValidateSemantics: true}
}

func dspy(f func(d *DSPy, v value)) func(*walker, *target, value) {
	return func(_ *walker, t *target, v value) { f(&t.cfg.Orchestrator.DSPy, v) }
}

func dspyKeys() []Key {
	return []Key{
		{Section: secDSPy, Name: "enabled", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "Give each agent a checked paraphrase of the question.", set: dspy(func(d *DSPy, v value) { d.Enabled = v.b })},
		{Section: secDSPy, Name: "backend", Type: TypeMapping, Status: Implemented, Since: "0.1.12", ex: "{type: openai, model: gpt-5-nano}",
			Doc: "The model that writes and checks the paraphrases: type, model, base_url, api_key and request parameters such as temperature (default: the first agent's).",
			raw: dspyBackend},
		{Section: secDSPy, Name: "num_variants", Type: TypeInt, Default: "3", Status: Implemented, Since: "0.1.12",
			Doc: "How many paraphrases are written; agent i reads number i mod num_variants.", check: between(1, MaxParaphraseVariants),
			set: dspy(func(d *DSPy, v value) { d.NumVariants = v.n })},
		{Section: secDSPy, Name: "strategy", Type: TypeEnum, Enum: ParaphraseStrategies, Default: "balanced", Status: Implemented, Since: "0.1.12",
			Doc: "How far a paraphrase may move from the original wording.", set: dspy(func(d *DSPy, v value) { d.Strategy = v.s })},
		{Section: secDSPy, Name: "cache_enabled", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.12",
			Doc: "Keep checked paraphrases in .massgen/cache/paraphrases, keyed by question, strategy and model.",
			set: dspy(func(d *DSPy, v value) { d.CacheEnabled = v.b })},
		{Section: secDSPy, Name: "semantic_threshold", Type: TypeNumber, Default: "0.85", Status: Implemented, Since: "0.1.12",
			Doc: "Confidence the meaning check must state for a paraphrase to be used.", check: between01,
			set: dspy(func(d *DSPy, v value) { d.SemanticThreshold = v.x })},
		{Section: secDSPy, Name: "validate_semantics", Type: TypeBool, Default: "true", Status: Implemented, Since: "0.1.12",
			Doc: "Check each paraphrase's meaning with a second call (the similarity rule applies always).",
			set: dspy(func(d *DSPy, v value) { d.ValidateSemantics = v.b })},
		{Section: secDSPy, Name: "use_chain_of_thought", Type: TypeBool, Default: "false", Status: Implemented, Since: "0.1.12",
			Doc: "Ask the writer to reason before it writes the paraphrases (more output tokens).",
			set: dspy(func(d *DSPy, v value) { d.ChainOfThought = v.b })},
		{Section: secDSPy, Name: "temperature_range", Type: TypeList, Status: Implemented, Since: "0.1.12", ex: "[0.3, 0.9]",
			Doc: "[low, high]: the writing call's temperature is high (diverse), low (conservative) or the middle; unset sends none.",
			raw: temperatureRange},
	}
}

// dspyBackend reads orchestrator.dspy.backend as an agent's backend is read, then refuses
// what a writer of paraphrases has no use for: tools, uploads and coding-agent CLIs.
func dspyBackend(w *walker, t *target, f field) {
	d := agentDef{}
	sub := *t
	sub.agent = &d
	sub.backend = nil
	backend(w, &sub, f)
	b := d.agent.Backend
	if b.Type == "" {
		return // reported by backend
	}
	if BackendTypes[b.Type].Protocol == ProtocolCLI {
		w.errf(f, "use an API backend (openai, claude, gemini, chatcompletion, ...) or remove backend: to use the first agent's",
			"dspy.backend type `%s` is a coding-agent CLI, which cannot write paraphrases", b.Type)
		return
	}
	var extra []string
	if !reflect.ValueOf(b.Tools).IsZero() {
		extra = append(extra, "tools")
	}
	if b.Hosted != (HostedTools{}) {
		extra = append(extra, "enable_* tools")
	}
	if len(b.Uploads) > 0 {
		extra = append(extra, "upload_files")
	}
	if len(extra) > 0 {
		w.errf(f, "keep type, model, base_url, api_key and request parameters only",
			"dspy.backend has %s: the paraphrase writer makes plain calls without them", strings.Join(extra, ", "))
		return
	}
	t.cfg.Orchestrator.DSPy.Backend = &b
}

// temperatureRange reads [low, high], two numbers from 0 to 2 with low <= high.
func temperatureRange(w *walker, t *target, f field) {
	const sugg = "write temperature_range: [0.3, 0.9] (two numbers from 0 to 2, low first)"
	items, ok := w.list(f)
	if !ok {
		return
	}
	if len(items) != 2 {
		w.errf(f, sugg, "temperature_range must hold two numbers, not %d", len(items))
		return
	}
	var r []float64
	for _, it := range items {
		x, ok := w.number(it)
		if !ok {
			return
		}
		if x < 0 || x > 2 {
			w.errf(it, sugg, "temperature %v is outside 0 to 2", x)
			return
		}
		r = append(r, x)
	}
	if r[0] > r[1] {
		w.errf(f, sugg, "temperature_range [%v, %v] has its low end above its high end", r[0], r[1])
		return
	}
	t.cfg.Orchestrator.DSPy.TemperatureRange = r
}

// dspyAfter warns about settings that have no effect.
func dspyAfter(w *walker, t *target, f field, present map[string]field) {
	d := t.cfg.Orchestrator.DSPy
	if g, ok := present["semantic_threshold"]; ok && !d.ValidateSemantics {
		w.warnAt(g.loc, "`semantic_threshold` has no effect with validate_semantics: false",
			fmt.Sprintf("remove it, or set validate_semantics: true to check meaning at %v", d.SemanticThreshold), g.keyN)
	}
}
