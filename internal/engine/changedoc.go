package engine

import (
	"fmt"
	"strings"
	"sync"

	"massgen/internal/coord"
	"massgen/internal/event"
	"massgen/internal/prompt"
)

// maxChangedocBytes caps the journal read with an answer: every peer is shown it with that
// answer, so a model that writes without end must not fill their prompts.
const maxChangedocBytes = 16 << 10

// changedocs holds the decision journal of each answer by its label (agent<i>.<k>).
type changedocs struct {
	mu sync.Mutex
	of map[string]string
}

func (c *changedocs) get(label string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.of[label]
}

func (c *changedocs) set(label, doc string) {
	if doc == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.of == nil {
		c.of = map[string]string{}
	}
	c.of[label] = doc
}

// changedocOn reports whether agent i keeps a decision journal: coordination.enable_changedoc
// and a workspace to keep it in.
func (s *session) changedocOn(i int) bool {
	return s.o.Orchestrator.Changedoc && s.agents[i].Workspace != nil
}

// readChangedoc returns agent i's journal with [SELF] written as label: from its last
// snapshot (what the other agents see) when shared, else from its workspace. A journal that
// cannot be read is reported and left out; the answer stands without it.
func (s *session) readChangedoc(i int, label string, shared bool) string {
	text, cut, err := s.agents[i].Workspace.ReadFile(prompt.ChangedocFile, maxChangedocBytes, shared)
	if err != nil {
		s.publish(event.ToolServerStatus{Server: event.ServerWorkspace, Status: "changedoc unreadable",
			Detail: fmt.Sprintf("%s: %v", s.agents[i].ID, err)})
		return ""
	}
	text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	if text == "" {
		return ""
	}
	text = strings.ReplaceAll(text, prompt.SelfLabel, label)
	if cut {
		text += fmt.Sprintf("\n[... the rest of %s is left out: over %d KB]", prompt.ChangedocFile, maxChangedocBytes>>10)
	}
	return text
}

// finalChangedoc is the journal that goes with the final answer: the one the presenter left in
// its workspace when it wrote the answer, else (verbatim, a failed presentation) the stored
// answer's.
func (s *session) finalChangedoc(presenter int, written bool, stored coord.Answer) string {
	if !s.changedocOn(presenter) {
		return ""
	}
	if !written {
		return s.changedocs.get(stored.Label)
	}
	return s.readChangedoc(presenter, coord.Label(presenter)+".final", false)
}
