// Package tool defines what the engine's tool loop runs besides the workflow tools: a named,
// described function of JSON arguments that returns text for the model. MCP servers, the
// workspace file tools and the command tool all produce Tools.
package tool

import (
	"context"
	"time"

	"massgen/internal/provider"
)

// Result is what a call returns to the model. IsError marks a failed call; Content then says
// what went wrong and how to fix the call.
type Result struct {
	Content string
	IsError bool
	// Spent is what the call paid a provider (a generated video, a model asked by the tool),
	// added to the agent's cost: CostUSD when priced, Unknown when not, Estimated when it is
	// the tool's guess. Its tokens, if any, are not the agent's model's and are not priced.
	Spent provider.Usage
}

// Errorf is a failed Result.
func Errorf(content string) Result { return Result{Content: content, IsError: true} }

// Tool is one callable tool. Run must honour ctx (the engine bounds each call) and must never
// panic on any arguments: bad arguments are an error Result that says what to send instead.
type Tool struct {
	Spec provider.ToolSpec
	// Run executes the call. args is the raw JSON text the model produced (it may be invalid).
	Run func(ctx context.Context, args string) Result
	// Timeout, when set, bounds each call instead of agent_timeout_seconds: a tool that runs
	// a nested session (spawn_subagents) bounds itself by its own, longer, setting. The end
	// of a round still cuts it.
	Timeout time.Duration
}

// Set is an ordered collection of tools with unique names.
type Set []Tool

// Specs returns the specs in order.
func (s Set) Specs() []provider.ToolSpec {
	out := make([]provider.ToolSpec, len(s))
	for i, t := range s {
		out[i] = t.Spec
	}
	return out
}

// Find returns the tool called name.
func (s Set) Find(name string) (Tool, bool) {
	for _, t := range s {
		if t.Spec.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// OutputFunc receives streamed output of a running call (a chunk of a command's stdout, for
// example). Tools that stream take one from the context via WithOutput.
type OutputFunc func(chunk string)

type outputKey struct{}

// WithOutput returns a context carrying f for tools that stream output.
func WithOutput(ctx context.Context, f OutputFunc) context.Context {
	return context.WithValue(ctx, outputKey{}, f)
}

// Output returns the OutputFunc in ctx, or one that drops everything.
func Output(ctx context.Context) OutputFunc {
	if f, ok := ctx.Value(outputKey{}).(OutputFunc); ok && f != nil {
		return f
	}
	return func(string) {}
}

// ImageFunc receives an image a running call made and saved in the workspace (a browser's or
// a desktop's screenshot): path relative to the workspace, and its bytes. Views show it live.
type ImageFunc func(path string, data []byte)

type imageKey struct{}

// WithImage returns a context carrying f for tools that take screenshots.
func WithImage(ctx context.Context, f ImageFunc) context.Context {
	return context.WithValue(ctx, imageKey{}, f)
}

// Image returns the ImageFunc in ctx, or one that drops everything.
func Image(ctx context.Context) ImageFunc {
	if f, ok := ctx.Value(imageKey{}).(ImageFunc); ok && f != nil {
		return f
	}
	return func(string, []byte) {}
}
