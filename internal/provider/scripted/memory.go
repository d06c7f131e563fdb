package scripted

import (
	"encoding/json"
	"strings"

	"massgen/internal/lazy"
	"massgen/internal/provider"
)

var sentence = lazy.Regexp(`[^.!?\n]+[.!?]`)

// memoryReply answers memory's calls (StageMemory): a fact extraction ("Answer:" in the
// question) lists each sentence of the answer as a fact; a summary is the first sentence of
// each message it is shown.
func memoryReply(req provider.Request) string {
	var user string
	for _, m := range req.Messages {
		if m.Role == provider.RoleUser {
			user = m.Content
		}
	}
	if _, answer, ok := strings.Cut(user, "\nAnswer:\n"); ok {
		facts := []string{}
		for _, s := range sentence().FindAllString(answer, -1) {
			facts = append(facts, strings.TrimSpace(s))
		}
		b, _ := json.Marshal(map[string]any{"facts": facts})
		return string(b)
	}
	var keep []string
	for _, line := range strings.Split(user, "\n") {
		if s := sentence().FindString(line); s != "" {
			keep = append(keep, strings.TrimSpace(s))
		}
	}
	return "Summary: " + strings.Join(keep, " ")
}
