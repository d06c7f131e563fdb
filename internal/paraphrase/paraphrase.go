// Package paraphrase writes and checks rewordings of a question, MassGen's DSPy paraphrasing
// done natively: one call writes the variants, a second checks that each asks for exactly
// what the original asks, and a local similarity rule throws out copies, fragments and
// rewrites that drift too far. A variant that fails leaves its slot empty: the agents of that
// slot read the original question alone. Nothing here calls a model itself; the caller's
// Call does, through its own providers, and counts what it costs.
package paraphrase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Settings are orchestrator.dspy's, as the writer uses them.
type Settings struct {
	Strategy       string // balanced (default), diverse, conservative, adaptive
	Variants       int    // 1..MaxVariants
	Threshold      float64
	Validate       bool
	ChainOfThought bool
	// TemperatureRange, when it holds [low, high], sets the writing call's temperature.
	TemperatureRange []float64
}

// Caps: the writer's output is bounded by the question's size and the variant count.
const (
	MaxVariants = 10
	// MaxQuestionChars is the longest question paraphrased: a longer one is a document, not a
	// question, and every agent reads it as written.
	MaxQuestionChars = 4000
	// MaxReplyBytes bounds a writing or checking reply: MaxVariants variants of at most
	// 2.5 x MaxQuestionChars, with room for the JSON around them.
	MaxReplyBytes = 128 << 10
)

// Stages of the two calls.
const (
	StageWrite = "write"
	StageCheck = "check"
)

// Request is one model call the paraphraser needs.
type Request struct {
	Stage        string // StageWrite or StageCheck
	System, User string
	// Temperature is nil for the model's default.
	Temperature *float64
}

// Call makes one model call and returns its text (at most MaxReplyBytes of it).
type Call func(ctx context.Context, r Request) (string, error)

// Slot is one variant: its text when it passed, else why it did not.
type Slot struct {
	Text string `json:"text,omitempty"`
	// Confidence is what the check stated (0 without a check).
	Confidence float64 `json:"confidence,omitempty"`
	Why        string  `json:"why,omitempty"` // set when the slot failed
}

// OK reports whether the slot holds a checked variant.
func (s Slot) OK() bool { return s.Why == "" && s.Text != "" }

// Outcome is what Write made of a question.
type Outcome struct {
	Slots []Slot
	// Warning says why no slot, or only some, hold a variant ("" when all do).
	Warning string
}

// For returns the variant agent i reads ("" for the original alone) and the slot's failure.
func (o Outcome) For(i int) (text, why string) {
	if len(o.Slots) == 0 {
		return "", o.Warning
	}
	s := o.Slots[i%len(o.Slots)]
	return s.Text, s.Why
}

// Passed counts the slots that hold a variant.
func (o Outcome) Passed() int {
	n := 0
	for _, s := range o.Slots {
		if s.OK() {
			n++
		}
	}
	return n
}

// Check reports a setting Write cannot run with.
func (s Settings) Check() error {
	switch {
	case s.Variants < 1 || s.Variants > MaxVariants:
		return fmt.Errorf("num_variants %d: use 1 to %d", s.Variants, MaxVariants)
	case strategyText[s.strategy()] == "":
		return fmt.Errorf("strategy %q: use balanced, diverse, conservative or adaptive", s.Strategy)
	case s.Threshold < 0 || s.Threshold > 1:
		return fmt.Errorf("semantic_threshold %v: use a number from 0 to 1", s.Threshold)
	}
	return nil
}

func (s Settings) strategy() string {
	if s.Strategy == "" {
		return "balanced"
	}
	return s.Strategy
}

// Write makes the variants of question: the writing call, the similarity rule on each, then
// the check call on those left. A failed or unreadable call is a warning, never an error: the
// session goes on with the original question. Write returns ctx's error only.
func Write(ctx context.Context, s Settings, question string, call Call) (Outcome, error) {
	if err := s.Check(); err != nil {
		return Outcome{Warning: err.Error()}, nil
	}
	q := strings.TrimSpace(question)
	switch n := utf8.RuneCountInString(q); {
	case n == 0:
		return Outcome{Warning: "the question is empty"}, nil
	case n > MaxQuestionChars:
		return Outcome{Warning: fmt.Sprintf("the question is %d characters, over the %d paraphrased: every agent reads it as written", n, MaxQuestionChars)}, nil
	}
	reply, err := call(ctx, Request{Stage: StageWrite, System: writerSystem, User: writerUser(s, q), Temperature: s.temperature()})
	if ctx.Err() != nil {
		return Outcome{}, ctx.Err()
	}
	if err != nil {
		return Outcome{Warning: fmt.Sprintf("the paraphrase call failed (%v): every agent reads the original question", err)}, nil
	}
	texts, perr := parseVariants(reply)
	if perr != nil {
		return Outcome{Warning: fmt.Sprintf("the paraphrase reply could not be read (%v; it began %q): every agent reads the original question", perr, clip(reply, 120))}, nil
	}
	out := Outcome{Slots: make([]Slot, s.Variants)}
	seen := map[string]bool{normal(q): true}
	for k := range out.Slots {
		if k >= len(texts) {
			out.Slots[k].Why = "the reply had no variant for this slot"
			continue
		}
		t := strings.TrimSpace(texts[k])
		if why := similar(q, t); why != "" {
			out.Slots[k] = Slot{Why: why}
			continue
		}
		if seen[normal(t)] {
			out.Slots[k] = Slot{Why: "it repeats another variant or the original"}
			continue
		}
		seen[normal(t)] = true
		out.Slots[k].Text = t
	}
	if s.Validate && out.Passed() > 0 {
		if err := check(ctx, s, q, call, out.Slots); err != nil {
			if ctx.Err() != nil {
				return Outcome{}, ctx.Err()
			}
			for k := range out.Slots {
				if out.Slots[k].OK() {
					out.Slots[k] = Slot{Why: "not checked: " + err.Error()}
				}
			}
		}
	}
	if n := out.Passed(); n < len(out.Slots) {
		out.Warning = fmt.Sprintf("%d of %d paraphrases passed; the agents of the others read the original question", n, len(out.Slots))
	}
	return out, nil
}

