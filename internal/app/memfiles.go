package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"massgen/internal/engine"
	"massgen/internal/event"
	"massgen/internal/memfiles"
	"massgen/internal/provider"
	"massgen/internal/workspace"
)

// memoryFileTools gives the agent the tools of filesystem memory
// (enable_memory_filesystem_mode), in its workspace, which the mode gives every agent.
func (b *toolBuild) memoryFileTools(_ context.Context, at *agentTools) error {
	if !b.cfg.Orchestrator.MemoryFiles || at.ws == nil {
		return nil
	}
	b.tb.memoryFiles = true
	me := memfiles.Owner{Label: at.ws.Label(), Dir: at.ws.Dir()}
	at.set = append(at.set, memfiles.Tools(me, b.tb.memoryOwners, time.Now)...)
	at.notes = append(at.notes, "Memory: keep what the team should remember beyond this task (the user's preferences, decisions, findings) "+
		"with create_memory (short_term: read by every agent at the start of each turn; long_term: listed, read with load_memory). "+
		"Memories are kept across the turns of this conversation. The team's memories come to you whenever they change.")
	return nil
}

// memoryOwners are the agents with a workspace, as memories name them, in label order.
func (tb *toolbox) memoryOwners() []memfiles.Owner {
	var out []memfiles.Owner
	for _, ws := range tb.ws {
		out = append(out, memfiles.Owner{Label: ws.Label(), Dir: ws.Dir()})
	}
	slices.SortFunc(out, func(a, b memfiles.Owner) int { return strings.Compare(a.Label, b.Label) })
	return out
}

// withMemoryFiles lets every agent read the team's memories: at each of its steps (Inbox)
// when they changed since it last read them, so that an unchanged memory is paid for once per
// conversation, not on every call as a system message would be.
func (tb *toolbox) withMemoryFiles(agents []engine.Agent) {
	if !tb.memoryFiles {
		return
	}
	for i := range agents {
		prev, stamp, last := agents[i].Inbox, "", ""
		agents[i].Inbox = func() (string, provider.Usage) {
			var text string
			var spent provider.Usage
			if prev != nil {
				text, spent = prev()
			}
			owners := tb.memoryOwners()
			st := memfiles.Stamp(owners)
			if st == stamp {
				return text, spent
			}
			stamp = st
			now := memfiles.Section(owners)
			if now == last {
				return text, spent
			}
			note := now
			if now == "" {
				note = "The team's memories were all removed."
			}
			last = now
			return strings.TrimSpace(text + "\n\n" + note), spent
		}
	}
}

// gatherMemories puts every agent's memories into the winner's workspace ws (memory files
// only), so that the conversation's next turn, which starts from a copy of it, keeps them; a
// failure is reported, not fatal.
func (tb *toolbox) gatherMemories(ws *workspace.Agent) {
	if !tb.memoryFiles {
		return
	}
	if err := memfiles.Gather(ws.Dir(), tb.memoryOwners()); err != nil {
		tb.status(event.ServerMemory, "warning", "some memories are not carried into the next turn: "+err.Error())
	}
}
