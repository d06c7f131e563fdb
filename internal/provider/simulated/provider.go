package simulated

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"massgen/internal/coord"
	"massgen/internal/provider"
)

// Provider is one simulated agent answering one question, for one session. On a coordination
// call it submits its answer (Population.Answers) until one is taken, then votes
// (Population.vote) for one of the answers the request shows; in the presentation it writes
// its answer again. It never misbehaves: faults are the scripted backend's job.
type Provider struct {
	pop    *Population
	k      int
	q      Question
	answer Answer

	start *Start

	mu       sync.Mutex
	started  bool   // its first coordination call has come
	calls    int    // tool calls made, for their ids
	pending  string // id of the new_answer call whose fate the next request tells
	answered bool   // an answer of this agent was taken
}

var _ provider.Provider = (*Provider)(nil)

// New returns agent k of pop answering q. The agents of one session share start (nil: none).
func (p *Population) New(k int, q Question, start *Start) *Provider {
	return &Provider{pop: p, k: k, q: q, answer: p.Answers(q)[k], start: start}
}

// StartWait bounds how long a first call waits for the other agents' first calls.
const StartWait = 200 * time.Millisecond

// Start makes the agents of one session start together: each first coordination call waits
// until every agent's has come (or StartWait has passed), so that no first prompt shows an
// answer, as in a real run where answers take seconds, and the token counts repeat exactly
// whatever order the engine's goroutines run in. A coordination mode that starts some
// agents only after others answer would make the first ones wait StartWait: leave start
// nil for it.
type Start struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

// NewStart returns the start of one session of pop's agents.
func (p *Population) NewStart() *Start {
	return &Start{n: cmp.Or(p.startN, len(p.Agents)), all: make(chan struct{})}
}