// temperature is the writing call's: the range's high end for diverse, its low end for
// conservative, its middle otherwise; nil without a range.
func (s Settings) temperature() *float64 {
	if len(s.TemperatureRange) != 2 {
		return nil
	}
	lo, hi := s.TemperatureRange[0], s.TemperatureRange[1]
	t := (lo + hi) / 2
	switch s.strategy() {
	case "diverse":
		t = hi
	case "conservative":
		t = lo
	}
	return &t
}

// check asks whether each passing variant asks for exactly what q asks, and fails the slots
// the check does not confirm at s.Threshold.
func check(ctx context.Context, s Settings, q string, call Call, slots []Slot) error {
	var idx []int
	for k, sl := range slots {
		if sl.OK() {
			idx = append(idx, k)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Original question:\n<<<\n%s\n>>>\n\n", q)
	for n, k := range idx {
		fmt.Fprintf(&b, "Paraphrase %d:\n<<<\n%s\n>>>\n\n", n+1, slots[k].Text)
	}
	b.WriteString(checkAsk)
	reply, err := call(ctx, Request{Stage: StageCheck, System: checkerSystem, User: b.String(), Temperature: zero()})
	if err != nil {
		return fmt.Errorf("the check call failed (%w)", err)
	}
	verdicts, err := parseVerdicts(reply)
	if err != nil {
		return fmt.Errorf("the check reply could not be read (%v)", err)
	}
	for n, k := range idx {
		v, ok := verdicts[n+1]
		switch {
		case !ok:
			slots[k] = Slot{Why: "the check gave no verdict on it"}
		case !v.Equivalent:
			slots[k] = Slot{Why: "the check found it asks something else"}
		case v.Confidence < s.Threshold:
			slots[k] = Slot{Why: fmt.Sprintf("the check's confidence %.2f is under semantic_threshold %.2f", v.Confidence, s.Threshold)}
		default:
			slots[k].Confidence = v.Confidence
		}
	}
	return nil
}

func zero() *float64 { z := 0.0; return &z }

// similar is MassGen's quality rule: a variant is at least 5 characters, differs from the
// original, keeps its length within 0.4 to 2.5 times, and shares between 20% and 95% of its
// words. It returns why t fails ("" when it passes).
func similar(q, t string) string {
	switch {
	case utf8.RuneCountInString(t) < 5:
		return "it is too short"
	case normal(t) == normal(q):
		return "it is the original"
	case strings.ContainsFunc(t, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }):
		return "it holds control characters"
	}
	ratio := float64(utf8.RuneCountInString(t)) / float64(utf8.RuneCountInString(q))
	if ratio < 0.4 || ratio > 2.5 {
		return fmt.Sprintf("its length is %.1f times the original's (0.4 to 2.5 allowed)", ratio)
	}
	a, b := words(q), words(t)
	inter := 0
	for w := range b {
		if a[w] {
			inter++
		}
	}
	union := len(a) + len(b) - inter
	if union > 0 {
		if j := float64(inter) / float64(union); j > 0.95 || j < 0.2 {
			return fmt.Sprintf("it shares %.0f%% of the original's words (20%% to 95%% allowed)", 100*j)
		}
	}
	return ""
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		out[w] = true
	}
	return out
}

func normal(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// parseVariants reads the writer's JSON object {"paraphrases": [...]}, fenced or not.
func parseVariants(reply string) ([]string, error) {
	var v struct {
		Paraphrases []json.RawMessage `json:"paraphrases"`
	}
	if err := decodeObject(reply, &v); err != nil {
		return nil, err
	}
	var out []string
	for _, raw := range v.Paraphrases {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = "" // not a string: the slot fails as too short
		}
		out = append(out, s)
		if len(out) == MaxVariants {
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no paraphrases in it")
	}
	return out, nil
}

type verdict struct {
	Index      int     `json:"index"`
	Equivalent bool    `json:"equivalent"`
	Confidence float64 `json:"confidence"`
}

// parseVerdicts reads the checker's {"verdicts": [{index, equivalent, confidence}]}.
func parseVerdicts(reply string) (map[int]verdict, error) {
	var v struct {
		Verdicts []verdict `json:"verdicts"`
	}
	if err := decodeObject(reply, &v); err != nil {
		return nil, err
	}
	out := map[int]verdict{}
	for _, x := range v.Verdicts {
		if _, dup := out[x.Index]; !dup && x.Confidence >= 0 && x.Confidence <= 1 {
			out[x.Index] = x
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no verdicts in it")
	}
	return out, nil
}

// decodeObject decodes the first JSON object in reply (models wrap it in prose or fences).
func decodeObject(reply string, v any) error {
	start := strings.IndexByte(reply, '{')
	if start < 0 {
		return errors.New("no JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(reply[start:]))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad JSON: %w", err)
	}
	return nil
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
