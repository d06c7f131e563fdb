package app

import (
	"sync"

	"massgen/internal/mcptool"
)

// Conversation carries what one turn of an interactive session hands to the next, beyond the
// history: the MCP servers, which keep running between turns instead of restarting, and the
// winner's workspace, which seeds the next turn's workspaces (MassGen's multi-turn filesystem
// behaviour: each agent starts from a writable copy and also sees it read-only). Pass the same
// Conversation in Options of every turn, one turn at a time, and Close it at the end.
type Conversation struct {
	mu        sync.Mutex
	mcp       *mcptool.Manager
	report    func(server, status, detail string) // the running turn's, nil between turns
	workspace string                              // the last winner's workspace, "" for none
	closed    bool
}

// NewConversation returns an empty conversation.
func NewConversation() *Conversation { return &Conversation{} }

// ResumeConversation returns a conversation whose next turn starts from workspace, the
// winner's workspace an earlier turn left in its log folder (final/<winner>/workspace): how a
// logged session goes on in a new process. Its MCP servers start with that turn. "" is
// NewConversation.
func ResumeConversation(workspace string) *Conversation { return &Conversation{workspace: workspace} }

// Reset forgets the previous turn's workspace: the next turn starts from empty workspaces, as
// after /reset. Running MCP servers are kept.
func (c *Conversation) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.workspace = ""
}

// Close stops the MCP servers. It is idempotent.
func (c *Conversation) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	m := c.mcp
	c.closed, c.report = true, nil
	c.mu.Unlock()
	if m == nil {
		return nil
	}
	return m.Close()
}

// manager returns the conversation's MCP manager, made on first use with this turn's options,
// and routes its statuses to report until the turn ends (endTurn). Servers that failed or died
// in an earlier turn are tried again.
func (c *Conversation) manager(o Options, report func(server, status, detail string)) *mcptool.Manager {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.report = report
	if c.mcp == nil {
		c.mcp = mcptool.NewManager(mcptool.Options{OnStatus: c.status, Getenv: o.Getenv, ClientVersion: o.Version})
		if c.closed { // a turn after Close gets no servers rather than servers nobody stops
			_ = c.mcp.Close()
		}
	} else {
		c.mcp.Retry()
	}
	return c.mcp
}

func (c *Conversation) status(server, status, detail string) {
	c.mu.Lock()
	report := c.report
	c.mu.Unlock()
	if report != nil {
		report(server, status, detail)
	}
}

// previous is the workspace the next turn starts from; nil has none.
func (c *Conversation) previous() string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.workspace
}

// endTurn detaches the turn's status reports and keeps the winner's workspace, if the turn had
// one, for the next turn.
func (c *Conversation) endTurn(winnerWorkspace string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.report = nil
	if winnerWorkspace != "" {
		c.workspace = winnerWorkspace
	}
}
