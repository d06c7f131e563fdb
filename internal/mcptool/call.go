package mcptool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"massgen/internal/tool"
)

// call runs one tool call. It returns by the timeout even when the server does not answer: the
// SDK call runs on a goroutine that Close waits for.
func (c *conn) call(ctx context.Context, name, raw string, timeout time.Duration, args string) tool.Result {
	params, bad := tool.ParseArgs(name, args)
	if bad != "" {
		return tool.Errorf(bad)
	}
	select {
	case <-c.dead:
		return tool.Errorf(c.unavailable())
	default:
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	if !c.m.goBG(func() {
		res, err := c.cs.CallTool(cctx, &mcp.CallToolParams{Name: raw, Arguments: params})
		done <- outcome{res, err}
	}) {
		return tool.Errorf(fmt.Sprintf("MCP server %q is shutting down; its tools cannot be used any more", c.srv.Name))
	}
	select {
	case o := <-done:
		if o.err == nil {
			return tool.Result{Content: resultText(o.res), IsError: o.res.IsError}
		}
		var wire *jsonrpc.Error
		if !errors.As(o.err, &wire) && cctx.Err() == nil {
			// Not an answer from the server: maybe it is gone, which the watcher notices a
			// moment after the call sees the connection drop.
			select {
			case <-c.dead:
				return tool.Errorf(c.unavailable())
			case <-time.After(500 * time.Millisecond):
			}
		}
		if cctx.Err() == nil {
			return tool.Errorf(fmt.Sprintf("%s failed: %v", name, o.err))
		}
	case <-c.dead:
		return tool.Errorf(c.unavailable())
	case <-cctx.Done():
	}
	if ctx.Err() != nil {
		return tool.Errorf(fmt.Sprintf("%s was stopped: %v", name, context.Cause(ctx)))
	}
	return tool.Errorf(fmt.Sprintf("%s timed out after %s without an answer from MCP server %q; "+
		"try smaller input or another approach", name, timeout, c.srv.Name))
}

// unavailable says why calls can no longer reach the server.
func (c *conn) unavailable() string {
	return fmt.Sprintf("MCP server %q is not running (%s); its tools cannot be used for the rest of this session",
		c.srv.Name, c.deadMsg)
}
