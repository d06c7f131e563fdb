package prompt

import (
	"encoding/json"
	"fmt"
	"massgen/internal/lazy"
	"strings"
	"unicode/utf8"
)

// persona_generator (MassGen's orchestrator.coordination.persona_generator): before
// coordination one model call gives every agent a distinct persona, added to its coordination
// system prompt, so that the agents explore different answers instead of herding.

// Diversity modes (persona_generator.diversity_mode).
const (
	DiversityPerspective    = "perspective"    // what to value and optimise for
	DiversityImplementation = "implementation" // what kind of solution to build
	DiversityMethodology    = "methodology"    // how to go about the work
)

// MaxPersonaChars caps one persona: a few sentences are asked for, and whatever the model
// writes goes into a system prompt on every call of the session.
const MaxPersonaChars = 800

var diversity = map[string]string{
	DiversityPerspective: "Give each agent a different PERSPECTIVE: what it values most and what it optimises for " +
		"(for example the end user's experience, long-term maintainability, robustness under tighter constraints " +
		"than stated, or excellence in the common case). Say what matters and why, not how to build it.",
	DiversityImplementation: "Give each agent a different INTERPRETATION of what kind of solution to produce: " +
		"a different form, scope or mental model of the answer. Say what kind of solution, not how to build it.",
	DiversityMethodology: "Give each agent a different WORKING APPROACH: where it starts (the big picture, the hardest " +
		"part, the simplest complete version, concrete examples) and how it structures its work. Say how to work, " +
		"not what to value or which technologies to use.",
}

// PersonaRequest is the persona call's message for agents labelled labels; systems holds each
// agent's own system message ("" for none), which its persona must build on.
func PersonaRequest(mode, question string, labels, systems []string) string {
	guide, ok := diversity[mode]
	if !ok {
		guide = diversity[DiversityPerspective]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "You are preparing %d AI agents who will each answer the same request in parallel; their answers are then "+
		"compared and combined. Write one distinct persona for each agent.\n\n", len(labels))
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE>\n%s\n<END OF ORIGINAL MESSAGE>\n\n", Escape(question))
	b.WriteString("Agents: " + strings.Join(labels, ", ") + "\n")
	for i, l := range labels {
		if i < len(systems) && strings.TrimSpace(systems[i]) != "" {
			fmt.Fprintf(&b, "%s already has this instruction, which its persona must build on, not replace: %q\n", l,
				strings.Join(strings.Fields(systems[i]), " "))
		}
	}
	b.WriteString("\n" + guide + "\n\n")
	b.WriteString("Rules:\n" +
		"- Two to four sentences per persona, addressed to the agent (\"You ...\").\n" +
		"- Every agent must still answer the whole request, completely and end to end: no narrow roles, no splitting the work.\n" +
		"- Make the personas clearly different from each other.\n\n")
	writeReplyShape(&b, "personas", labels)
	return b.String()
}

