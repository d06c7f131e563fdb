// Package mcptest is what tests of massgen's MCP servers share: a client that records the
// progress notifications it is sent.
package mcptest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Progress collects a client's progress notifications.
type Progress struct {
	mu   sync.Mutex
	msgs []string
}

func (p *Progress) handle(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, req.Params.Message)
}

// WaitFor waits until some message contains want, failing t after 20 s: clients hand
// notifications to their handler on their own time.
func (p *Progress) WaitFor(t testing.TB, want string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		for _, m := range p.msgs {
			if strings.Contains(m, want) {
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Fatalf("no progress message with %q in %q", want, p.msgs)
}

// NewClient is an MCP client whose progress notifications go to p.
func NewClient(p *Progress) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{ProgressNotificationHandler: p.handle})
}
