package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"massgen/internal/provider"
	"massgen/internal/usage"
)

// Proposer writes candidate instructions with a model: DSPy's instruction proposal, one call.
type Proposer struct {
	Provider       provider.Provider
	Backend, Model string
	Params         map[string]any
}

// maxProposalBytes bounds the proposer's reply.
const maxProposalBytes = 64 << 10

// Propose asks for n system messages better than base for questions like examples' (the
// first three are shown). It returns them as candidates and what the call cost (known false
// when the model has no price). A failed call, or a reply without a usable instruction, is
// an error; fewer than n usable ones is not.
func (p Proposer) Propose(ctx context.Context, base string, examples []Item, n int) ([]Candidate, float64, bool, error) {
	var b strings.Builder
	b.WriteString("A team of AI agents answers questions like these:\n\n")
	for k, it := range examples[:min(3, len(examples))] {
		q := it.Prompt
		if len(q) > 1000 {
			q = q[:1000] + "…"
		}
		fmt.Fprintf(&b, "Example %d:\n<<<\n%s\n>>>\n\n", k+1, q)
	}
	if strings.TrimSpace(base) == "" {
		base = "(none)"
	}
	fmt.Fprintf(&b, "Their current system message:\n<<<\n%s\n>>>\n\n", base)
	fmt.Fprintf(&b, "Write %d different system messages that would make each agent answer such questions correctly more often. "+
		`Each is complete on its own, at most 600 characters. Reply with one JSON object: {"instructions": ["...", ...]}.`, n)
	req := provider.Request{Model: p.Model, Stage: provider.StagePropose, Params: p.Params, MaxResponseBytes: maxProposalBytes,
		System:   "You improve the instructions of AI agents. Reply with one JSON object and nothing else.",
		Messages: []provider.Message{{Role: provider.RoleUser, Content: b.String()}}}
	var text strings.Builder
	var u provider.Usage
	for chunk, err := range p.Provider.Stream(ctx, req) {
		if err != nil {
			return nil, usage.Cost(p.Backend, p.Model, u), usage.Known(p.Backend, p.Model), fmt.Errorf("the proposer call failed: %w", err)
		}
		switch c := chunk.(type) {
		case provider.TextDelta:
			if text.Len()+len(c.Text) <= maxProposalBytes {
				text.WriteString(c.Text)
			}
		case provider.UsageChunk:
			u = u.Add(c.Usage)
		}
	}
	cost, known := usage.Cost(p.Backend, p.Model, u), usage.Known(p.Backend, p.Model)
	list, err := parseInstructions(text.String(), n)
	if err != nil {
		return nil, cost, known, fmt.Errorf("the proposer's reply could not be used (%v)", err)
	}
	out := make([]Candidate, len(list))
	for k, s := range list {
		out[k] = Candidate{Name: fmt.Sprintf("proposed_%d", k+1), SystemMessage: s, From: "proposed"}
	}
	return out, cost, known, nil
}

// parseInstructions reads {"instructions": [...]}: strings only, trimmed, unique, at most
// maxInstructionBytes each, n at most.
func parseInstructions(reply string, n int) ([]string, error) {
	start := strings.IndexByte(reply, '{')
	if start < 0 {
		return nil, errors.New("no JSON object in it")
	}
	var v struct {
		Instructions []json.RawMessage `json:"instructions"`
	}
	if err := json.NewDecoder(strings.NewReader(reply[start:])).Decode(&v); err != nil {
		return nil, fmt.Errorf("bad JSON: %w", err)
	}
	var out []string
	seen := map[string]bool{}
	for _, raw := range v.Instructions {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		s = strings.TrimSpace(s)
		if s == "" || len(s) > maxInstructionBytes || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
		if len(out) == n {
			break
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no usable instruction in it")
	}
	return out, nil
}
