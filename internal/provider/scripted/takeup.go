package scripted

import (
	"massgen/internal/coord"

	"encoding/json"
	"strconv"
	"strings"

	"massgen/internal/provider"
)

// takeUp rebuilds, from the first request this Provider serves, what its agent did before:
// a session resumed in a new process (massgen resume) hands a new Provider a conversation
// that an earlier one held, and a model reads its history from the conversation alone. Its
// own answers are the new_answer calls in the conversation that were not refused (answers
// shown are not taken for its own: another agent may have written the same text); the next
// answer is the one after the last of them. Tool call ids go on after the highest in the conversation. p.mu must be held.
func (p *Provider) takeUp(req provider.Request) {
	refused := map[string]bool{}
	for _, m := range req.Messages {
		if m.Role == provider.RoleTool && m.IsError {
			refused[m.ToolCallID] = true
		}
	}
	last := -1
	mark := func(text string) {
		text = strings.TrimSpace(text)
		for k, a := range p.script.Answers {
			if strings.TrimSpace(a) == text && k > last {
				last = k
			}
		}
	}
	// A turn laid out from the shared prefix holds none of the agent's earlier calls, only
	// the answers and the line naming its own among them.
	shown := map[string]string{}
	for _, m := range req.Messages {
		if m.Role == provider.RoleUser || m.Role == provider.RoleTool {
			parseBlocks(m.Content, shown)
			if l := ownLabel(m.Content); l != "" {
				if text, ok := shown[l]; ok {
					mark(text)
				}
			}
		}
	}
	for _, m := range req.Messages {
		if m.Role != provider.RoleAssistant {
			continue
		}
		for _, tc := range m.ToolCalls {
			if n, err := strconv.Atoi(strings.TrimPrefix(tc.ID, "call_")); err == nil && n > p.toolIDs {
				p.toolIDs = n
			}
			switch tc.Name {
			case coord.ToolNewAnswer:
				var args struct {
					Content string `json:"content"`
				}
				if json.Unmarshal([]byte(tc.Arguments), &args) == nil && !refused[tc.ID] {
					mark(args.Content)
				}
			case coord.ToolVote:
			default:
				p.steps++
			}
		}
	}
	if last >= 0 {
		p.next, p.latest, p.has = last+1, p.script.Answers[last], true
	}
}
