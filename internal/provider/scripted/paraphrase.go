package scripted

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"massgen/internal/lazy"
	"massgen/internal/provider"
)

// Offline runs of orchestrator.dspy get replies shaped like a model's: the writer rewords the
// question with fixed openings, and the checker confirms every rewording it is shown.

var (
	quoted      = lazy.Regexp(`(?s)<<<\n(.*?)\n>>>`)
	wantN       = lazy.Regexp(`Write (\d+) different rewrites`)
	paraphraseN = lazy.Regexp(`(?m)^Paraphrase (\d+):`)
	proposeN    = lazy.Regexp(`Write (\d+) different system messages`)
)

// instructionStyles are the scripted proposer's candidate instructions (massgen eval
// --optimize), one per candidate in turn.
var instructionStyles = []string{
	"Work step by step and check each step before you answer.",
	"Answer concisely and state the final answer on its own line.",
	"Consider the options one by one and rule out the ones that contradict a fact.",
	"Restate the question in your own words before you answer it.",
}

// proposeReply answers the proposal call with as many instructions as it asks for.
func proposeReply(req provider.Request) string {
	n := 1
	if m := proposeN().FindStringSubmatch(lastUser(req)); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	out := make([]string, 0, n)
	for k := range min(n, len(instructionStyles)) {
		out = append(out, instructionStyles[k])
	}
	b, _ := json.Marshal(map[string]any{"instructions": out})
	return string(b)
}

// rewordings are the scripted writer's, one per variant in turn.
var rewordings = []string{
	"Could you tell me: %s",
	"Here is what I would like to know: %s",
	"Please answer the following: %s",
	"My question is this: %s",
}

func lastUser(req provider.Request) string {
	for k := len(req.Messages) - 1; k >= 0; k-- {
		if req.Messages[k].Role == provider.RoleUser {
			return req.Messages[k].Content
		}
	}
	return ""
}

// paraphraseReply answers the writing call with as many rewordings as it asks for.
func paraphraseReply(req provider.Request) string {
	msg := lastUser(req)
	q := ""
	if m := quoted().FindStringSubmatch(msg); m != nil {
		q = m[1]
	}
	n := 1
	if m := wantN().FindStringSubmatch(msg); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	out := make([]string, 0, n)
	for k := range min(n, 10) {
		core := q
		if k >= len(rewordings) {
			core = fmt.Sprintf("%s (version %d)", q, k+1)
		}
		out = append(out, fmt.Sprintf(rewordings[k%len(rewordings)], core))
	}
	b, _ := json.Marshal(map[string]any{"paraphrases": out})
	return string(b)
}

// paraphraseCheckReply confirms every paraphrase the checking call shows.
func paraphraseCheckReply(req provider.Request) string {
	var verdicts []map[string]any
	for _, m := range paraphraseN().FindAllStringSubmatch(lastUser(req), -1) {
		k, _ := strconv.Atoi(m[1])
		verdicts = append(verdicts, map[string]any{"index": k, "equivalent": true, "confidence": 0.9})
	}
	b, _ := json.Marshal(map[string]any{"verdicts": verdicts})
	return strings.TrimSpace(string(b))
}
