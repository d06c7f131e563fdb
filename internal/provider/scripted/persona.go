package scripted

import (
	"encoding/json"
	"fmt"
	"slices"

	"massgen/internal/lazy"
	"massgen/internal/provider"
)

// personaStyles are the scripted agents' personas, one per agent in turn: offline runs of
// persona_generator get a reply shaped like a model's.
var personaStyles = []string{
	"You favour rigour: reason from evidence, check each claim, and prefer a correct answer over a broad one.",
	"You favour the reader: make the answer clear, concrete and immediately useful.",
	"You favour completeness: cover every part of the request and the cases others might miss.",
	"You favour scepticism: question the obvious answer and make yours robust to how it could fail.",
}

// subtaskReply answers the task decomposer's request with a subtask for every agent label
// the request names, as the JSON it asks for.
func subtaskReply(req provider.Request) string {
	subtasks := map[string]string{}
	labels := requestLabels(req)
	for i, l := range labels {
		subtasks[l] = fmt.Sprintf("Part %d of %d of the task.", i+1, len(labels))
	}
	b, _ := json.Marshal(map[string]any{"subtasks": subtasks})
	return string(b)
}

var agentLabel = lazy.Regexp(`\bagent\d+\b`)

// personaReply answers persona_generator's request with a persona for every agent label the
// request names, as the JSON it asks for.
func personaReply(req provider.Request) string {
	personas := map[string]string{}
	for i, l := range requestLabels(req) {
		personas[l] = personaStyles[i%len(personaStyles)]
	}
	b, _ := json.Marshal(map[string]any{"personas": personas})
	return string(b)
}

// requestLabels are the agent labels a request's user messages name, sorted.
func requestLabels(req provider.Request) []string {
	var labels []string
	for _, m := range req.Messages {
		if m.Role != provider.RoleUser {
			continue
		}
		for _, l := range agentLabel().FindAllString(m.Content, -1) {
			if !slices.Contains(labels, l) {
				labels = append(labels, l)
			}
		}
	}
	return sortLabels(labels)
}
