package cliagent

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"massgen/internal/provider"
)

// secretTransport adds the tool server's secret to every request, as a CLI's MCP config does.
type secretTransport struct{ secret string }

func (s secretTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(secretHeader, s.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// Closing the tool server ends the MCP sessions CLIs opened on it, with their goroutines: a
// worker builds one per CLI agent of every session it holds.
func TestToolServer_CloseEndsTheCLIsSessions(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ts, err := newToolServer()
	if err != nil {
		t.Fatal(err)
	}
	ts.setTools([]provider.ToolSpec{{Name: "vote", Description: "vote"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "1"}, nil)
	hc := &http.Client{Transport: secretTransport{ts.secret}}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ts.url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 {
		t.Fatalf("tools %+v, %v", tools, err)
	}
	// The CLI is killed with its agent: its end of the session never says goodbye.
	if err := ts.close(); err != nil {
		t.Fatal(err)
	}
	_ = cs.Close()
	hc.CloseIdleConnections()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
}
