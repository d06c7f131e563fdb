package prompt

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"massgen/internal/coord"
	"massgen/internal/provider"
)

// Decomposition mode (MassGen's coordination_mode: decomposition): what the task decomposer,
// the agents owning a part and the presenter integrating the parts read.

// MaxSubtaskChars caps one assigned subtask: it goes into the agent's system prompt on every
// call of the session.
const MaxSubtaskChars = 1500

// DecompositionRequest is the task decomposer's message: split question into one subtask per
// label. systems holds each agent's own system message ("" for none), its expertise; fixed
// holds the subtasks the config already gives (by label), which the split must work around;
// criteria, when set, are what a good split meets (a checklist preset such as decomposition).
func DecompositionRequest(question string, labels, systems []string, fixed map[string]string, guidelines string, criteria []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Split the task below into %d subtasks, one for each agent, to be worked on in parallel; "+
		"one agent then integrates the parts into the final result.\n\n", len(labels))
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE>\n%s\n<END OF ORIGINAL MESSAGE>\n\n", Escape(question))
	b.WriteString("Agents:\n")
	for i, l := range labels {
		desc := "general-purpose agent"
		if i < len(systems) && strings.TrimSpace(systems[i]) != "" {
			desc = clip(strings.Join(strings.Fields(systems[i]), " "), 200)
		}
		if f := fixed[l]; f != "" {
			fmt.Fprintf(&b, "- %s (%s) already owns: %s\n", l, Escape(desc), Escape(f))
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n", l, Escape(desc))
	}
	b.WriteString("\nRules:\n" +
		"- Exactly one subtask per agent; keep the subtasks complementary, not overlapping, and of similar effort.\n" +
		"- Every subtask can start at once: agree on interfaces up front instead of waiting for another agent.\n" +
		"- Two or three sentences each: the part owned, where it meets the neighbouring parts, and how to check it.\n" +
		"- Refer to other agents only by their labels (agent1, agent2, ...).\n")
	if len(fixed) > 0 {
		b.WriteString("- Keep the subtasks already owned as they are; write the others around them.\n")
	}
	if g := strings.TrimSpace(guidelines); g != "" {
		fmt.Fprintf(&b, "- %s\n", Escape(strings.Join(strings.Fields(g), " ")))
	}
	if len(criteria) > 0 {
		b.WriteString("\nA good split meets these criteria:\n")
		for _, c := range criteria {
			fmt.Fprintf(&b, "- %s\n", c)
		}
	}
	b.WriteString("\n")
	writeReplyShape(&b, "subtasks", labels)
	return b.String()
}

