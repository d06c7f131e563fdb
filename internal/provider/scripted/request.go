package scripted

import (
	"massgen/internal/coord"

	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"massgen/internal/provider"
)

// ownMarker precedes the presenter's own answer block in the presentation prompt.
const ownMarker = "(your own answer)\n"

// ownLinePrefix opens the line of a turn laid out from the shared prefix that names the
// agent's own answer among those shown (prompt.Turn), followed by its label and " above.".
const ownLinePrefix = "Your own current answer is the one labelled "

// ownLabel returns the label that s's line naming the reader's own answer gives, or "".
func ownLabel(s string) string {
	_, rest, ok := strings.Cut(s, ownLinePrefix)
	if !ok {
		return ""
	}
	label, _, ok := strings.Cut(rest, " above.")
	if _, isLabel := labelNumber(label); !ok || !isLabel {
		return ""
	}
	return label
}

// view is what one request tells the agent.
type view struct {
	// answers maps each label to the latest text shown under it.
	answers map[string]string
	// labels are the labels it may vote for (the vote enum), in agent order.
	labels []string
	// answerOffered and voteOffered say which workflow tools the request offers.
	answerOffered, voteOffered bool
	// stopOffered: decomposition mode's stop is offered (in place of vote).
	stopOffered bool
	// presentation is the final presentation stage, or any call without workflow tools.
	presentation bool
	// own is the label the request marks as the agent's own answer, if any.
	own string
	// tailErrors are the ToolCallIDs of error tool results after the last assistant message.
	tailErrors []string
	// inputChars sizes the prompt for the usage estimate.
	inputChars int
	// lastResult is the text of the last tool result in the conversation.
	lastResult string
}

// readRequest extracts the view from req the way a model would read the prompt.
func readRequest(req provider.Request) *view {
	v := &view{answers: map[string]string{}}
	for _, m := range req.Messages {
		if m.Role == provider.RoleUser || m.Role == provider.RoleTool {
			if own := parseBlocks(m.Content, v.answers); own != "" {
				v.own = own
			}
		}
		if m.Role == provider.RoleTool {
			v.lastResult = m.Content
		}
	}
	for _, t := range req.Tools {
		switch t.Name {
		case coord.ToolNewAnswer:
			v.answerOffered = true
		case coord.ToolVote:
			v.voteOffered = true
			v.labels = sortLabels(voteEnum(t.Parameters))
		case coord.ToolStop:
			v.stopOffered = true
		}
	}
	// Under ToolChoiceNone the only thing left to write is text: the presentation's.
	v.presentation = req.Stage == provider.StagePresentation || req.ToolChoice == provider.ToolChoiceNone ||
		(!v.answerOffered && !v.voteOffered && !v.stopOffered)
	for i := len(req.Messages) - 1; i >= 0 && req.Messages[i].Role == provider.RoleTool; i-- {
		if m := req.Messages[i]; m.IsError {
			v.tailErrors = append(v.tailErrors, m.ToolCallID)
		}
	}
	v.inputChars = utf8.RuneCountInString(req.System)
	// Count what a model would read without serialising the conversation: a few characters of
	// framing per message plus its text.
	for _, m := range req.Messages {
		v.inputChars += 16 + utf8.RuneCountInString(m.Content)
		for _, c := range m.ToolCalls {
			v.inputChars += 16 + utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
		}
	}
	if len(req.Tools) > 0 {
		if b, err := json.Marshal(req.Tools); err == nil {
			v.inputChars += utf8.RuneCount(b)
		}
	}
	return v
}

// canVote reports whether the request lets the agent vote for someone.
func (v *view) canVote() bool { return v.voteOffered && len(v.labels) > 0 }

// shownLabels returns the labels of every answer block seen, in agent order.
func (v *view) shownLabels() []string {
	labels := make([]string, 0, len(v.answers))
	for l := range v.answers {
		labels = append(labels, l)
	}
	return sortLabels(labels)
}

// parseBlocks records every "<agentK>\ntext\n<end of agentK>" block of s into answers (without
// the <changedoc> section a block may end with), a later block replacing an earlier one with
// the same label. It returns the label of the last block marked as the reader's own answer, or "".
func parseBlocks(s string, answers map[string]string) (own string) {
	for {
		i := strings.Index(s, "<agent")
		if i < 0 {
			return own
		}
		before, rest := s[:i], s[i+len("<agent"):]
		n := 0
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 0 || !strings.HasPrefix(rest[n:], ">\n") {
			s = rest
			continue
		}
		label := "agent" + rest[:n]
		body := rest[n+len(">\n"):]
		end := "\n<end of " + label + ">"
		k := strings.Index(body, end)
		if k < 0 {
			s = rest
			continue
		}
		answer := body[:k]
		if j := strings.Index(answer, "\n<changedoc>\n"); j >= 0 { // the journal kept with it
			answer = answer[:j]
		}
		answers[label] = answer
		if strings.HasSuffix(before, ownMarker) {
			own = label
		}
		s = body[k+len(end):]
	}
}

// voteEnum returns parameters.properties.agent_id.enum of the vote tool.
func voteEnum(params map[string]any) []string { return provider.PropertyEnum(params, "agent_id") }

// sortLabels sorts agent labels by their number (agent2 before agent10); labels of another
// shape go last, in string order. It sorts in place and returns labels.
func sortLabels(labels []string) []string {
	slices.SortStableFunc(labels, func(a, b string) int {
		na, oka := labelNumber(a)
		nb, okb := labelNumber(b)
		switch {
		case oka && okb && na != nb:
			return na - nb
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	return labels
}

func labelNumber(l string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(l, "agent"))
	return n, err == nil && strings.HasPrefix(l, "agent")
}
