package memory

import (
	"context"
	"fmt"
	"strings"

	"massgen/internal/provider"
)

// Compression keeps a conversation inside its model's context window: once it passes
// Trigger of the window, the oldest messages after the task are summarised by the agent's
// model, and the most recent ones that fit in Target of the window are kept verbatim. What
// was summarised is saved whole where the agent can read it again.

// Tokens estimates the tokens of a system prompt and messages: four bytes a token, and a few
// for each message's framing. Providers count differently; the trigger leaves the margin.
func Tokens(system string, msgs []provider.Message) int {
	n := len(system)/4 + 8
	for _, m := range msgs {
		n += msgTokens(m)
	}
	return n
}

func msgTokens(m provider.Message) int {
	n := len(m.Content)/4 + 4
	for _, tc := range m.ToolCalls {
		n += (len(tc.Name)+len(tc.Arguments))/4 + 4
	}
	return n
}

// Plan decides a compression: it returns k such that msgs[1:k] are summarised and msgs[0]
// (the task) and msgs[k:] are kept, or ok false when the conversation is under trigger of
// window or nothing can be cut. msgs[k] is never a tool result, so no result is separated
// from its call; k may be len(msgs) (everything after the task summarised).
func Plan(system string, msgs []provider.Message, window int, trigger, target float64) (k int, ok bool) {
	if len(msgs) < 3 || window <= 0 || float64(Tokens(system, msgs)) < trigger*float64(window) {
		return 0, false
	}
	budget := int(target*float64(window)) - Tokens(system, msgs[:1]) - summaryReserve
	// Keep the longest tail that fits the budget and starts at a model response or a user
	// message; when not even the latest one fits, everything after the task is summarised.
	best, kept := len(msgs), 0
	for j := len(msgs) - 1; j >= 2; j-- {
		kept += msgTokens(msgs[j])
		if kept > budget {
			break
		}
		if msgs[j].Role != provider.RoleTool {
			best = j
		}
	}
	// A summary costs a call and takes room itself: a cut that frees little (a long system
	// prompt keeps the conversation over the trigger) is not worth one at every call.
	if Tokens("", msgs[1:best]) < minGain {
		return 0, false
	}
	return best, true
}

// minGain is the fewest tokens a compression must summarise.
const minGain = 2 * summaryReserve

// summaryReserve is the room kept for the summary itself, in tokens.
const summaryReserve = 1024

// Transcript is msgs as plain text: what a summary is made from and what is saved whole.
func Transcript(msgs []provider.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		fmt.Fprintf(&b, "### %s\n", m.Role)
		if m.Content != "" {
			b.WriteString(m.Content)
			b.WriteString("\n")
		}
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "[tool call %s %s]\n", tc.Name, tc.Arguments)
		}
		b.WriteString("\n")
	}
	return b.String()
}

const summarySystem = `You compress the earlier part of a working conversation so that the work can go on without it. Write a faithful summary: the facts, numbers, names, file paths, decisions and results found so far, what was tried and failed, and what remained to do. Keep every concrete value; leave out pleasantries. Plain text, at most about 600 words.`

// maxTranscript bounds what one summary call reads.
const maxTranscript = 400_000

// Compactor shortens conversations for one agent.
type Compactor struct {
	Window          int     // the model's context window, in tokens
	Trigger, Target float64 // fractions of Window
	Ask             Complete
	// Save keeps the summarised messages' whole text and returns how the agent can read it
	// again (a path in its workspace); nil or "" when it cannot.
	Save func(text string) (string, error)
}

// Compaction is a compressed conversation.
type Compaction struct {
	Messages      []provider.Message
	Usage         provider.Usage
	Before, After int // estimated tokens
	Dropped       int // messages summarised
	Saved         string
}

// Compact returns the conversation compressed, or nil when it needs no compression.
func (c *Compactor) Compact(ctx context.Context, system string, msgs []provider.Message) (*Compaction, error) {
	k, ok := Plan(system, msgs, c.Window, c.Trigger, c.Target)
	if !ok {
		return nil, nil
	}
	old := Transcript(msgs[1:k])
	saved := ""
	if c.Save != nil {
		where, err := c.Save(old)
		if err != nil {
			return nil, fmt.Errorf("compression: save the summarised messages: %w", err)
		}
		saved = where
	}
	summary, u, err := c.Ask(ctx, summarySystem, clip(old, maxTranscript))
	if err != nil {
		return &Compaction{Usage: u}, fmt.Errorf("compression: summary: %w", err)
	}
	text := "Summary of the earlier part of this conversation (compressed to fit the context window):\n\n" + clip(strings.TrimSpace(summary), 16000)
	if saved != "" {
		text += "\n\nThe earlier messages are saved in full in " + saved + "; read that file when you need their exact content."
	}
	// Roles keep alternating: before a user message the summary is the assistant's, before
	// an assistant's it joins the task.
	out := make([]provider.Message, 0, len(msgs)-k+2)
	if k < len(msgs) && msgs[k].Role == provider.RoleUser {
		out = append(out, msgs[0], provider.Message{Role: provider.RoleAssistant, Content: text})
	} else {
		task := msgs[0]
		task.Content += "\n\n" + text
		task.Stable = false
		out = append(out, task)
	}
	out = append(out, msgs[k:]...)
	return &Compaction{Messages: out, Usage: u, Before: Tokens(system, msgs), After: Tokens(system, out), Dropped: k - 1, Saved: saved}, nil
}