// ParseSubtasks reads the decomposer's reply for agents labelled labels: JSON as asked (bare,
// fenced or inside other text; the subtasks keyed by label or a list in agent order), else a
// numbered or labelled list. Each is folded onto one paragraph and cut to MaxSubtaskChars; a
// label without a subtask is absent.
func ParseSubtasks(reply string, labels []string) map[string]string {
	out := map[string]string{}
	add := func(label, text string) {
		if text = cleanTo(text, MaxSubtaskChars); text != "" && out[label] == "" {
			out[label] = text
		}
	}
	if v, ok := findJSON(reply); ok {
		if m, ok := v.(map[string]any); ok {
			if p, ok := m["subtasks"]; ok {
				v = p
			}
		}
		switch p := v.(type) {
		case map[string]any:
			for _, l := range labels {
				s, _ := p[l].(string)
				add(l, s)
			}
		case []any:
			for i, e := range p {
				if s, ok := e.(string); ok && i < len(labels) {
					add(labels[i], s)
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

// FallbackSubtask is the built-in subtask of the agent labelled label when the decomposer
// gave none: a share of the task by position, naming the others' subtasks it must complement.
func FallbackSubtask(label string, i, n int, others map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Take part %d of %d of the task: the aspects the other agents' subtasks do not cover", i+1, n)
	if len(others) > 0 {
		var named []string
		for _, l := range sortedKeys(others) {
			if l != label {
				named = append(named, fmt.Sprintf("%s: %s", l, clip(others[l], 80)))
			}
		}
		if len(named) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(named, "; "))
		}
	}
	b.WriteString(". Agree on interfaces with the others through your answers, and check your part before you stop.")
	return b.String()
}

// decompositionRules is the coordination system prompt's rules in decomposition mode.
func decompositionRules(b *strings.Builder, c Coordination) {
	b.WriteString(`You are one of several agents working on the same request as a team. Each agent owns one part ` +
		`of the work (its subtask); the agents read each other's work, shown anonymously as agent1, agent2, and so on, ` +
		`and one agent integrates all the parts into the final result.
`)
	if s := strings.TrimSpace(c.Subtask); s != "" {
		fmt.Fprintf(b, "\nYOUR SUBTASK:\n%s\n", Escape(s))
	} else {
		b.WriteString("\nNo subtask was assigned to you: pick the part of the work the other agents' answers leave uncovered, and say which in your answer.\n")
	}
	b.WriteString(`
How to take your turn:
- Spend most of your effort on your own subtask; touch the others' areas only where they meet yours (interfaces, shared names, formats).
- Read the other agents' current work and keep your part consistent with it; do not redo their parts.
- If you produced or improved work this turn, call new_answer with a summary of your part: what you did, where ` +
		`your files are, how it connects to the other parts. Keep full file contents in your workspace files, not in the answer.
- If your part is done and you changed nothing this turn, call stop with a summary and status "complete"; ` +
		`if you cannot go on, call stop with status "blocked" and say what blocks you.

Rules:
- End every turn with exactly one tool call: new_answer or stop. Plain text alone does not count.
- A new answer from any agent may bring you back for another turn to integrate it.
- Never ask the user for clarification; make reasonable assumptions and state them.
`)
	if len(c.PartCriteria) > 0 {
		b.WriteString("- Before you call stop, check your part against these criteria:\n")
		for _, cr := range c.PartCriteria {
			fmt.Fprintf(b, "  - %s\n", cr)
		}
	}
	if n := novelty[c.AnswerNovelty]; n != "" {
		b.WriteString("- " + n + "\n")
	}
}

// UpdateParts is Update in decomposition mode.
func UpdateParts(lead string, newAnswers []Answer) string {
	return update(lead, newAnswers, "Look at the other parts again and finish with exactly one call: new_answer (you improved your part) or stop (your part is done).")
}

// EnforcementStop is Enforcement in decomposition mode.
const EnforcementStop = "You did not call a tool. Finish your turn by calling exactly one of the tools: " +
	"new_answer (with your part's new work) or stop (your part is done, or blocked)."

// DecompositionTools returns decomposition mode's workflow tools: new_answer and stop, with
// MassGen's stop arguments (summary, status).
func DecompositionTools() []provider.ToolSpec {
	return []provider.ToolSpec{
		{
			Name:        coord.ToolNewAnswer,
			Description: "Share your part's work with the team: a summary of what you did, where your files are and how it connects to the other parts.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"content": map[string]any{"type": "string", "description": "Your part's work, summarised."},
				},
				"required": []any{"content"},
			},
		},
		{
			Name: coord.ToolStop,
			Description: "Signal that you have reviewed the current state and your part is done as it is. " +
				"Call it only if you made no improvements this turn; otherwise share them with new_answer.",
			Parameters: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"summary": map[string]any{"type": "string", "description": "What you accomplished and how it connects to the other agents' work."},
					"status": map[string]any{"type": "string", "enum": []any{coord.StopComplete, coord.StopBlocked},
						"description": "Whether your subtask is complete or blocked on something."},
				},
				"required": []any{"summary", "status"},
			},
		},
	}
}

// Part is one agent's part as the presenter reads it.
type Part struct {
	Label   string // agent<i>
	Subtask string
	// Answer is its latest answer ("" for none); Status and Summary its stop, if it stopped.
	Answer          string
	Status, Summary string
	// Unfinished says why the part is not done ("" when it is): it failed, the session
	// timed out before it stopped, ...
	Unfinished string
}

// Conflict is a workspace file more than one part wrote, with different contents.
type Conflict struct {
	Path string
	// Kept is the label whose version is at Path; Others map each other label to where its
	// version was put.
	Kept   string
	Others map[string]string
}

