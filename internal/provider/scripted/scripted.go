// Package scripted plays deterministic offline agents that behave like a model. A Provider sees
// only the provider.Request the engine sends (system prompt, messages, tool specs, stage) and
// answers with streamed chunks and workflow tool calls, following a config.Script: which answers
// to submit and when, how to vote, how fast to type, and on which calls to misbehave. It powers
// the offline demo and the engine's tests.
package scripted

import (
	"massgen/internal/coord"

	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"massgen/internal/config"
	"massgen/internal/provider"
)

// Name is the provider name used in errors.
const Name = "scripted"

// Sentinel errors wrapped by the *provider.Error of the fail and fatal faults.
var (
	// ErrFailure is the retryable failure of a "fail" fault.
	ErrFailure = errors.New("scripted failure")
	// ErrInvalidKey is the fatal failure of a "fatal" fault, as a rejected API key.
	ErrInvalidKey = errors.New("invalid API key")
)

// Provider is one scripted agent. Its state (how many calls it has served, which of its answers
// the engine accepted) lives across calls, so one Provider serves exactly one agent for one
// session. It is safe for concurrent use, though calls are meant to come one at a time.
type Provider struct {
	script config.Script
	model  string

	mu      sync.Mutex
	calls   int    // Stream calls started, for fault matching
	toolIDs int    // tool calls emitted, for call IDs
	steps   int    // script.ToolCalls made so far
	next    int    // index in script.Answers of the next answer to submit
	latest  string // the latest answer taken as accepted
	has     bool   // whether any answer was accepted
	pending *sent  // the answer sent on the previous call, not yet known accepted
	evals   int    // post-evaluation calls served
	checks  int    // verifier calls served
}

// sent is a well-formed new_answer whose fate the next request tells.
type sent struct {
	id    string // tool call ID
	index int    // index in script.Answers, -1 for a resubmission of latest
	text  string
}

var _ provider.Provider = (*Provider)(nil)

// New returns a scripted agent playing s. model is only echoed in error messages. The script is
// copied, so later changes to s do not affect the Provider.
func New(s config.Script, model string) *Provider {
	s.Answers = slices.Clone(s.Answers)
	s.Faults = slices.Clone(s.Faults)
	s.ToolCalls = slices.Clone(s.ToolCalls)
	return &Provider{script: s, model: model}
}

// Stream answers one request. Nothing happens until the first pull; each iteration is one
// model call, counted for fault matching. The call waits Script.Latency before its first chunk
// and Script.ChunkDelay between chunks, and returns ctx.Err() as soon as ctx is done.
//
// In a coordination call (workflow tools offered) it streams Script.Thinking as reasoning, the
// text of its action, then exactly one new_answer or vote call, usage and Done{"tool_calls"},
// unless a fault applies. In the presentation stage it streams Script.Final (or its latest
// answer), usage and Done{"stop"}, and never calls a tool.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		pl := p.plan(req)
		p.play(ctx, pl, yield)
	}
}

