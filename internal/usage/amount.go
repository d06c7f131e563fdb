package usage

import (
	"encoding/json"
	"fmt"

	"massgen/internal/provider"
)

// Amount is a cost as every view shows it. One rule everywhere: a cost with a part nobody
// could price or count is never shown as a plain figure ($0.0000 would pass for free), and a
// cost that is partly the engine's estimate says so.
type Amount struct {
	USD float64
	// Known is false when some of the spending has no price (a model missing from the table)
	// or was never reported (a CLI run stopped before it told its usage): USD is then only
	// what could be counted.
	Known bool
	// Estimated marks an amount that is partly the engine's estimate, for calls cut off
	// before their usage was reported.
	Estimated bool
}

// AmountOf is the amount of cost for usage u, known as the caller says and estimated when u is.
func AmountOf(cost float64, u provider.Usage, known bool) Amount {
	return Amount{USD: cost, Known: known && !u.Unknown, Estimated: u.Estimated}
}

// String is "$0.0123", "≈$0.0123" when estimated, "≥ $0.0123, some prices unknown" when only
// part of it is known, and "unknown" when nothing of it is.
func (a Amount) String() string {
	if !a.Known && a.USD > 0 {
		return "≥ " + a.figure() + ", some prices unknown"
	}
	return a.Short()
}

// Short is String for a table cell or a status line, where a note next to it says what is
// unknown: "≥$0.0123" for a cost only partly known.
func (a Amount) Short() string {
	switch {
	case !a.Known && a.USD == 0:
		return "unknown"
	case !a.Known:
		return "≥" + a.figure()
	}
	return a.figure()
}

func (a Amount) figure() string {
	if a.Estimated {
		return "≈" + Dollars(a.USD)
	}
	return Dollars(a.USD)
}

// Dollars formats a figure as MassGen does: 4 decimals under a cent, 3 under a dollar, else 2.
// It says nothing of what the figure leaves out: a cost is shown through Amount.
func Dollars(c float64) string {
	switch {
	case c < 0.01:
		return fmt.Sprintf("$%.4f", c)
	case c < 1:
		return fmt.Sprintf("$%.3f", c)
	}
	return fmt.Sprintf("$%.2f", c)
}

// bytesPerToken is the rule of thumb for estimating tokens from text.
const bytesPerToken = 4

// Tokens estimates the tokens of n bytes of text: about four bytes a token.
func Tokens(n int) int64 { return int64((n + bytesPerToken - 1) / bytesPerToken) }

// Estimate fills in the usage of a call cut off before the provider reported it: input from
// the size of the request, output from the bytes received, about four bytes a token. Counts
// the provider did report are kept; an estimated usage says so.
func Estimate(u provider.Usage, req provider.Request, received int) provider.Usage {
	if u.InputTokens == 0 {
		u.InputTokens, u.Estimated = Tokens(RequestBytes(req)), true
	}
	if u.OutputTokens == 0 && received > 0 {
		u.OutputTokens, u.Estimated = Tokens(received), true
	}
	return u
}

// RequestBytes is the size of what a request sends the model: system prompt, messages, tool
// calls and tool definitions.
func RequestBytes(req provider.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, tc := range m.ToolCalls {
			n += len(tc.ID) + len(tc.Name) + len(tc.Arguments)
		}
	}
	if b, err := json.Marshal(req.Tools); err == nil && len(req.Tools) > 0 {
		n += len(b)
	}
	return n
}