// ParsePersonas reads the persona call's reply for agents labelled labels: JSON as asked
// (bare, in a code fence or inside other text; a persona may be a string or an object with
// persona_text or text; the personas may be an object keyed by label or a list in agent
// order), else a numbered or labelled list, one persona per item. It returns what it found by
// label, each cut to MaxPersonaChars; a label without a persona is absent.
func ParsePersonas(reply string, labels []string) map[string]string {
	out := map[string]string{}
	add := func(label, text string) {
		if text = clean(text); text != "" && out[label] == "" {
			out[label] = text
		}
	}
	if v, ok := findJSON(reply); ok {
		if m, ok := v.(map[string]any); ok {
			if p, ok := m["personas"]; ok {
				v = p
			}
		}
		switch p := v.(type) {
		case map[string]any:
			for _, l := range labels {
				add(l, personaText(p[l]))
			}
		case []any:
			for i, e := range p {
				if i < len(labels) {
					add(labels[i], personaText(e))
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	for _, item := range listItems(reply) {
		switch {
		case item.label != "":
			for _, l := range labels {
				if l == item.label {
					add(l, item.text)
				}
			}
		case item.n >= 1 && item.n <= len(labels):
			add(labels[item.n-1], item.text)
		}
	}
	return out
}

func personaText(v any) string {
	switch p := v.(type) {
	case string:
		return p
	case map[string]any:
		for _, k := range []string{"persona_text", "text", "persona"} {
			if s, ok := p[k].(string); ok {
				return s
			}
		}
	}
	return ""
}

// findJSON decodes the first JSON object in s: all of s, a fenced block, or the text from
// the first "{" to its matching "}".
func findJSON(s string) (any, bool) {
	try := func(t string) (any, bool) {
		var v any
		if json.Unmarshal([]byte(strings.TrimSpace(t)), &v) != nil {
			return nil, false
		}
		_, ok := v.(map[string]any)
		return v, ok
	}
	if v, ok := try(s); ok {
		return v, true
	}
	if m := fence().FindStringSubmatch(s); m != nil {
		if v, ok := try(m[1]); ok {
			return v, true
		}
	}
	start := strings.IndexByte(s, '{')
	if start < 0 {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s[start:]))
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	_, ok := v.(map[string]any)
	return v, ok
}

var fence = lazy.Regexp("(?s)```(?:json)?\\s*\\n(.*?)```")

type listItem struct {
	n     int    // the item's number, 0 when labelled
	label string // agent<k> when the item names one
	text  string
}

var (
	numbered = lazy.Regexp(`^\s*(?:[-*]\s*)?\**(\d{1,3})[.):]\**\s+(.*)$`)
	labelled = lazy.Regexp(`^\s*(?:[-*]\s*)?\**(agent\d{1,4})\**\s*[:.)-]\s*(.*)$`)
)

// listItems splits a list reply into its items; lines that follow an item belong to it.
func listItems(s string) []listItem {
	var items []listItem
	for _, line := range strings.Split(s, "\n") {
		if m := labelled().FindStringSubmatch(line); m != nil {
			items = append(items, listItem{label: strings.ToLower(m[1]), text: m[2]})
			continue
		}
		if m := numbered().FindStringSubmatch(line); m != nil {
			n := 0
			fmt.Sscanf(m[1], "%d", &n)
			text := m[2]
			if l := labelled().FindStringSubmatch(text); l != nil {
				items = append(items, listItem{label: strings.ToLower(l[1]), text: l[2]})
				continue
			}
			items = append(items, listItem{n: n, text: text})
			continue
		}
		if len(items) > 0 && strings.TrimSpace(line) != "" {
			items[len(items)-1].text += " " + strings.TrimSpace(line)
		}
	}
	return items
}

// clean folds a persona onto one paragraph, neutralises prompt markers and cuts it to
// MaxPersonaChars at a word boundary.
func clean(text string) string {
	text = strings.Join(strings.Fields(Escape(text)), " ")
	text = strings.Trim(text, "\"*")
	if utf8.RuneCountInString(text) <= MaxPersonaChars {
		return strings.TrimSpace(text)
	}
	r := []rune(text)[:MaxPersonaChars]
	cut := string(r)
	if k := strings.LastIndexByte(cut, ' '); k > MaxPersonaChars/2 {
		cut = cut[:k]
	}
	return strings.TrimSpace(cut) + " …"
}

// fallbacks are the personas used when the call fails or says nothing for an agent, so that
// the agents still differ (MassGen falls back to built-in personas the same way).
var fallbacks = map[string][]string{
	DiversityPerspective: {
		"You value rigour: reason step by step from evidence, check every claim, and prefer a correct, well-supported answer over a broad one.",
		"You value originality: look for the approach others would overlook, and propose it when it serves the request better.",
		"You value completeness: make sure every part of the request is covered and nothing important is missing.",
		"You value scepticism: question the assumptions behind the obvious answer and make yours robust to the ways it could fail.",
		"You value practicality: favour what works under real constraints and can be acted on at once.",
	},
	DiversityMethodology: {
		"Work top-down: outline the whole answer first, then fill in each part.",
		"Start with the hardest or most uncertain part of the request and settle it before the rest.",
		"Write the simplest complete answer first, then improve it in passes.",
		"Start from concrete examples of what a good answer looks like and work back from them.",
		"Build on proven, reliable foundations first; innovate only once they are solid.",
	},
}

// FallbackPersona is the built-in persona of the agent at index i for mode.
func FallbackPersona(mode string, i int) string {
	list, ok := fallbacks[mode]
	if !ok {
		list = fallbacks[DiversityPerspective]
	}
	return list[i%len(list)]
}

// personaSection is how a persona appears in the coordination system prompt. Once the agent
// has seen the others' answers its persona is a preference, not a position to defend
// (MassGen's persona easing), which one static sentence says without changing the prompt.
func personaSection(persona string) string {
	return "Your perspective for this request (each agent was given a different one):\n" + persona + "\n" +
		"Once you have seen the other agents' answers, treat this perspective as a preference, not a position to defend: " +
		"judge every answer on its merits, and vote for or build on the best one.\n\n"
}

// writeReplyShape asks for a JSON reply of one text per agent label under key: the shape the
// persona and decomposer calls both ask for.
func writeReplyShape(b *strings.Builder, key string, labels []string) {
	fmt.Fprintf(b, "Reply with JSON only, in this shape:\n{%q: {", key)
	for i, l := range labels {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%q: \"...\"", l)
	}
	b.WriteString("}}")
}
