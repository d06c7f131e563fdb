package scripted

import (
	"massgen/internal/coord"

	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// badLabel is the label a bad_vote fault votes for: no session has 99 agents in a test.
const badLabel = "agent99"

type actionKind int

const (
	actNone actionKind = iota
	actAnswer
	actVote
	actStop
)

// action is what a well-behaved agent does on a coordination call.
type action struct {
	kind    actionKind
	index   int    // actAnswer: index in Script.Answers, -1 when resubmitting the latest
	content string // actAnswer
	label   string // actVote
}

// decide picks the correct action for this call:
//  1. just told its answer was rejected: vote, if it can;
//  2. no answer accepted yet: submit the next answer (Answers[0] unless that was rejected);
//  3. a next answer and at least ImproveAfter labels shown: submit it;
//  4. vote, if there is a label to vote for;
//  5. otherwise (nothing to vote for) submit what it has, or do nothing.
func (p *Provider) decide(v *view, rejected bool) action {
	s := &p.script
	hasNext := p.next < len(s.Answers)
	if v.stopOffered {
		// Decomposition mode: share each next answer of its part (a later one once
		// ImproveAfter agents have parts), then stop.
		switch {
		case hasNext && v.answerOffered && !rejected && (!p.has || len(v.shownLabels()) >= s.ImproveAfter):
			return action{kind: actAnswer, index: p.next, content: s.Answers[p.next]}
		case !p.has && hasNext && v.answerOffered:
			return action{kind: actAnswer, index: p.next, content: s.Answers[p.next]}
		}
		return action{kind: actStop}
	}
	switch {
	case rejected && v.canVote():
		return action{kind: actVote, label: p.choose(v)}
	case hasNext && v.answerOffered && (!p.has || len(v.labels) >= s.ImproveAfter):
		return action{kind: actAnswer, index: p.next, content: s.Answers[p.next]}
	case v.canVote():
		return action{kind: actVote, label: p.choose(v)}
	case hasNext && v.answerOffered:
		return action{kind: actAnswer, index: p.next, content: s.Answers[p.next]}
	case p.has && v.answerOffered:
		return action{kind: actAnswer, index: -1, content: p.latest}
	}
	return action{kind: actNone}
}

// choose applies Script.Vote to the labels offered; v.canVote() must hold.
func (p *Provider) choose(v *view) string {
	labels := v.labels
	switch policy := strings.TrimSpace(p.script.Vote); policy {
	case "", "longest":
	case "first":
		return labels[0]
	case "last":
		return labels[len(labels)-1]
	case "self":
		if p.has {
			own := strings.TrimSpace(p.latest)
			for _, l := range labels {
				if text, ok := v.answers[l]; ok && strings.TrimSpace(text) == own {
					return l
				}
			}
		}
	default:
		if slices.Contains(labels, policy) {
			return policy
		}
	}
	return longest(labels, v.answers)
}

// longest returns the label whose text is longest, the first one on ties; labels is not empty.
func longest(labels []string, answers map[string]string) string {
	best, bestLen := labels[0], -1
	for _, l := range labels {
		if n := utf8.RuneCountInString(answers[l]); n > bestLen {
			best, bestLen = l, n
		}
	}
	return best
}

// coordination builds the response to a coordination call: act done right, or the fault.
func (p *Provider) coordination(v *view, act action, fault config.FaultKind) *plan {
	pl := &plan{reasoning: p.script.Thinking, text: act.text(), stop: "tool_calls"}
	switch fault {
	case config.FaultNoTool:
		pl.stop = "stop"
	case config.FaultBadVote:
		pl.text = voteText(badLabel)
		pl.calls = []provider.ToolCall{p.voteCall(badLabel)}
	case config.FaultDoubleVote:
		l := p.faultLabel(v, act)
		pl.text = voteText(l)
		pl.calls = []provider.ToolCall{p.voteCall(l), p.voteCall(l)}
	case config.FaultVoteAndAnswer:
		pl.calls = []provider.ToolCall{p.voteCall(p.faultLabel(v, act)), p.answerCall(p.faultContent(act))}
	case config.FaultBadArgs:
		name, args := coord.ToolNewAnswer, `{"content": "unterminated`
		if act.kind == actVote {
			name, args = coord.ToolVote, `{"agent_id": `+jsonString(act.label)+`, "reason": "unterminated`
		}
		pl.calls = []provider.ToolCall{p.call(name, args)}
	case config.FaultDuplicate:
		pl.text = p.duplicateContent(v)
		pl.calls = []provider.ToolCall{p.answerCall(pl.text)}
	default:
		switch act.kind {
		case actAnswer:
			c := p.answerCall(act.content)
			pl.calls = []provider.ToolCall{c}
			pl.submit = &sent{id: c.ID, index: act.index, text: act.content}
		case actVote:
			pl.calls = []provider.ToolCall{p.voteCall(act.label)}
		case actStop:
			pl.calls = []provider.ToolCall{p.stopCall()}
		default:
			pl.stop = "stop"
		}
	}
	return pl
}

// text is what the agent writes before acting.
func (a action) text() string {
	switch a.kind {
	case actAnswer:
		return a.content
	case actVote:
		return voteText(a.label)
	case actStop:
		return "My part is done."
	}
	return "I have nothing to add."
}

func voteText(label string) string {
	return fmt.Sprintf("Reviewing the current answers; %s's is the most complete.", label)
}

// faultLabel is the label a faulty vote names: the intended one, else the policy's choice,
// else agent1.
func (p *Provider) faultLabel(v *view, act action) string {
	switch {
	case act.kind == actVote:
		return act.label
	case len(v.labels) > 0:
		return p.choose(v)
	}
	return "agent1"
}

// faultContent is the answer a faulty response carries: the intended one, else the next, else
// the latest, else the first.
func (p *Provider) faultContent(act action) string {
	switch {
	case act.kind == actAnswer:
		return act.content
	case p.next < len(p.script.Answers):
		return p.script.Answers[p.next]
	case p.has:
		return p.latest
	case len(p.script.Answers) > 0:
		return p.script.Answers[0]
	}
	return ""
}

// duplicateContent is an answer already given: its own latest if shown, else the first shown,
// else Answers[0].
func (p *Provider) duplicateContent(v *view) string {
	labels := v.shownLabels()
	if p.has && slices.ContainsFunc(labels, func(l string) bool { return v.answers[l] == p.latest }) {
		return p.latest
	}
	if len(labels) > 0 {
		return v.answers[labels[0]]
	}
	if len(p.script.Answers) > 0 {
		return p.script.Answers[0]
	}
	return p.latest
}

func (p *Provider) answerCall(content string) provider.ToolCall {
	return p.call(coord.ToolNewAnswer, marshal(struct {
		Content string `json:"content"`
	}{content}))
}

// stopCall is decomposition mode's stop, with the script's status and summary.
func (p *Provider) stopCall() provider.ToolCall {
	status := cmp.Or(p.script.StopStatus, coord.StopComplete)
	summary := p.script.StopSummary
	if summary == "" {
		summary = "My part is done: " + firstLine(p.latest)
		if !p.has {
			summary = "I could not do my part."
		}
	}
	return p.call(coord.ToolStop, marshal(struct {
		Summary string `json:"summary"`
		Status  string `json:"status"`
	}{summary, status}))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

func (p *Provider) voteCall(label string) provider.ToolCall {
	reason := p.script.Reason
	if reason == "" {
		reason = fmt.Sprintf("%s's answer is the most complete and accurate.", label)
	}
	return p.call(coord.ToolVote, marshal(struct {
		AgentID string `json:"agent_id"`
		Reason  string `json:"reason"`
	}{label, reason}))
}

// call numbers tool calls call_1, call_2, ... across the Provider's life; p.mu must be held.
func (p *Provider) call(name, args string) provider.ToolCall {
	p.toolIDs++
	return provider.ToolCall{ID: fmt.Sprintf("call_%d", p.toolIDs), Name: name, Arguments: args}
}

// marshal encodes v as compact JSON without HTML escaping, as models write it.
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("scripted: encode tool arguments: " + err.Error()) // only strings: cannot fail
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func jsonString(s string) string { return marshal(s) }
