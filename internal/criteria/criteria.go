// Package criteria holds the evaluation criteria of checklist voting (MassGen's
// evaluation_criteria_generator): the default list, the named presets
// (orchestrator.coordination.checklist_criteria_preset) and inline lists
// (checklist_criteria_inline). Criteria are numbered E1..En in order.
//
// The texts are this port's own. Where MassGen's default list makes "per-part depth" its
// primary criterion, ours makes correctness primary and lists it first: MassGen's own
// benchmark found votes that "confused detailed explanation with correctness", and a primary
// criterion decides which answer a checklist ranks best.
package criteria

import (
	"fmt"
	"slices"
	"strings"
)

// Categories of a criterion, as in MassGen v0.1.9x.
const (
	// Primary is the criterion that matters most; at most one per list. A checklist ranks
	// answers by their primary scores first.
	Primary = "primary"
	// Standard criteria must pass.
	Standard = "standard"
	// Stretch criteria are nice to have.
	Stretch = "stretch"
)

// MaxItems caps a criteria list: every item is scored for every answer in every checklist.
const MaxItems = 12

// MaxTextChars caps one criterion's text, which every checklist prompt repeats.
const MaxTextChars = 1000

// Criterion is one item of a checklist.
type Criterion struct {
	ID       string `json:"id"` // E1, E2, ...
	Text     string `json:"text"`
	Category string `json:"category"`
}

type item struct{ text, category string }

// Default is the list used when no preset or inline list is set.
var defaultItems = []item{
	{"Correctness: every claim, computation and result is right; the final answer is the correct one. " +
		"Check it yourself (redo the computation, test the code, verify the fact) before you score; " +
		"a long, confident explanation of a wrong result scores low here, however well written.", Primary},
	{"Requirements: the output does what was asked, as it was asked, without dropping or replacing requirements.", Standard},
	{"Completeness: no significant part is missing, thin or placeholder; judge the weakest part, not the average.", Standard},
	{"Clarity and craft: the output is clear, well organised and no longer than it needs to be.", Stretch},
}

// presets are MassGen's preset names, with criteria written for this port.
var presets = map[string][]item{
	"analysis": {
		{"Findings are concrete and specific, each pointing to a place, pattern or data point in the material.", Standard},
		{"Every finding is supported by evidence from the material itself, not by assumptions.", Primary},
		{"Symptoms are traced to root causes.", Standard},
		{"Each significant finding comes with an actionable recommendation.", Standard},
		{"Patterns across the material are surfaced, not only single anomalies.", Stretch},
	},
	"decomposition": {
		{"Together the subtasks cover the whole task; nothing falls between them.", Primary},
		{"Subtasks can be done independently, or their dependencies and order are stated.", Standard},
		{"Work is spread evenly: no subtask is trivial while another carries the bulk.", Standard},
		{"Each subtask description is self-contained and specific enough to act on.", Standard},
		{"The split follows the task's natural boundaries.", Stretch},
	},
	"evaluation": {
		{"Each criterion is specific to this task, not generic advice.", Standard},
		{"Each criterion can be checked by examining the output.", Primary},
		{"The criteria separate excellent work from adequate work.", Standard},
		{"Categories are right: must-pass items are truly required, stretch items are differentiators.", Standard},
		{"The criteria do not contradict each other.", Stretch},
	},
	"persona": {
		{"Each persona leads to a meaningfully different answer, not a change of tone.", Primary},
		{"Each persona is grounded in the task and brings a useful lens.", Standard},
		{"Personas are actionable instructions: an agent knows how its approach changes.", Standard},
		{"Together the personas cover the main reasonable approaches.", Standard},
		{"Each persona is stated strongly enough to survive reading the other answers.", Stretch},
	},
	"planning": {
		{"The plan delivers the requested outcome within its constraints, without scope drift.", Primary},
		{"The task graph is executable: valid dependencies, coherent order, no impossible steps.", Standard},
		{"Each task says what to produce and how to approach it.", Standard},
		{"Each task says how its result will be verified.", Standard},
		{"Tools, libraries and interfaces between tasks are named and justified.", Standard},
		{"Assumptions, trade-offs and risks are documented, and risky work comes first.", Stretch},
	},
	"prompt": {
		{"A capable model given this prompt cold would produce the intended output.", Primary},
		{"The prompt constrains enough without ruling out valid approaches.", Standard},
		{"Important requirements are explicit, not implied.", Standard},
		{"Key instructions are prominent and easy to find.", Stretch},
		{"The prompt guards against the likely failure modes of its task.", Stretch},
	},
	"spec": {
		{"Every requirement is complete, unambiguous and testable.", Primary},
		{"Every requirement has concrete acceptance criteria.", Standard},
		{"What is in scope and what is out of scope are both stated.", Standard},
		{"Requirements are prioritised and consistent with each other.", Standard},
		{"Edge cases, error states and boundaries are covered, not only the happy path.", Stretch},
	},
}

// Presets lists the preset names, sorted.
func Presets() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Default returns the default criteria.
func Default() []Criterion { return number(defaultItems) }

// Preset returns the criteria of a named preset.
func Preset(name string) ([]Criterion, error) {
	items, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("unknown checklist criteria preset %q; valid presets: %s", name, strings.Join(Presets(), ", "))
	}
	return number(items), nil
}

// Inline is one criterion of checklist_criteria_inline as written.
type Inline struct {
	Text     string
	Category string
}

// FromInline numbers an inline list. Categories map as in MassGen: must and core are
// standard, could is stretch, anything else standard; a second primary becomes standard.
func FromInline(list []Inline) ([]Criterion, error) {
	if len(list) == 0 {
		return nil, fmt.Errorf("the inline criteria list is empty")
	}
	if len(list) > MaxItems {
		return nil, fmt.Errorf("%d inline criteria, over the limit of %d", len(list), MaxItems)
	}
	items := make([]item, len(list))
	primary := false
	for k, in := range list {
		text := strings.TrimSpace(in.Text)
		if text == "" {
			return nil, fmt.Errorf("criterion %d has no text", k+1)
		}
		if n := len([]rune(text)); n > MaxTextChars {
			return nil, fmt.Errorf("criterion %d is %d characters long, over the limit of %d", k+1, n, MaxTextChars)
		}
		cat := NormalizeCategory(in.Category)
		if cat == Primary {
			if primary {
				cat = Standard
			}
			primary = true
		}
		items[k] = item{text, cat}
	}
	return number(items), nil
}

// NormalizeCategory maps a category as written (MassGen's old must/should/could/core too) to
// one of Primary, Standard and Stretch.
func NormalizeCategory(c string) string {
	switch strings.ToLower(strings.TrimSpace(c)) {
	case Primary:
		return Primary
	case "could", Stretch:
		return Stretch
	}
	return Standard
}

func number(items []item) []Criterion {
	out := make([]Criterion, len(items))
	for k, it := range items {
		out[k] = Criterion{ID: fmt.Sprintf("E%d", k+1), Text: it.text, Category: it.category}
	}
	return out
}
