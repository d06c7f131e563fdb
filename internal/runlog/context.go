package runlog

import (
	"fmt"
	"strings"

	"massgen/internal/provider"
)

// context.txt is written for people: the prompt as the agent's model saw it, each part under
// a header that names its role, the text exactly as sent (MassGen writes its prompt dict as
// JSON instead, which buries the text under escapes).

// text renders the conversation: the system prompt, then every message in order, the calls
// an assistant made and the result each got.
func (c conversation) text() string {
	var b strings.Builder
	section(&b, "system", c.System)
	for _, m := range c.Messages {
		switch m.Role {
		case provider.RoleTool:
			title := "tool result for " + m.ToolCallID
			if m.IsError {
				title += " (rejected)"
			}
			section(&b, title, m.Content)
		case provider.RoleAssistant:
			var body strings.Builder
			body.WriteString(m.Content)
			for _, tc := range m.ToolCalls {
				if body.Len() > 0 {
					body.WriteString("\n\n")
				}
				fmt.Fprintf(&body, "[tool call %s, id %s]\n%s", tc.Name, tc.ID, tc.Arguments)
			}
			section(&b, "assistant", body.String())
		default:
			section(&b, string(m.Role), m.Content)
		}
	}
	return b.String()
}

// text renders the winner's conversation, then the answers and the votes that decided.
func (f finalContext) text() string {
	var b strings.Builder
	b.WriteString(f.conversation.text())
	var answers strings.Builder
	for _, a := range f.Answers {
		fmt.Fprintf(&answers, "--- %s (%s) ---\n%s\n\n", a.Label, a.Agent, strings.TrimRight(a.Content, "\n"))
	}
	section(&b, "answers", strings.TrimRight(answers.String(), "\n"))
	var votes strings.Builder
	for _, v := range f.Votes {
		fmt.Fprintf(&votes, "%s (%s) voted for %s: %s\n", v.VoterLabel, v.Voter, v.AnswerLabel, v.Reason)
	}
	if len(f.Votes) == 0 {
		votes.WriteString("(no vote counted)")
	}
	section(&b, "votes", strings.TrimRight(votes.String(), "\n"))
	return b.String()
}

// section writes "=== title ===", the body and a blank line; an empty body says so.
func section(b *strings.Builder, title, body string) {
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "=== %s ===\n", title)
	if body == "" {
		body = "(empty)"
	}
	b.WriteString(strings.TrimRight(body, "\n"))
	b.WriteString("\n")
}