// plan decides the whole response of one call and updates the state it depends on.
func (p *Provider) plan(req provider.Request) *plan {
	v := readRequest(req)
	if req.Stage == provider.StagePlanning {
		// Not one of the calls faults count: the check comes before the session proper.
		pl := &plan{text: cmp.Or(p.script.Planning, "IRREVERSIBLE: NO\nBLOCKED_TOOLS:"), stop: "stop"}
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}
	if req.Stage == provider.StagePersona {
		pl := &plan{text: personaReply(req), stop: "stop"}
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}
	if req.Stage == provider.StageDecompose {
		pl := &plan{text: subtaskReply(req), stop: "stop"}
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}
	if req.Stage == provider.StageMemory {
		pl := &plan{text: memoryReply(req), stop: "stop"}
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}
	if req.Stage == provider.StageBroadcast {
		// A side call answering another agent's question: not one of the agent's own calls,
		// which faults and the script count.
		pl := &plan{text: p.broadcastReply(), stop: "stop"}
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}
	if req.Stage == provider.StageParaphrase || req.Stage == provider.StageParaphraseCheck || req.Stage == provider.StagePropose {
		text := paraphraseReply(req)
		switch req.Stage {
		case provider.StageParaphraseCheck:
			text = paraphraseCheckReply(req)
		case provider.StagePropose:
			text = proposeReply(req)
		}
		pl := &plan{text: text, stop: "stop"}
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if req.Stage == provider.StagePostEvaluation {
		// Not one of the calls faults count: the check comes after the session proper.
		pl := p.postEvaluation()
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}
	if req.Stage == provider.StageVerify {
		// A verifier's check, after coordination: not one of the calls faults count.
		pl := &plan{text: verdictReply(p.script.Verdicts, p.checks), stop: "stop"}
		p.checks++
		pl.usage = usageOf(v.inputChars, pl)
		return pl
	}
	p.calls++
	if p.calls == 1 {
		p.takeRole(req)
		p.takeUp(req)
	}
	rejected := p.resolvePending(v)

	var pl *plan
	fault := p.faultFor(p.calls, v.presentation)
	switch {
	case fault == config.FaultHang:
		return &plan{hang: true}
	case fault == config.FaultFail:
		return &plan{err: &provider.Error{Provider: Name, Err: ErrFailure}}
	case fault == config.FaultFatal:
		return &plan{err: p.fatalError()}
	case v.presentation:
		pl = &plan{text: p.presentation(v), stop: "stop"}
	case (fault == "" || fault == config.FaultTruncated) && !p.has && p.steps < len(p.script.ToolCalls):
		pl = p.toolStep(v)
	case fault == config.FaultTruncated:
		pl = p.coordination(v, p.decide(v, rejected), "")
	default:
		act := p.decide(v, rejected)
		if ct, gated := readChecklistTool(req); gated && act.kind == actVote && fault == "" {
			// Checklist-gated voting: score first, then follow the verdict.
			cv, scored := lastVerdict(req)
			switch {
			case !scored:
				pl = p.checklistCall(v, ct, offersProposals(req))
			case cv.Verdict == coord.ToolNewAnswer && p.next < len(p.script.Answers) && v.answerOffered:
				act = action{kind: actAnswer, index: p.next, content: p.script.Answers[p.next]}
			case cv.Best != "":
				act.label = cv.Best
			}
		}
		if pl == nil {
			pl = p.coordination(v, act, fault)
		}
	}
	if fault == config.FaultTruncated {
		pl.truncate()
	}
	pl.usage = usageOf(v.inputChars, pl)
	return pl
}

// toolStep makes the next scripted tool call, "{{result}}" in its string arguments standing
// for the previous tool result.
func (p *Provider) toolStep(v *view) *plan {
	tc := p.script.ToolCalls[p.steps]
	p.steps++
	args := substitute(tc.Args, v.lastResult)
	if args == nil {
		args = map[string]any{}
	}
	return &plan{text: "Using " + tc.Name + ".", calls: []provider.ToolCall{p.call(tc.Name, marshal(args))}, stop: "tool_calls"}
}

// substitute returns v with "{{result}}" replaced by result in every string it holds.
func substitute(v any, result string) map[string]any {
	m, _ := substituteValue(v, result).(map[string]any)
	return m
}

func substituteValue(v any, result string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "{{result}}", result)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substituteValue(e, result)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substituteValue(e, result)
		}
		return out
	}
	return v
}

// resolvePending settles the answer sent on the previous call: rejected when the request ends
// with an error tool result for it, accepted otherwise. A rejected answer is skipped for good
// (the agent moves on to its next one); the caller falls back to voting on this call.
func (p *Provider) resolvePending(v *view) (rejected bool) {
	s := p.pending
	if s == nil {
		return false
	}
	p.pending = nil
	if s.index >= 0 {
		p.next = s.index + 1
	}
	if slices.ContainsFunc(v.tailErrors, func(id string) bool { return id == s.id || id == "" }) {
		return true
	}
	p.latest, p.has = s.text, true
	return false
}

// faultFor returns the first fault matching this call, or "". In the presentation stage only
// fail, fatal and hang apply; the others are about workflow tools and are passed over.
func (p *Provider) faultFor(call int, presentation bool) config.FaultKind {
	for _, f := range p.script.Faults {
		if f.Call != 0 && f.Call != call {
			continue
		}
		switch f.Kind {
		case config.FaultFail, config.FaultFatal, config.FaultHang, config.FaultTruncated:
			return f.Kind
		}
		if !presentation {
			return f.Kind
		}
	}
	return ""
}

// presentation is the text of the final presentation: Script.Final, else the latest accepted
// answer, else the answer the request marks as its own, else the longest shown, else Answers[0].
func (p *Provider) presentation(v *view) string {
	switch {
	case strings.Contains(p.script.Final, "{{parts}}"):
		var parts []string
		for _, l := range v.shownLabels() {
			parts = append(parts, v.answers[l])
		}
		return strings.ReplaceAll(p.script.Final, "{{parts}}", strings.Join(parts, "\n\n"))
	case p.script.Final != "":
		return p.script.Final
	case p.has:
		return p.latest
	case v.own != "":
		return v.answers[v.own]
	}
	if labels := v.shownLabels(); len(labels) > 0 {
		return v.answers[longest(labels, v.answers)]
	}
	if len(p.script.Answers) > 0 {
		return p.script.Answers[0]
	}
	return ""
}

// fatalError is the error of a "fatal" fault: what a backend returns for a rejected key.
func (p *Provider) fatalError() error {
	err := ErrInvalidKey
	if p.model != "" {
		err = fmt.Errorf("model %q: %w", p.model, ErrInvalidKey)
	}
	return &provider.Error{Provider: Name, Status: 401, Fatal: true, Err: err}
}

// broadcastReply answers an ask_others question: Script.BroadcastReply, else what the agent
// stands for so far (its latest accepted answer, or its first).
func (p *Provider) broadcastReply() string {
	if p.script.BroadcastReply != "" {
		return p.script.BroadcastReply
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.has:
		return "My current answer: " + p.latest
	case len(p.script.Answers) > 0:
		return "I would answer: " + p.script.Answers[0]
	}
	return "I have no view on this yet."
}