// wait counts one arrival and waits for the others, StartWait at most.
func (s *Start) wait(ctx context.Context) error {
	s.mu.Lock()
	s.arrived++
	if s.arrived == s.n {
		close(s.all)
	}
	s.mu.Unlock()
	t := time.NewTimer(StartWait)
	defer t.Stop()
	select {
	case <-s.all:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// Stream answers one request at once, without waiting (but for the start): the simulation
// measures selection, not latency.
func (p *Provider) Stream(ctx context.Context, req provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if p.firstCall(req) {
			if err := p.start.wait(ctx); err != nil {
				yield(nil, err)
				return
			}
		}
		text, calls, stop := p.respond(req)
		if text != "" && !yield(provider.TextDelta{Text: text}, nil) {
			return
		}
		out := utf8.RuneCountInString(text)
		for _, c := range calls {
			if !yield(provider.ToolCallChunk{Call: c}, nil) {
				return
			}
			out += utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
		}
		u := provider.Usage{InputTokens: tokens(inputChars(req)), OutputTokens: tokens(out)}
		if yield(provider.UsageChunk{Usage: u}, nil) {
			yield(provider.Done{StopReason: stop}, nil)
		}
	}
}

// firstCall reports whether req is the agent's first coordination call, when it has a start.
func (p *Provider) firstCall(req provider.Request) bool {
	if p.start == nil || req.Stage == provider.StagePlanning || req.Stage == provider.StagePersona || req.Stage == provider.StageDecompose {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	first := !p.started
	p.started = true
	return first
}

// respond decides the response to req.
func (p *Provider) respond(req provider.Request) (text string, calls []provider.ToolCall, stop string) {
	switch req.Stage {
	case provider.StagePlanning:
		return "IRREVERSIBLE: NO\nBLOCKED_TOOLS:", nil, "stop"
	case provider.StagePersona:
		return `{"personas": {}}`, nil, "stop"
	case provider.StageDecompose:
		return `{"subtasks": {}}`, nil, "stop"
	}
	v := read(req)
	if v.presentation {
		return p.answer.Text(), nil, "stop"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pending != "" {
		// A refused resubmission does not undo the answer taken before it.
		p.answered = p.answered || !v.refused[p.pending]
		p.pending = ""
	}
	switch {
	case !p.answered && v.voteOffered && p.agreesWith(v) != "":
		// Shown an answer that says what it would say (it joined late: lazy start), it votes
		// for that one, as the prompt asks, rather than write the same again.
		c := p.call(coord.ToolVote, p.withConfidence(v, p.answer.Value, map[string]any{"agent_id": p.agreesWith(v), "reason": "It gives the answer I would give."}))
		return "", []provider.ToolCall{c}, "tool_calls"
	case (!p.answered || len(v.labels) == 0) && v.answerOffered:
		c := p.call(coord.ToolNewAnswer, p.withConfidence(v, p.answer.Value, map[string]any{"content": p.answer.Text()}))
		p.pending = c.ID
		return "", []provider.ToolCall{c}, "tool_calls"
	case len(v.labels) > 0:
		label := p.choose(v)
		value, _, _ := Read(v.answers[label])
		c := p.call(coord.ToolVote, p.withConfidence(v, value, map[string]any{"agent_id": label, "reason": "It gives the answer I would give."}))
		return "", []provider.ToolCall{c}, "tool_calls"
	}
	return "I have nothing to add.", nil, "stop"
}

// choose is the label to vote for among those offered.
func (p *Provider) choose(v view) string {
	var labels []string
	var shown []entry
	for _, l := range v.labels {
		text, ok := v.answers[l]
		if !ok {
			continue
		}
		value, conf, ok := Read(text)
		if !ok {
			continue
		}
		labels = append(labels, l)
		shown = append(shown, entry{value: value, confidence: conf, chars: utf8.RuneCountInString(text)})
	}
	if len(shown) == 0 {
		return v.labels[0]
	}
	return labels[p.pop.vote(p.q, p.k, p.answer.Value, shown)]
}

// agreesWith is the first label offered whose answer says what the agent's own would, or "".
func (p *Provider) agreesWith(v view) string {
	for _, l := range v.labels {
		if value, _, ok := Read(v.answers[l]); ok && value == p.answer.Value {
			return l
		}
	}
	return ""
}

// withConfidence adds the confidence argument, when the tools ask for one, to a call for an
// answer that says value: the agent's stated confidence in its own answer when value is what
// it says; for another value a calibrated agent states the rest of the probability (one minus
// its confidence) and an overconfident one its usual OverconfidentValue.
func (p *Provider) withConfidence(v view, value string, args map[string]any) map[string]any {
	c := p.answer.Confidence
	if !v.confidence || c < 0 {
		return args
	}
	if value != p.answer.Value && p.pop.Agents[p.k].Confidence == Calibrated {
		c = math.Round((1-c)*100) / 100
	}
	args["confidence"] = c
	return args
}

// call builds a tool call numbered call_1, call_2, ...; p.mu must be held.
func (p *Provider) call(name string, args map[string]any) provider.ToolCall {
	p.calls++
	b, _ := json.Marshal(args) // strings and numbers only: cannot fail
	return provider.ToolCall{ID: fmt.Sprintf("call_%d", p.calls), Name: name, Arguments: string(b)}
}

// view is what a request tells the agent.
type view struct {
	answers                    map[string]string // label -> the latest text shown under it
	labels                     []string          // the labels the vote tool offers
	answerOffered, voteOffered bool
	// confidence: the vote tool takes a confidence (vote_weighting: confidence).
	confidence   bool
	presentation bool
	refused      map[string]bool // tool call ids with an error result
}

func read(req provider.Request) view {
	v := view{answers: map[string]string{}, refused: map[string]bool{}}
	for _, m := range req.Messages {
		if m.Role == provider.RoleTool && m.IsError {
			v.refused[m.ToolCallID] = true
		}
		if m.Role == provider.RoleUser || m.Role == provider.RoleTool {
			blocks(m.Content, v.answers)
		}
	}
	for _, t := range req.Tools {
		switch t.Name {
		case coord.ToolNewAnswer:
			v.answerOffered = true
		case coord.ToolVote:
			v.voteOffered = true
			v.labels = provider.PropertyEnum(t.Parameters, "agent_id")
			props, _ := t.Parameters["properties"].(map[string]any)
			_, v.confidence = props["confidence"]
		}
	}
	v.presentation = req.Stage == provider.StagePresentation || req.ToolChoice == provider.ToolChoiceNone ||
		(!v.answerOffered && !v.voteOffered)
	return v
}

// blocks records every "<agentK>\ntext\n<end of agentK>" block of s, a later one replacing
// an earlier one of the same label.
func blocks(s string, into map[string]string) {
	for {
		i := strings.Index(s, "<agent")
		if i < 0 {
			return
		}
		rest := s[i+1:]
		// A label is short: look for its end nearby, so that text full of "<agent" stays linear.
		gt := strings.Index(rest[:min(len(rest), 12)], ">\n")
		if gt < 0 || !isLabel(rest[:gt]) {
			s = rest
			continue
		}
		label := rest[:gt]
		body := rest[gt+2:]
		end := strings.Index(body, "\n<end of "+label+">")
		if end < 0 {
			s = rest
			continue
		}
		into[label] = body[:end]
		s = body[end:]
	}
}

func isLabel(s string) bool {
	n, ok := strings.CutPrefix(s, "agent")
	if !ok || n == "" || len(n) > 4 {
		return false
	}
	for _, r := range n {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// inputChars sizes a request as a model would read it: the system prompt, each message with a
// few characters of framing, and the tools.
func inputChars(req provider.Request) int {
	n := utf8.RuneCountInString(req.System)
	for _, m := range req.Messages {
		n += 16 + utf8.RuneCountInString(m.Content)
		for _, c := range m.ToolCalls {
			n += 16 + utf8.RuneCountInString(c.Name) + utf8.RuneCountInString(c.Arguments)
		}
	}
	if b, err := json.Marshal(req.Tools); err == nil && len(req.Tools) > 0 {
		n += utf8.RuneCount(b)
	}
	return n
}

// tokens is the simulated count: a quarter of the characters, at least 1.
func tokens(chars int) int64 { return int64(max(1, chars/4)) }