// PartsPresentation is what the presenter integrating the parts is shown.
type PartsPresentation struct {
	Question  string
	History   []provider.Message
	Presenter string // its label
	Parts     []Part
	// Workspace is set when the parts' workspace files were gathered into the presenter's
	// workspace; Conflicts lists the files that differed.
	Workspace bool
	Conflicts []Conflict
}

// System returns the presenter's system prompt.
func (p PartsPresentation) System(agentSystem string) string {
	var b strings.Builder
	if s := strings.TrimSpace(agentSystem); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n")
	}
	b.WriteString("The team split the request into parts, one per agent, and you integrate them. Now write the final result for " +
		"the user: one coherent, complete response that combines every part, resolves where they disagree or overlap, and fills " +
		"small gaps between them. Keep each part's concrete details (exact values, names, steps, code).")
	if p.Workspace {
		b.WriteString(" Every part's workspace files have been gathered into your workspace; make them work together there.")
	}
	b.WriteString(" If a part is marked unfinished, say plainly in the result what is missing. " +
		"Write it for the user directly; do not mention agents or this process beyond what is missing.")
	return b.String()
}

// User returns the presenter's message: the original message, then every part.
func (p PartsPresentation) User() string {
	var b strings.Builder
	writeHistory(&b, p.History)
	fmt.Fprintf(&b, "<ORIGINAL MESSAGE>\n%s\n<END OF ORIGINAL MESSAGE>\n\n<PARTS>\n", Escape(p.Question))
	for i, pt := range p.Parts {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Part of %s", pt.Label)
		if pt.Label == p.Presenter {
			b.WriteString(" (your own)")
		}
		b.WriteString(":\n")
		if pt.Subtask != "" {
			fmt.Fprintf(&b, "Subtask: %s\n", Escape(strings.Join(strings.Fields(pt.Subtask), " ")))
		}
		switch {
		case pt.Unfinished != "":
			fmt.Fprintf(&b, "Status: UNFINISHED (%s)\n", Escape(pt.Unfinished))
		case pt.Status != "":
			fmt.Fprintf(&b, "Status: %s: %s\n", pt.Status, Escape(strings.Join(strings.Fields(pt.Summary), " ")))
		}
		if pt.Answer != "" {
			b.WriteString(Block(Answer{Label: pt.Label, Content: pt.Answer}))
			b.WriteString("\n")
		} else {
			b.WriteString("(no work shared)\n")
		}
	}
	b.WriteString("<END OF PARTS>\n")
	if len(p.Conflicts) > 0 {
		b.WriteString("\n<FILE CONFLICTS>\nThese files were written by more than one part, with different contents; reconcile each into one " +
			"file at its path and delete the other copies:\n")
		for _, c := range p.Conflicts {
			fmt.Fprintf(&b, "- %s: %s's version is in place", c.Path, c.Kept)
			for _, l := range sortedKeys(c.Others) {
				fmt.Fprintf(&b, "; %s's is at %s", l, c.Others[l])
			}
			b.WriteString("\n")
		}
		b.WriteString("<END OF FILE CONFLICTS>\n")
	}
	b.WriteString("\nIntegrate the parts into the final result now.")
	return b.String()
}

// cleanTo folds text onto one paragraph, neutralises prompt markers and cuts it to limit
// characters at a word boundary.
func cleanTo(text string, limit int) string {
	text = strings.Trim(strings.Join(strings.Fields(Escape(text)), " "), "\"*")
	return strings.TrimSpace(clip(text, limit))
}

// clip cuts s to limit characters at a word boundary, marking the cut.
func clip(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	cut := string([]rune(s)[:limit])
	if k := strings.LastIndexByte(cut, ' '); k > limit/2 {
		cut = cut[:k]
	}
	return strings.TrimSpace(cut) + " …"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return sortLabelsIn(keys)
}

// sortLabelsIn sorts agent labels by number (agent2 before agent10).
func sortLabelsIn(labels []string) []string {
	num := func(l string) int {
		return coord.ParseLabel(l, 1<<20)
	}
	for i := 1; i < len(labels); i++ {
		for k := i; k > 0 && (num(labels[k]) < num(labels[k-1]) || num(labels[k]) == num(labels[k-1]) && labels[k] < labels[k-1]); k-- {
			labels[k], labels[k-1] = labels[k-1], labels[k]
		}
	}
	return labels
}
