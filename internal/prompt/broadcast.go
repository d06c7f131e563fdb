package prompt

import (
	"fmt"
	"strings"

	"massgen/internal/provider"
)

// The broadcast tools (coordination.broadcast, MassGen's BroadcastToolkit): ask_others, and
// with broadcast_wait_by_default false the two tools that collect the answers later.
const (
	ToolAskOthers       = "ask_others"
	ToolBroadcastStatus = "check_broadcast_status"
	ToolBroadcastGet    = "get_broadcast_responses"
)

// askGuidance is broadcast_sensitivity's word on when to ask.
var askGuidance = map[string]string{
	"low":    "Ask only when you are blocked, or before a decision that would be costly to undo.",
	"medium": "Ask before significant decisions or design choices, or when a second opinion would change what you do.",
	"high":   "Ask often: whenever you weigh options, propose an approach, or could use input.",
}

// BroadcastTools are the tools a session with broadcast offers. human says the person answers
// rather than the other agents; sensitivity is broadcast_sensitivity; wait is
// broadcast_wait_by_default (false adds the two tools that collect answers later); peers are
// the labels of the agents that may be asked (target_agents).
func BroadcastTools(human bool, sensitivity string, wait bool, peers []string) []provider.ToolSpec {
	who := "the other agents"
	if human {
		who = "the person who asked the original question"
	}
	guidance := askGuidance[sensitivity]
	if guidance == "" {
		guidance = askGuidance["medium"]
	}
	desc := fmt.Sprintf("Ask %s a question and get their answers as this call's result. They cannot see your files or your "+
		"work: put every detail they need into the question. Prefer `questions` with options to choose from; use `question` "+
		"for an open question. %s", who, guidance)
	option := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"id":          map[string]any{"type": "string", "description": "A short id for the option."},
			"label":       map[string]any{"type": "string", "description": "The option as shown."},
			"description": map[string]any{"type": "string", "description": "What choosing it means (optional)."},
		},
		"required": []any{"id", "label"},
	}
	structured := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"text":        map[string]any{"type": "string", "description": "The question."},
			"options":     map[string]any{"type": "array", "items": option, "description": "The options to choose from."},
			"multiSelect": map[string]any{"type": "boolean", "description": "Whether several options may be chosen (default false)."},
			"allowOther":  map[string]any{"type": "boolean", "description": "Whether a free answer is allowed (default true)."},
		},
		"required": []any{"text", "options"},
	}
	props := map[string]any{
		"questions": map[string]any{"type": "array", "items": structured,
			"description": `Questions with options, e.g. [{"text": "Which format?", "options": [{"id": "md", "label": "Markdown"}, {"id": "html", "label": "HTML"}]}].`},
		"question": map[string]any{"type": "string", "description": "An open question, with all the context needed to answer it."},
	}
	if !human && len(peers) > 0 {
		enum := make([]any, len(peers))
		for i, p := range peers {
			enum[i] = p
		}
		props["target_agents"] = map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": enum},
			"description": "Only these agents are asked (their labels, such as agent2); all the others when left out."}
	}
	if !wait {
		props["wait"] = map[string]any{"type": "boolean",
			"description": "Wait for the answers (default false). Without waiting the call returns a request_id: collect the answers with " + ToolBroadcastGet + "."}
	}
	tools := []provider.ToolSpec{{Name: ToolAskOthers, Description: desc, Parameters: map[string]any{"type": "object", "properties": props}}}
	if wait {
		return tools
	}
	byID := map[string]any{
		"type":       "object",
		"properties": map[string]any{"request_id": map[string]any{"type": "string", "description": "The request_id " + ToolAskOthers + " returned."}},
		"required":   []any{"request_id"},
	}
	return append(tools,
		provider.ToolSpec{Name: ToolBroadcastStatus, Description: "How many answers to a question have come, and whose are still awaited.", Parameters: byID},
		provider.ToolSpec{Name: ToolBroadcastGet, Description: "The answers to a question so far, and whether it is complete.", Parameters: byID})
}

// depthGuidance is response_depth's word on how thorough an answer is.
var depthGuidance = map[string]string{
	"low":    "Keep it short and simple: the plainest approach that works, with few moving parts.",
	"medium": "Be concise but complete: a sound approach, sized to the problem, without over-engineering.",
	"high":   "Be thorough: weigh alternatives, name the trade-offs and risks, and give concrete examples.",
}

// ShadowSystem is the system prompt of an agent's side call that answers another agent's
// question: the agent's own system message, then what the call is for. depth is
// response_depth.
func ShadowSystem(agentSystem, depth string) string {
	guidance := depthGuidance[depth]
	if guidance == "" {
		guidance = depthGuidance["medium"]
	}
	var b strings.Builder
	if s := strings.TrimSpace(agentSystem); s != "" {
		b.WriteString(s)
		b.WriteString("\n\n---\n\n")
	}
	b.WriteString("Another agent of your team asks you a question. Answer it from what you know and from your work so far, " +
		"which the conversation above shows. The asker cannot see your files, and you cannot see theirs: rely on the question " +
		"for what they are doing, and say what else you would need to know if it matters. You have no tools here: reply with " +
		"text only; your reply goes back to the asker as it is.\n\n")
	b.WriteString(guidance)
	return b.String()
}

// ShadowQuestion is the message that asks a side call the question of agent from.
func ShadowQuestion(from, question string) string {
	return fmt.Sprintf("Question from %s:\n\n%s\n\nYour answer:", from, question)
}

// ShadowNote tells an agent what its side call answered on its behalf, so that it knows what
// the team was told; answer is clipped.
func ShadowNote(from, question, answer string) string {
	return fmt.Sprintf("[Info] While you worked, %s asked: %q\nOn your behalf you answered: %q\n(For your information only: go on with your work.)",
		from, provider.Clip(question, 500), provider.Clip(answer, 500))
}
